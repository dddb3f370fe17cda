// The build's point copies: every stored variable the plan serves, for every planned run, written
// time-series-major (published/point-copy.ts) so /point reads one small block instead of every
// lead's chunk. Memory stays within a budget: the rows of the grid are taken in bands that fit
// it, each band reading every lead once (more bands, more passes over the store). A copy whose
// store data did not change since the published build is hard-linked from it, as tiles are.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { MIB } from "../config.ts";
import { ConfigError } from "../errors.ts";
import { blockCount, blockOf, type CopyLayout, copyLayout, copyRevision } from "../forecast/point-copy.ts";
import { regionOf } from "../forecast/read.ts";
import {
  linkPointCopy,
  POINT_DIR,
  type PointCopyHeader,
  PointCopyWriter,
  packBlock,
  pointCopyKey,
  readPointCopyHeader,
} from "../published/point-copy.ts";
import { strides } from "../store/region.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import type { LayerSpec } from "./layer-spec.ts";

/** Default memory budget of the copy's band of rows (setting point_copy_mb). */
export const POINT_COPY_MB = 512;
/** Stored chunks of a run a copy records the versions of; a variable with more is not copied. */
export const POINT_COPY_MAX_CHUNKS = 4096;

export interface PointCopyEntry {
  key: string;
  group: string;
  variable: string;
  run: string;
  revision: string;
  bytes: number;
  reused: boolean;
}

export interface PointCopyReport {
  copies: PointCopyEntry[];
  /** Variables left to the store, with why. */
  skipped: { group: string; variable: string; reason: string }[];
  seconds: number;
  /** Passes over the store's leads: one per band of rows (more when a variable exceeds the budget). */
  passes: number;
}

interface CopyJob {
  group: ForecastGroup;
  v: GroupVariable;
  run: number;
  runIso: string;
}

/** Every (group, stored variable, run) the layers serve, in a fixed order (shards split it). */
async function copyJobs(store: Store, layers: LayerSpec[]): Promise<CopyJob[]> {
  const seen = new Map<string, CopyJob>();
  for (const l of layers) {
    if (l.role === "orientation") continue;
    const group = await store.forecastGroup(l.group);
    for (const name of l.recipe.sources) {
      const v = group.variables.get(name);
      if (!v) continue;
      for (const r of l.runs) {
        const key = `${group.id}\0${v.name}\0${r.iso}`;
        if (!seen.has(key)) seen.set(key, { group, v, run: r.index, runIso: r.iso });
      }
    }
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, j]) => j);
}

/** Why a variable is left to the store, or undefined when it is copied. */
function refusal(v: GroupVariable): string | undefined {
  if (v.turn) return "a grid-relative wind turned with its partner at read time";
  if (v.plus) return "a variable stored in two parts, added at read time";
  if (v.array.packing.problem) return `its encoding cannot be decoded (${v.array.packing.problem})`;
  return undefined;
}

/**
 * Versions of every stored chunk of the run (every lead, level, member and node), taken before
 * the values are read: a chunk rewritten while or after the copy is made has another version, and
 * the reader answers from the store for any column that touches it.
 */
async function runVersions(j: CopyJob, l: CopyLayout): Promise<Record<string, string> | undefined> {
  const region = regionOf(j.group, j.v, { run: j.run, member: [0, l.nMember], level: 0 }).map(
    (r, d): [number, number] => (j.v.roles[d] === "level" ? [0, l.nLevel] : r),
  );
  const coords = j.v.array.chunksFor(region);
  if (coords.length > POINT_COPY_MAX_CHUNKS) return undefined;
  const out: Record<string, string> = {};
  for (const c of coords) out[j.v.array.storageKey(c)] = await j.v.array.chunkVersion(c);
  return out;
}

/**
 * One lead of a band as a store read gives it. Where the stored values are the physical ones, each
 * chunk is decoded straight into the result on libuv's pool, outside the chunk cache (as a map
 * build reads a lead: readBulk); the values are the same as read() gives.
 */
async function readLead(
  v: GroupVariable,
  region: [number, number][],
  shape: number[],
  st: number[],
): Promise<Float32Array | Float64Array> {
  if (!v.array.readsPhysicalInPlace()) return v.array.read(region);
  const out = new Float32Array(shape.reduce((a, b) => a * b, 1));
  await v.array.readStoredInto(region, out, { offset: 0, strides: st });
  return out;
}

/** Rows y0..y1 of a copy's values, node-major: every level, member and lead of a node together. */
async function readBand(j: CopyJob, l: CopyLayout, y0: number, y1: number): Promise<Float32Array | Float64Array> {
  const { group, v, run } = j;
  const lDim = v.roles.indexOf("lead");
  const mDim = v.roles.indexOf("member");
  const yDim = v.roles.indexOf("lat");
  const xDim = v.roles.indexOf("lon");
  const Values = l.bytes === 8 ? Float64Array : Float32Array;
  const h = y1 - y0;
  const band = new Values(h * l.nx * l.perNode);
  for (let li = 0; li < l.nLevel; li++) {
    for (let t = 0; t < l.nLead; t++) {
      const region = regionOf(group, v, {
        run,
        lead: lDim < 0 ? undefined : t,
        level: v.roles.includes("level") ? li : undefined,
        member: mDim < 0 ? undefined : [0, l.nMember],
        lat: yDim < 0 ? undefined : [y0, y1],
      });
      const shape = region.map(([a, b]) => b - a);
      const st = strides(shape);
      const got = await readLead(v, region, shape, st);
      const sm = mDim < 0 ? 0 : st[mDim];
      const sy = yDim < 0 ? 0 : st[yDim];
      const sx = xDim < 0 ? 0 : st[xDim];
      for (let m = 0; m < l.nMember; m++) {
        const at = (li * l.nMember + m) * l.nLead + t;
        for (let y = 0; y < h; y++) {
          const src = m * sm + y * sy;
          const dst = y * l.nx * l.perNode + at;
          for (let x = 0; x < l.nx; x++) band[dst + x * l.perNode] = got[src + x * sx];
        }
      }
    }
  }
  return band;
}

/** The blocks of a band starting at row y0 (whole block rows), in block order: left to right. */
function eachBlock(
  l: CopyLayout,
  band: Float32Array | Float64Array,
  y0: number,
  add: (block: Float32Array | Float64Array) => void,
): void {
  const h = band.length / (l.nx * l.perNode);
  const Values = l.bytes === 8 ? Float64Array : Float32Array;
  for (let by0 = 0; by0 < h; by0 += l.by) {
    for (let bx0 = 0; bx0 < l.nx; bx0 += l.bx) {
      const { nodes } = blockOf(l, y0 + by0, bx0);
      const w = Math.min(l.bx, l.nx - bx0);
      const block = new Values(nodes * l.perNode);
      for (let n = 0; n < nodes; n++) {
        const y = by0 + Math.floor(n / w);
        const x = bx0 + (n % w);
        const from = (y * l.nx + x) * l.perNode;
        block.set(band.subarray(from, from + l.perNode), n * l.perNode);
      }
      add(block);
    }
  }
}

/** Writes one copy; returns its header and the number of bands (passes over the leads). */
async function writeCopy(
  j: CopyJob,
  l: CopyLayout,
  buildDir: string,
  key: string,
  budget: number,
  versions: Record<string, string>,
): Promise<{ header: PointCopyHeader; passes: number }> {
  const { group, v, run } = j;
  const rowBytes = l.nx * l.perNode * l.bytes;
  // Whole block rows per band; at least one, whatever the budget.
  const rows = Math.min(l.ny, Math.max(l.by, Math.floor(budget / rowBytes / l.by) * l.by));
  const writer = new PointCopyWriter(buildDir, key, l);
  let passes = 0;
  try {
    for (let y0 = 0; y0 < l.ny; y0 += rows) {
      const y1 = Math.min(l.ny, y0 + rows);
      passes++;
      eachBlock(l, await readBand(j, l, y0, y1), y0, (block) => writer.add(block));
    }
  } catch (e) {
    writer.abort();
    throw e;
  }
  const header = writer.finish({
    group: group.id,
    variable: v.name,
    run: j.runIso,
    revision: copyRevision(group, v),
    ingested: group.ingested?.[run] ?? null,
    versions,
  });
  return { header, passes };
}

/** Block rows of a copy packed to measure its size before it is written (estimateCopyFiles). */
const SAMPLED_BLOCK_ROWS = 3;

/**
 * The sizes of the files the build's point copies of these layers will take, before any is written: each copy's
 * blocks packed as the writer packs them, measured on a few block rows spread over the grid (the
 * top, middle and bottom) and scaled to all of them, plus its index and header. Variables a build
 * leaves to the store are not counted.
 */
export async function estimateCopyFiles(store: Store, layers: LayerSpec[]): Promise<number[]> {
  const files: number[] = [];
  for (const j of await copyJobs(store, layers)) {
    if (refusal(j.v)) continue;
    const l = copyLayout(j.v);
    const rows = Math.ceil(l.ny / l.by);
    const picked = [
      ...new Set(
        Array.from({ length: Math.min(rows, SAMPLED_BLOCK_ROWS) }, (_, i) =>
          Math.floor(((i + 0.5) * rows) / Math.min(rows, SAMPLED_BLOCK_ROWS)),
        ),
      ),
    ];
    let nodes = 0;
    let packed = 0;
    for (const r of picked) {
      const y0 = r * l.by;
      const band = await readBand(j, l, y0, Math.min(l.ny, y0 + l.by));
      eachBlock(l, band, y0, (block) => {
        packed += packBlock(block, l.bytes).length;
        nodes += block.length / l.perNode;
      });
    }
    const blocks = blockCount(l);
    // The data with the block index before it (one offset per block and one more), and the header.
    files.push(Math.round((packed / Math.max(1, nodes)) * l.ny * l.nx) + 8 * (blocks + 1), POINT_HEADER_BYTES);
  }
  return files;
}

/** About what a copy's JSON header takes (its layout, revision and chunk versions). */
const POINT_HEADER_BYTES = 1024;

export interface PointCopyOptions {
  buildDir: string;
  /** The published build, whose unchanged copies are linked instead of written. */
  previous?: string;
  shard?: { index: number; count: number };
  budgetMb?: number;
}

/**
 * Writes (or links) the copies of the plan's stored variables and runs into a partial build. A
 * shard writes every n-th of them (in a fixed order), so the shards of a build write each once.
 */
export async function buildPointCopies(
  store: Store,
  layers: LayerSpec[],
  o: PointCopyOptions,
): Promise<PointCopyReport> {
  const started = performance.now();
  const budgetMb = o.budgetMb ?? POINT_COPY_MB;
  if (!(budgetMb > 0)) throw new ConfigError(`point_copy_mb must be positive, got ${budgetMb}`);
  const jobs = (await copyJobs(store, layers)).filter((_, i) => !o.shard || i % o.shard.count === o.shard.index - 1);
  const report: PointCopyReport = { copies: [], skipped: [], seconds: 0, passes: 0 };
  if (jobs.length) mkdirSync(join(o.buildDir, POINT_DIR), { recursive: true });
  for (const j of jobs) {
    const why = refusal(j.v);
    if (why) {
      report.skipped.push({ group: j.group.id, variable: j.v.name, reason: why });
      continue;
    }
    const layout = copyLayout(j.v);
    const versions = await runVersions(j, layout);
    if (!versions) {
      report.skipped.push({
        group: j.group.id,
        variable: j.v.name,
        reason: `more than ${POINT_COPY_MAX_CHUNKS} stored chunks in a run`,
      });
      continue;
    }
    const key = pointCopyKey(j.group.id, j.v.name, j.runIso);
    const revision = copyRevision(j.group, j.v);
    const entry = { key, group: j.group.id, variable: j.v.name, run: j.runIso, revision };
    const prev = o.previous && (await readPointCopyHeader(o.previous, key));
    if (
      prev &&
      prev.revision === revision &&
      prev.ingested === (j.group.ingested?.[j.run] ?? null) &&
      JSON.stringify(prev.versions) === JSON.stringify(versions) &&
      existsSync(join(o.previous!, POINT_DIR, `${key}.bin`))
    ) {
      linkPointCopy(o.previous!, o.buildDir, key);
      report.copies.push({ ...entry, bytes: prev.bytes, reused: true });
      continue;
    }
    const { header, passes } = await writeCopy(j, layout, o.buildDir, key, budgetMb * MIB, versions);
    report.passes += passes;
    report.copies.push({ ...entry, bytes: header.bytes, reused: false });
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}
