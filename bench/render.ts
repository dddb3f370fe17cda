// Tile pipeline throughput: the full z0..7 pyramid (21,845 tiles) of one 0.25° global layer (demo
// store, t2m, latest run, first lead) through the real build — store read, resampling, PNG
// encoding, files and hard links on `concurrency` worker threads — against an encode-only
// baseline measured in the same run: as many encodeIndexedPng calls as the build made, on ready
// index buffers of the same field, on the same number of threads. Target ratio ≥ 0.6.
//   node bench/render.ts [--out DIR] [--all] [--tiles zxy|pmtiles]
// Without --out it measures twice: output in the project dir and on /dev/shm (no disk cost).
// --all also times a build of every layer of the demo store's latest run.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { latestRun } from "../src/forecast/select.ts";
import { type BuildOptions, runBuild } from "../src/pipeline/run.ts";
import type { TileFormat } from "../src/published/format.ts";
import { buildPalette } from "../src/render/colormap.ts";
import { encodeIndexedPng } from "../src/render/png.ts";
import { createLevelSampler } from "../src/render/resample.ts";
import { MAX_ZOOM, TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, type BenchRow, benchStore, printRows } from "./lib.ts";

/** Ready index buffers each baseline thread cycles through (32 MiB), spread over the pyramid. */
const READY = 512;

interface BaselineInit {
  store: string;
  calls: number;
}

/** Baseline thread: sample real tiles untimed, then time `calls` encodes of them. */
async function baselineWorker(init: BaselineInit): Promise<void> {
  const store = new Store(init.store);
  const group = await store.forecastGroup("forecast/global");
  const v = group.variables.get("t2m")!;
  const run = latestRun(group);
  const region = v.roles.map((r, d): [number, number] => {
    if (r === "time") return [run, run + 1];
    return r === "lat" || r === "lon" ? [0, v.array.shape[d]] : [0, 1];
  });
  const field = await v.array.read(region);
  const palette = buildPalette(v.entry.style!);
  const tiles: Uint8Array[] = [];
  const total = ((4 ** (MAX_ZOOM + 1) - 1) / 3) | 0;
  const stride = Math.max(1, Math.floor(total / READY));
  let k = 0;
  for (let z = 0; z <= MAX_ZOOM; z++) {
    const sampler = createLevelSampler(group.grid, z);
    for (let x = 0; x < 2 ** z; x++) {
      for (let y = 0; y < 2 ** z; y++) {
        if (k++ % stride !== 0) continue;
        // The same sampling as the build (the style's: bilinear for temperature), so the baseline
        // encodes the very tiles the pipeline encodes.
        const indices = sampler.renderTile(x, y, field, palette, undefined, v.entry.style!.resample ?? "bilinear");
        if (!isUniform(indices)) tiles.push(indices);
      }
    }
  }
  parentPort!.postMessage({ ready: true });
  await new Promise((go) => parentPort!.once("message", go));
  const t0 = performance.now();
  for (let i = 0; i < init.calls; i++) encodeIndexedPng(tiles[i % tiles.length], TILE_SIZE, TILE_SIZE, palette.rgba);
  parentPort!.postMessage({ ms: performance.now() - t0 });
}

/** Wall time of `calls` encodes split over `threads` threads, started together once all are ready. */
async function encodeOnly(store: string, calls: number, threads: number): Promise<number> {
  const workers = Array.from({ length: threads }, (_, i) => {
    const share = Math.floor(calls / threads) + (i < calls % threads ? 1 : 0);
    return new Worker(new URL(import.meta.url), { workerData: { store, calls: share } satisfies BaselineInit });
  });
  const next = (w: Worker) =>
    new Promise<Record<string, number>>((ok, fail) => w.once("message", ok).once("error", fail));
  await Promise.all(workers.map(next));
  const t0 = performance.now();
  const done = workers.map(next);
  for (const w of workers) w.postMessage("go");
  await Promise.all(done);
  const ms = performance.now() - t0;
  await Promise.all(workers.map((w) => w.terminate()));
  return ms / 1000;
}

interface Round {
  tiles: number;
  encoded: number;
  pipelineSeconds: number;
  baselineSeconds: number;
}

/** encodeIndexedPng calls the pipeline makes for this pyramid, counted by an untimed warm-up build. */
let encodeCalls = 0;

/**
 * One round: the encode-only baseline, then one pipeline build into a fresh directory (baseline
 * first, so the build's disk writeback cannot slow the baseline down).
 */
async function round(store: string, out: string, concurrency: number, tiles: TileFormat): Promise<Round> {
  const baselineSeconds = await encodeOnly(store, encodeCalls, concurrency);
  const one = await runBuild({ store, out, concurrency, reuse: false, ...SINGLE_LAYER, tiles });
  if (one.totals.encoded !== encodeCalls)
    throw new Error(`encode calls changed: ${one.totals.encoded} vs ${encodeCalls}`);
  return { tiles: one.totals.tiles, encoded: encodeCalls, pipelineSeconds: one.render_seconds, baselineSeconds };
}

const SINGLE_LAYER: Partial<BuildOptions> = {
  groups: ["global"],
  vars: ["t2m"],
  leads: [0],
  progress: false,
  webDir: null,
};

/** Median of paired rounds writing below `base`: one table row. */
async function measure(
  store: string,
  base: string,
  concurrency: number,
  rounds: number,
  tiles: TileFormat = "zxy",
): Promise<BenchRow> {
  // Deleted only at the end: deleting 20k files meanwhile would slow the next round down.
  const out = mkdtempSync(join(base, "gridcast-bench-render-"));
  const done: Round[] = [];
  try {
    // An untimed warm-up build counts the encode calls the pipeline makes (and warms the page cache).
    encodeCalls = (await runBuild({ store, out: join(out, "warm"), concurrency, ...SINGLE_LAYER })).totals.encoded;
    for (let i = 0; i < rounds; i++) done.push(await round(store, join(out, String(i)), concurrency, tiles));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  // Median by ratio: other load on the machine moves both halves of a pair alike.
  done.sort((a, b) => b.baselineSeconds / b.pipelineSeconds - a.baselineSeconds / a.pipelineSeconds);
  const r = done[Math.floor(done.length / 2)];
  const pipelineRate = r.tiles / r.pipelineSeconds;
  const baselineRate = r.tiles / r.baselineSeconds;
  return {
    bench: `render z0-7 pyramid, 1 layer, ${concurrency} threads, ${tiles} tiles, out on ${base}`,
    figure: "tiles/s (read+sample+encode+write)",
    value: pipelineRate,
    baseline: `encode-only, ${r.encoded} calls → tiles/s`,
    baselineValue: baselineRate,
    ratio: pipelineRate / baselineRate,
    target: 0.6,
    note: `median of ${done.length}: ${r.tiles} tiles in ${r.pipelineSeconds.toFixed(2)} s vs ${r.baselineSeconds.toFixed(2)} s`,
  };
}

/**
 * By default two rows: output in the project (a real disk, where builds go) and on tmpfs when
 * the machine has one (the pipeline without the file system's per-file cost).
 */
export async function run(
  opts: { out?: string; all?: boolean; rounds?: number; tiles?: TileFormat } = {},
): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const concurrency = Math.min(2, availableParallelism());
  const bases = opts.out ? [opts.out] : [BENCH_DIR, ...(existsSync("/dev/shm") ? ["/dev/shm"] : [])];
  const rows: BenchRow[] = [];
  for (const base of bases) rows.push(await measure(store, base, concurrency, opts.rounds ?? 3, opts.tiles));
  if (opts.all) {
    const out = mkdtempSync(join(bases[0], "gridcast-bench-render-"));
    try {
      const all = await runBuild({
        store,
        out,
        concurrency,
        reuse: false,
        progress: process.stderr,
        webDir: null,
        tiles: opts.tiles,
      });
      const single = rows[0].value;
      rows.push({
        bench: `build demo store, every layer of the latest run, out on ${bases[0]}`,
        figure: "tiles/s",
        value: all.totals.tiles / all.render_seconds,
        baseline: "single-layer pipeline tiles/s",
        baselineValue: single,
        ratio: all.totals.tiles / all.render_seconds / single,
        note: `${all.totals.tiles} tiles, ${all.totals.layers} layers, ${all.seconds.toFixed(1)} s in all`,
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  return rows;
}

if (!isMainThread) {
  await baselineWorker(workerData as BaselineInit);
} else if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--out");
  const tiles = args.includes("--tiles") ? (args[args.indexOf("--tiles") + 1] as TileFormat) : undefined;
  printRows(await run({ out: at >= 0 ? args[at + 1] : undefined, all: args.includes("--all"), tiles }));
}
