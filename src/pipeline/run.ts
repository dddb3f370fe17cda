// `gridcast build` as a function: plan the layers, reuse what the published build already has,
// render the rest on worker threads into <out>/builds/<id>.partial, then finalize and switch
// (or, for one shard, leave its manifest for `gridcast publish`). The published build is only
// ever replaced by a complete one.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import type { SkippedEmbedding } from "../embeddings/index-writer.ts";
import { keepNote, unchangedEmbeddingInputs, writeIndexesNoting } from "../embeddings/survey-inputs.ts";
import { ConfigError } from "../errors.ts";
import { verifyBuildArchives } from "../published/archive-verify.ts";
import type { TileFormat } from "../published/format.ts";
import { BUILDS, MANIFEST, runToken, shardManifestName, tileDir } from "../published/layout.ts";
import type { LeadResult } from "../published/manifest.ts";
import { type Manifest, type ManifestEntry, readManifest, totalsOf, writeJsonAtomic } from "../published/manifest.ts";
import type { BuildOutput } from "../published/measure.ts";
import { buildHidpiMax, MAX_ZOOM } from "../render/tiles.ts";
import { Store } from "../store/store.ts";
import { CoverageCache } from "./coverage.ts";
import { checkPublishable, DEFAULT_WEB_DIR, finalizeBuild, storeError } from "./finalize.ts";
import { RENDERER_VERSION } from "./fingerprint.ts";
import { MAX_SHARD_COUNT, shardJobs, splitForThreads } from "./job-split.ts";
import type { Job } from "./jobs.ts";
import type { BuildManifest, LayerSpec } from "./layer-spec.ts";
import { planBuild } from "./plan.ts";
import { buildPointCopies, type PointCopyReport } from "./point-copy.ts";
import { TilePool } from "./pool.ts";
import { createProgress } from "./progress.ts";
import {
  acquireLock,
  acquireShardLock,
  checkBuildId,
  cleanStalePartials,
  currentBuild,
  finalDir,
  newBuildId,
  partialDir,
} from "./publish.ts";
import { pointCopiesOf, publishedAsPlanned, sameIndexes } from "./unchanged.ts";

export interface Shard {
  index: number;
  count: number;
}

export interface BuildOptions {
  store: string;
  out: string;
  /**
   * The renderer version the tiles are fingerprinted and filed under (default RENDERER_VERSION,
   * the one this code draws with). Not a flag: tests rehearse an upgrade with it.
   */
  renderer?: string;
  /** Build the other layers when a variable of `vars` has none (else the build fails naming it). */
  allowMissingVars?: boolean;
  /** Build the others when a group of `groups` cannot be read or draws nothing (else the build fails naming it). */
  allowMissingGroups?: boolean;
  /** Build the others when a lead of `leads` is in no selected group (else the build fails naming it). */
  allowMissingLeads?: boolean;
  maxZoom?: number;
  /** Base URL clients reach the published files at (setting public_url). */
  publicUrl?: string;
  groups?: string[];
  vars?: string[];
  runs?: "latest" | "all";
  leads?: number[];
  /** Worker threads; default one per core. */
  concurrency?: number;
  shard?: Shard;
  /** Seconds a lock from another machine lives without its heartbeat (setting build_lock_lease_s). */
  lockLeaseS?: number;
  buildId?: string;
  keepBuilds?: number;
  cacheMb?: number;
  /** Budget of one cell grid's tables, MiB (setting cell_grid_mb). */
  cellGridMb?: number;
  /** Publish even when the published build has layers this one lacks. */
  allowDroppedLayers?: boolean;
  /** Name of the dataset at the store root (setting root_group_name); default the directory's name. */
  rootGroupName?: string;
  /** Hard-link unchanged layer-run-leads from the published build (default true). */
  reuse?: boolean;
  /** z/x/y PNG files (default) or one PMTiles archive per layer-run-lead. */
  tiles?: TileFormat;
  /**
   * 512 px @2x tiles of base layers up to maxZoom, at most HIDPI_MAX_ZOOM (default
   * true; PMTiles builds have none). `gridcast start` leaves them out of its first quick map.
   */
  hidpi?: boolean;
  /** Viewer files copied into the build; null for none. */
  webDir?: string | null;
  /** Where progress goes; false for nowhere. */
  progress?: (NodeJS.WritableStream & { isTTY?: boolean }) | false;
  /** Written into the catalog: what a later build will add to this one (gridcast start). */
  rendering?: string;
  /** Also build the orientation layer (places, subdivision borders, rivers, lakes). Default false here; the CLI turns it on. */
  orientation?: boolean;
  /** Write the point-optimized copy of every served variable (default true; build --no-point-copy). */
  pointCopy?: boolean;
  /** Memory budget of the point copy's band of rows, MiB (setting point_copy_mb). */
  pointCopyMb?: number;
}

export interface BuildReport {
  build_id: string;
  dir: string;
  published: boolean;
  shard: Shard | null;
  totals: Manifest["totals"];
  /** Seconds spent rendering and linking tiles, and in the whole build. */
  render_seconds: number;
  seconds: number;
  tiles_per_second: number;
  /** Embedding items and locate indexes written, and what below embeddings/ is not served (with reasons). */
  embeddings: { items: number; indexes: number; skipped: SkippedEmbedding[] } | null;
  removed: string[];
  cleaned: string[];
  /** The published build this one matched in every file: nothing was published (exit EXIT_NOTHING_NEW). */
  unchanged?: string;
  /** Files and bytes of the published build (null for a shard: publish reports it). */
  output: (BuildOutput & { assemble_seconds: number }) | null;
  /** Groups that could not be read (not built), with the reason. */
  skipped: { id: string; reason: string }[];
  warnings: string[];
  /** The point copies written, linked or left to the store (null: switched off). */
  point_copy: PointCopyReport | null;
}

function checkOptions(o: BuildOptions): { maxZoom: number; concurrency: number } {
  const maxZoom = o.maxZoom ?? MAX_ZOOM;
  if (!Number.isInteger(maxZoom) || maxZoom < 0 || maxZoom > MAX_ZOOM) {
    throw new ConfigError(`--max-zoom must be an integer 0..${MAX_ZOOM}, got ${maxZoom}`);
  }
  const concurrency = o.concurrency ?? availableParallelism();
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new ConfigError(`--concurrency must be a positive integer, got ${concurrency}`);
  }
  if (o.shard) {
    const { index, count } = o.shard;
    if (!(Number.isInteger(index) && Number.isInteger(count) && index >= 1 && index <= count)) {
      throw new ConfigError(`--shard must be k/n with 1 ≤ k ≤ n, got ${index}/${count}`);
    }
    if (count > MAX_SHARD_COUNT) throw new ConfigError(`--shard: at most ${MAX_SHARD_COUNT} shards, got ${count}`);
    if (!o.buildId) throw new ConfigError("--shard needs --build-id, so that every shard writes the same build");
  }
  return { maxZoom, concurrency };
}

/**
 * Marks each lead whose fingerprint the published build already rendered. A build made before
 * tile paths held the drawing filed the same tiles under the bare run token (its layers have no
 * drawing): the same fingerprint there is the same pixels, linked into the new paths.
 */
function markReuse(jobs: Job[], out: string): void {
  const prev = currentBuild(out);
  const manifest = prev && readManifest<LayerSpec>(join(prev.dir, MANIFEST));
  if (!prev || !manifest) return;
  const byKey = new Map(manifest.entries.map((e) => [e.key, e]));
  const undrawn = new Set(manifest.layers.filter((l) => l.drawing === undefined).map((l) => l.id));
  for (const job of jobs) {
    const token = runToken(job.runIso);
    for (const lead of job.leads) {
      const legacy = undrawn.has(job.layer);
      const e = byKey.get(legacy ? `${job.layer}/${token}/${lead.hours}` : lead.key);
      if (e && e.fingerprint === lead.fingerprint) {
        const dir = legacy ? tileDir(job.layer, token, lead.hours) : lead.dir;
        lead.reuse = { dir: join(prev.dir, dir), uniform: e.uniform, bytes: e.bytes, hidpi: e.hidpi };
      }
    }
  }
}

/** One result per layer-run-lead: the slices of a split pyramid add up. */
function mergeParts(results: LeadResult[]): LeadResult[] {
  const byKey = new Map<string, LeadResult>();
  for (const r of results) {
    const seen = byKey.get(r.key);
    if (!seen) byKey.set(r.key, { ...r });
    else {
      seen.tiles += r.tiles;
      seen.uniform += r.uniform;
      seen.encoded += r.encoded;
      seen.bytes += r.bytes;
      if (r.hidpi !== undefined) seen.hidpi = (seen.hidpi ?? 0) + r.hidpi;
    }
  }
  return [...byKey.values()];
}

export async function runBuild(o: BuildOptions): Promise<BuildReport> {
  const started = performance.now();
  const { maxZoom, concurrency } = checkOptions(o);
  // render-job.ts draws a base layer's @2x tile from the next zoom's samples, the top's from the zoom above it.
  const hidpiMax = o.hidpi === false || o.tiles === "pmtiles" ? -1 : buildHidpiMax(maxZoom);
  const id = o.buildId ?? newBuildId();
  checkBuildId(id);
  const out = resolve(o.out);
  mkdirSync(join(out, BUILDS), { recursive: true });
  if (existsSync(finalDir(out, id))) throw new ConfigError(`build ${id} already exists in ${out}`);
  const shard = o.shard ?? null;
  const leaseS = o.lockLeaseS;
  const lock = shard
    ? await acquireShardLock(out, id, `${shard.index}/${shard.count}`, leaseS)
    : acquireLock(out, id, null, leaseS);
  const partial = partialDir(out, id);
  let pool: TilePool | undefined;
  let cleanup: Promise<void> = Promise.resolve();
  try {
    const startPool = () =>
      new TilePool(
        {
          store: o.store,
          cacheMb: o.cacheMb ?? 256,
          cellGridMb: o.cellGridMb,
          rootGroupName: o.rootGroupName,
          buildDir: partial,
          maxZoom,
          tiles: o.tiles ?? "zxy",
          hidpiMaxZoom: hidpiMax,
        },
        concurrency,
      );
    // With nothing published, started before planning: the threads load while the store's
    // metadata is read. With a build published the answer may be "nothing new", decided in well
    // under a second: threads loading their modules beside it would only take the cores it runs
    // on, so they start once the build goes on.
    const mayBeUnchanged = !shard && o.reuse !== false && currentBuild(out) !== undefined;
    if (!mayBeUnchanged) pool = startPool();
    // Progress lines go where the progress bar goes (stderr unless told otherwise).
    const stream = o.progress === false ? undefined : (o.progress ?? process.stderr);
    const say = stream ? (line: string) => stream.write(`${line}\n`) : undefined;
    const { removed: cleaned, done: cleaning } = cleanStalePartials(out, shard ? id : undefined, leaseS, say);
    cleanup = cleaning;
    const store = new Store(o.store, { cacheMb: o.cacheMb, cellGridMb: o.cellGridMb, rootGroupName: o.rootGroupName });
    const selection = {
      groups: o.groups,
      vars: o.vars,
      runs: o.runs ?? "latest",
      leads: o.leads,
      maxZoom,
      orientation: o.orientation ?? false,
      allowMissingVars: o.allowMissingVars,
      allowMissingGroups: o.allowMissingGroups,
      allowMissingLeads: o.allowMissingLeads,
      renderer: o.renderer,
    };
    const plan = await store
      .ping()
      .then(() => planBuild(store, selection, new CoverageCache()))
      .catch((e: unknown) => {
        throw storeError(o.store, e);
      });
    // Refused before any tile is rendered; a shard's check of dropped layers waits for publish.
    const planned = plan.jobs.reduce((n, j) => n + j.leads.length, 0);
    // No map layer: an EO-only store (no forecast group at all, no forecast selection) still
    // publishes its embedding locate indexes and catalogue.
    const eoOnly =
      planned === 0 &&
      plan.layers.length === 0 &&
      plan.skipped.length === 0 &&
      !(o.groups || o.vars || o.leads) &&
      (await store.embeddingItemPaths().catch((e: unknown) => Promise.reject(storeError(o.store, e)))).length > 0;
    checkPublishable(out, plan.layers, planned, shard !== null || (o.allowDroppedLayers ?? false), eoOnly);
    const jobs = shard ? shardJobs(plan.jobs, shard.index, shard.count) : plan.jobs;
    if (o.reuse !== false) markReuse(jobs, out);
    // Shards share their partial build; an unsharded build starts from an empty one.
    if (!shard) rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    // Nothing new, decided before a tile is rendered or linked: the plan matches the published
    // build lead for lead, and so do the embedding indexes (written here; finalize writes them
    // again when the build goes on).
    const same =
      !shard && o.reuse !== false
        ? publishedAsPlanned(
            out,
            {
              max_zoom: maxZoom,
              hidpi_max_zoom: hidpiMax,
              renderer: o.renderer ?? RENDERER_VERSION,
              plan: plan.hash,
              layers: plan.layers,
            },
            jobs,
          )
        : undefined;
    // The point copies come after the tiles in a build; for this check they are made first (a
    // copy whose data did not change is a hard link), and kept for the build if it goes on.
    const previous = o.reuse === false ? undefined : currentBuild(out)?.dir;
    const makePointCopies = () =>
      o.pointCopy === false
        ? Promise.resolve(null)
        : buildPointCopies(store, plan.layers, {
            buildDir: partial,
            previous,
            shard: shard ?? undefined,
            budgetMb: o.pointCopyMb,
          }).catch((e: unknown) => {
            throw storeError(o.store, e);
          });
    let earlyPointCopy: PointCopyReport | null | undefined;
    if (same) {
      // A build that would link the published build's tile archives walks them first, as
      // finalize does for the archives it assembles or links: a damaged one is never called
      // "nothing new" (it stays a CorruptDataError naming it).
      verifyBuildArchives(same.dir, same.manifest);
      // The embedding indexes: the same when every store key the published build's survey read
      // has the version it had then (a stat each); else surveyed, written and compared.
      const fail = (e: unknown) => Promise.reject(storeError(o.store, e));
      const noted = await unchangedEmbeddingInputs(store, same.dir).catch(fail);
      const embeddings = noted ?? (await writeIndexesNoting(store, partial).catch(fail));
      const sameEmbeddings = noted !== undefined || sameIndexes(same.dir, partial);
      // Surveyed and the same: the published build takes this survey's note (it had none, or one
      // from other code), so the next build with nothing new decides from versions again.
      if (!noted && sameEmbeddings) keepNote(partial, same.dir);
      earlyPointCopy = sameEmbeddings ? await makePointCopies() : undefined;
      const samePoints = earlyPointCopy !== undefined && pointCopiesOf(earlyPointCopy?.copies) === same.pointCopies;
      if (samePoints) {
        rmSync(partial, { recursive: true, force: true });
        const seconds = (performance.now() - started) / 1000;
        return {
          build_id: id,
          shard: null,
          totals: totalsOf(plan.layers, same.entries),
          render_seconds: 0,
          tiles_per_second: 0,
          cleaned,
          skipped: plan.skipped,
          warnings: plan.warnings,
          dir: finalDir(out, same.id),
          published: false,
          seconds,
          embeddings,
          removed: [],
          output: null,
          point_copy: earlyPointCopy ?? null,
          unchanged: same.id,
        };
      }
    }

    const total = jobs.reduce((n, j) => n + j.leads.length * j.tilesPerLead, 0);
    const label = shard ? `build ${id} shard ${shard.index}/${shard.count}` : `build ${id}`;
    const progress = o.progress === false ? undefined : createProgress({ total, label, stream: o.progress });
    const renderStarted = performance.now();
    pool ??= startPool();
    const results = await pool
      .run(splitForThreads(jobs, concurrency), (n) => progress?.add(n))
      .finally(() => progress?.finish()); // ends the progress line before any error line
    const renderSeconds = (performance.now() - renderStarted) / 1000;
    await pool.close();

    // The point copies go into the same partial build, so the same switch publishes them.
    const pointCopy = earlyPointCopy !== undefined ? earlyPointCopy : await makePointCopies();
    if (pointCopy && say) {
      const written = pointCopy.copies.filter((c) => !c.reused).length;
      say(
        `point copy: ${written} written, ${pointCopy.copies.length - written} linked, ` +
          `${pointCopy.skipped.length} left to the store, ${pointCopy.seconds.toFixed(1)} s`,
      );
    }

    const where = new Map(jobs.flatMap((j) => j.leads.map((l) => [l.key, { job: j, hours: l.hours }] as const)));
    const entries: ManifestEntry[] = mergeParts(results)
      .map((r) => {
        const { job, hours } = where.get(r.key)!;
        return { ...r, layer: job.layer, run: job.runIso, lead: hours, shard: shard?.index ?? 1 };
      })
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const manifest: BuildManifest = {
      format: 1,
      build_id: id,
      created_at: new Date().toISOString(),
      // Only a shard's manifest names the store (publish reads it); a published one is public.
      ...(shard ? { store: o.store } : {}),
      max_zoom: maxZoom,
      hidpi_max_zoom: hidpiMax,
      renderer: o.renderer ?? RENDERER_VERSION,
      plan: plan.hash,
      shard,
      shards: 1,
      layers: plan.layers,
      entries,
      totals: totalsOf(plan.layers, entries),
      ...(pointCopy
        ? {
            point_copies: pointCopy.copies.map(({ key, group, variable, run, revision, bytes }) => ({
              key,
              group,
              variable,
              run,
              revision,
              bytes,
            })),
          }
        : {}),
    };
    const report = {
      build_id: id,
      shard,
      totals: manifest.totals,
      render_seconds: renderSeconds,
      tiles_per_second: renderSeconds > 0 ? manifest.totals.tiles / renderSeconds : 0,
      cleaned,
      skipped: plan.skipped,
      warnings: plan.warnings,
      point_copy: pointCopy,
    };
    if (shard) {
      writeJsonAtomic(join(partial, shardManifestName(shard.index, shard.count)), manifest);
      const seconds = (performance.now() - started) / 1000;
      return { ...report, dir: partial, published: false, seconds, embeddings: null, removed: [], output: null };
    }
    const done = await finalizeBuild(out, partial, manifest, store, {
      keepBuilds: o.keepBuilds ?? 3,
      webDir: o.webDir === undefined ? DEFAULT_WEB_DIR : o.webDir,
      allowDroppedLayers: o.allowDroppedLayers,
      rendering: o.rendering,
      publicUrl: o.publicUrl,
      republish: o.reuse === false,
    });
    const seconds = (performance.now() - started) / 1000;
    return { ...report, ...done, published: done.unchanged === undefined, seconds };
  } catch (e) {
    // A shard's partial build belongs to all shards; an unsharded one only to this build.
    if (!shard) rmSync(partial, { recursive: true, force: true });
    throw e;
  } finally {
    await pool?.close();
    // What an interrupted build left is gone (or reported) before this build returns.
    await cleanup;
    lock.release();
  }
}
