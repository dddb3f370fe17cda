// Turning a partial build into the published one: manifest, catalog, TileJSON, legends, embedding
// indexes and viewer files are written, the directory is renamed into place and <out>/current is
// switched; then old builds are pruned. `gridcast publish` first merges the shards' manifests.

import { cpSync, existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SkippedEmbedding } from "../embeddings/index-writer.ts";
import { writeIndexesNoting } from "../embeddings/survey-inputs.ts";
import { ConfigError, CorruptDataError, GridcastError, StoreUnavailableError } from "../errors.ts";
import { verifyBuildArchives } from "../published/archive-verify.ts";
import { assembleBuild } from "../published/assemble.ts";
import { markArchives } from "../published/catalog-fields.ts";
import { MANIFEST } from "../published/layout.ts";
import { type Manifest, mergeShards, readManifest, writeJsonAtomic } from "../published/manifest.ts";
import { type BuildOutput, measureBuild } from "../published/measure.ts";
import { writePlaces } from "../published/places.ts";
import { precompressBuild } from "../published/precompress.ts";
import { copyViewerVendor } from "../published/vendor.ts";
import { loadPlaces, ORIENTATION_LAYER_ID } from "../render/orientation.ts";
import { Store } from "../store/store.ts";
import { writeBuildDocs } from "./catalog.ts";
import type { BuildManifest, LayerSpec } from "./layer-spec.ts";
import {
  acquireLock,
  checkBuildId,
  cleanStalePartials,
  currentBuild,
  finalDir,
  partialDir,
  pruneBuilds,
  switchCurrent,
} from "./publish.ts";
import { unchangedSince } from "./unchanged.ts";

/** The map viewer shipped beside the build, so a CDN can host everything. */
export const DEFAULT_WEB_DIR = resolve(import.meta.dirname, "../../web");

export interface FinalizeOptions {
  keepBuilds: number;
  /** Publish even when the published build has layers this one lacks (--allow-dropped-layers). */
  allowDroppedLayers?: boolean;
  /** Viewer files to copy into the build; null for none. */
  webDir: string | null;
  /** Files of the partial build to delete once everything else is written (shard manifests). */
  drop?: string[];
  /** The catalog's note on what a later build will add (gridcast start's steps). */
  rendering?: string;
  /** Base URL of the published files (setting public_url); "" or undefined: not set. */
  publicUrl?: string;
  /** Publish even what the published build already holds (build --no-reuse: a forced re-render). */
  republish?: boolean;
}

export interface Finalized {
  dir: string;
  embeddings: { items: number; indexes: number; skipped: SkippedEmbedding[] };
  /** Build ids pruned after the switch. */
  removed: string[];
  /** Files and bytes of the build, by tile format. */
  output: BuildOutput & { assemble_seconds: number };
  /** Set when the build held nothing the published one lacks: it names that build, which stays published. */
  unchanged?: string;
}

/**
 * A build may replace the published one only when it has something in it, and (unless the
 * operator says so) every layer the published one has: an empty or narrower build published over
 * a good one takes maps away from every viewer, with exit status 0 and nothing in the logs.
 */
/**
 * Refuses a build that would publish nothing or less than the published one. `embeddings`: the
 * store has embedding items, so a build without map layers still publishes their locate indexes
 * and catalogue (an EO-only store); undefined while that is not known yet.
 */
export function checkPublishable(
  out: string,
  layers: LayerSpec[],
  entries: number,
  allowDropped: boolean,
  embeddings = false,
): void {
  if ((layers.length === 0 || entries === 0) && !embeddings) {
    throw new ConfigError(
      `nothing to render: the selection matches ${layers.length} layers and ${entries} layer-run-leads in the store ` +
        "and the store has no embedding items; nothing was published and the published build is unchanged",
    );
  }
  if (allowDropped) return;
  const prev = currentBuild(out);
  const published = prev && readManifest<LayerSpec>(join(prev.dir, MANIFEST));
  if (!published) return;
  const now = new Set(layers.map((l) => l.id));
  const dropped = published.layers.map((l) => l.id).filter((id) => !now.has(id));
  if (dropped.length === 0) return;
  const named = dropped.slice(0, 8).join(", ") + (dropped.length > 8 ? `, … (${dropped.length - 8} more)` : "");
  throw new ConfigError(
    `this build would drop ${dropped.length} layers the published build ${prev.id} has (${named}); ` +
      "nothing was published; pass --allow-dropped-layers to publish it anyway",
  );
}

/** Store errors with the store named: one line an operator can act on. */
export function storeError(root: string, e: unknown): unknown {
  if (e instanceof CorruptDataError)
    return new CorruptDataError(`cannot read the store ${root}: ${e.message}`, {}, { cause: e });
  if (e instanceof GridcastError && !(e instanceof ConfigError)) {
    return new StoreUnavailableError(`cannot read the store ${root}: ${e.message}`, {}, { cause: e });
  }
  return e;
}

function copyViewer(webDir: string | null, dir: string): void {
  if (!webDir || !existsSync(webDir)) return;
  // Build files win over a viewer file of the same name.
  cpSync(webDir, dir, { recursive: true, dereference: true, force: false, errorOnExist: false });
  copyViewerVendor(dir);
}

export async function finalizeBuild(
  out: string,
  partial: string,
  manifest: BuildManifest,
  store: Store,
  opts: FinalizeOptions,
): Promise<Finalized> {
  // Without map layers only an EO-only store's embeddings are published: checked once they are read.
  const mapless = manifest.layers.length === 0 || manifest.entries.length === 0;
  checkPublishable(out, manifest.layers, manifest.entries.length, opts.allowDroppedLayers ?? false, mapless);
  writeJsonAtomic(join(partial, MANIFEST), manifest);
  const assembling = performance.now();
  const format = assembleBuild(partial, manifest);
  // A damaged archive (assembled now or hard-linked from the previous build) is never published.
  if (format === "pmtiles") verifyBuildArchives(partial, manifest);
  const assembleSeconds = (performance.now() - assembling) / 1000;
  const catalog = writeBuildDocs(partial, manifest, opts.rendering, opts.publicUrl);
  if (format === "pmtiles") markArchives(partial, catalog);
  let embeddings: Finalized["embeddings"];
  try {
    embeddings = await writeIndexesNoting(store, partial);
  } catch (e) {
    throw storeError(store.root, e);
  }
  if (mapless) checkPublishable(out, manifest.layers, manifest.entries.length, true, embeddings.items > 0);
  // The viewer's place search: the places the orientation layer labels, when the build has it.
  if (manifest.layers.some((l) => l.id === ORIENTATION_LAYER_ID)) writePlaces(partial, loadPlaces());
  copyViewer(opts.webDir, partial);
  for (const rel of opts.drop ?? []) rmSync(join(partial, rel), { force: true });
  // Last of the writes: every document the build will serve gets its compressed twins.
  precompressBuild(partial);
  const output = { ...measureBuild(partial, format, manifest), assemble_seconds: assembleSeconds };
  const unchanged = opts.republish ? undefined : unchangedSince(out, partial, manifest);
  if (unchanged !== undefined) {
    // Nothing new: the published build stays, and so does every kept one.
    rmSync(partial, { recursive: true, force: true });
    return { dir: finalDir(out, unchanged), embeddings, removed: [], output, unchanged };
  }
  const dir = finalDir(out, manifest.build_id);
  renameSync(partial, dir);
  try {
    switchCurrent(out, manifest.build_id);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { dir, embeddings, removed: await pruneBuilds(out, opts.keepBuilds), output };
}

export interface PublishOptions extends Partial<FinalizeOptions> {
  out: string;
  buildId: string;
  /** Store for the embedding indexes; default the one the shards rendered from. */
  store?: string;
  cacheMb?: number;
  /** Budget of one cell grid's tables, MiB (setting cell_grid_mb). */
  cellGridMb?: number;
  /** Seconds a lock from another machine lives without its heartbeat (setting build_lock_lease_s). */
  lockLeaseS?: number;
}

export interface PublishReport extends Finalized {
  build_id: string;
  shards: number;
  totals: Manifest["totals"];
}

const SHARD_MANIFEST = /^manifest\.shard-(\d+)-of-(\d+)\.json$/;

/** Merge the shard manifests of a partial build, check the set is complete, finish and switch. */
export async function publishShards(opts: PublishOptions): Promise<PublishReport> {
  checkBuildId(opts.buildId);
  const out = resolve(opts.out);
  const partial = partialDir(out, opts.buildId);
  if (existsSync(finalDir(out, opts.buildId))) throw new ConfigError(`build ${opts.buildId} is already published`);
  if (!existsSync(partial)) throw new ConfigError(`no partial build ${opts.buildId} in ${out}; run its shards first`);
  const lock = acquireLock(out, opts.buildId, null, opts.lockLeaseS);
  try {
    const names = readdirSync(partial).filter((n) => SHARD_MANIFEST.test(n));
    const shards = names
      .map((n) => readManifest<LayerSpec>(join(partial, n)))
      .filter((m): m is BuildManifest => m !== undefined);
    const manifest = mergeShards(opts.buildId, shards);
    const root = opts.store ?? shards[0].store;
    if (!root) throw new ConfigError(`the shard manifests of build ${opts.buildId} name no store; pass --store`);
    const store = new Store(root, { cacheMb: opts.cacheMb, cellGridMb: opts.cellGridMb });
    const cleaning = cleanStalePartials(out, opts.buildId, opts.lockLeaseS).done;
    const done = await finalizeBuild(out, partial, manifest, store, {
      keepBuilds: opts.keepBuilds ?? 3,
      webDir: opts.webDir === undefined ? DEFAULT_WEB_DIR : opts.webDir,
      allowDroppedLayers: opts.allowDroppedLayers,
      publicUrl: opts.publicUrl,
      // The merged manifest holds what they said; dropped last so a failed publish can be retried.
      drop: names,
    });
    await cleaning;
    return { ...done, build_id: opts.buildId, shards: manifest.shards, totals: manifest.totals };
  } finally {
    lock.release();
  }
}
