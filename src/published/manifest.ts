// manifest.json of a build (and manifest.shard-<k>-of-<n>.json of one shard): the plan's layers,
// one entry per layer-run-lead with its fingerprint and tile counts. The next build compares
// fingerprints with the published manifest to reuse tiles; publish merges the shard manifests.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { ConfigError } from "../errors.ts";

/** What rendering (or reusing) one layer-run-lead left on disk. */
export interface LeadResult {
  key: string;
  fingerprint: string;
  tiles: number;
  /** Tiles that are one colour throughout (hard links to one encoded file). */
  uniform: number;
  /** encodeIndexedPng calls. */
  encoded: number;
  bytes: number;
  /** 512 px @2x tiles among the files (not counted in `tiles`; their bytes are in `bytes`). */
  hidpi?: number;
  reused: boolean;
}

/** What this module and the server read of a layer; the pipeline's plan stores more (its LayerSpec). */
export interface ManifestLayer {
  id: string;
  bounds: [west: number, south: number, east: number, north: number];
  runs: { leads: unknown[] }[];
}

export interface ManifestEntry extends LeadResult {
  layer: string;
  run: string;
  lead: number;
  /** Shard that wrote it (1 when unsharded). */
  shard: number;
}

/** One point copy of a build: its file key and what it holds (the store revision it was made from). */
export interface PointCopyListing {
  key: string;
  group: string;
  variable: string;
  run: string;
  revision: string;
  bytes: number;
}

export interface Manifest<L extends ManifestLayer = ManifestLayer> {
  format: 1;
  build_id: string;
  created_at: string;
  /** Store root the shard rendered from; absent from a published manifest (it is served). */
  store?: string;
  max_zoom: number;
  /** Base layers have 512 px @2x tiles up to this zoom; -1: none. Absent in older builds: none. */
  hidpi_max_zoom?: number;
  renderer: string;
  /** Plan hash: every shard of a build must have the same. */
  plan: string;
  /** Set in a shard's own manifest; null once merged or when unsharded. */
  shard: { index: number; count: number } | null;
  /** Shard manifests merged into this one (1 when unsharded). */
  shards: number;
  layers: L[];
  entries: ManifestEntry[];
  /** The build's point copies (point-copy.ts), each written by one shard; absent: none. */
  point_copies?: PointCopyListing[];
  totals: {
    layers: number;
    entries: number;
    rendered: number;
    reused: number;
    tiles: number;
    encoded: number;
    /** 512 px @2x files beside the tiles (not in `tiles`). */
    hidpi?: number;
  };
}

export function totalsOf(layers: readonly ManifestLayer[], entries: ManifestEntry[]): Manifest["totals"] {
  let tiles = 0;
  let encoded = 0;
  let reused = 0;
  let hidpi = 0;
  for (const e of entries) {
    tiles += e.tiles;
    hidpi += e.hidpi ?? 0;
    encoded += e.encoded;
    if (e.reused) reused++;
  }
  const totals: Manifest["totals"] = {
    layers: layers.length,
    entries: entries.length,
    rendered: entries.length - reused,
    reused,
    tiles,
    encoded,
  };
  if (hidpi > 0) totals.hidpi = hidpi;
  return totals;
}

export function readManifest<L extends ManifestLayer = ManifestLayer>(path: string): Manifest<L> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const m = JSON.parse(text) as Manifest<L>;
  return m.format === 1 ? m : undefined;
}

/** Written beside and renamed into place, so a reader never sees half a manifest. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 1)}\n`);
  renameSync(tmp, path);
}

/** One manifest from the shard manifests of a build; refuses an incomplete or mixed set. */
export function mergeShards<L extends ManifestLayer>(buildId: string, shards: Manifest<L>[]): Manifest<L> {
  if (shards.length === 0) throw new ConfigError(`build ${buildId} has no shard manifests; run its shards first`);
  const count = shards[0].shard?.count ?? 0;
  const plans = new Set(shards.map((m) => m.plan));
  if (shards.some((m) => m.shard?.count !== count) || plans.size > 1) {
    throw new ConfigError(`the shard manifests of build ${buildId} come from different plans or shard counts`);
  }
  const have = new Set(shards.map((m) => m.shard!.index));
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((k) => !have.has(k));
  if (missing.length) {
    throw new ConfigError(
      `build ${buildId} is incomplete: shard${missing.length > 1 ? "s" : ""} ${missing.join(", ")} of ${count} not finished (have ${[...have].sort((a, b) => a - b).join(", ")})`,
    );
  }
  const first = shards[0];
  const entries = shards.flatMap((m) => m.entries).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const expected = first.layers.reduce((n, l) => n + l.runs.reduce((k, r) => k + r.leads.length, 0), 0);
  if (entries.length !== expected || new Set(entries.map((e) => e.key)).size !== expected) {
    throw new ConfigError(
      `build ${buildId}: the shards hold ${entries.length} layer-run-leads, the plan has ${expected}`,
    );
  }
  const { store: _store, ...rest } = first;
  return {
    ...rest,
    shard: null,
    shards: count,
    created_at: shards
      .map((m) => m.created_at)
      .sort()
      .at(-1)!,
    entries,
    totals: totalsOf(first.layers, entries),
    ...(shards.some((m) => m.point_copies)
      ? { point_copies: shards.flatMap((m) => m.point_copies ?? []).sort((a, b) => (a.key < b.key ? -1 : 1)) }
      : {}),
  };
}
