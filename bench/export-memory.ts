// Export memory: the peak resident set of a real `gridcast serve` process (VmHWM from /proc) while
// 24 whole-globe exports of one key run at once to slow-ish readers, first as .npy, then as
// GeoTIFF (each on a fresh server, default settings), against the README's stated bound for
// exports (exportMemoryBound at max_heavy_requests, plus the chunk cache) and against the
// process's own RSS before the exports, all in one run. Meanwhile another client asks /healthz
// back to back; its p50, p99 and worst answer times are printed against the same server idle, and
// so is the server's own event-loop delay (bench/loop-delay.ts: perf_hooks inside the served
// process, 5 ms resolution included), which the machine's other load disturbs less.
//   node bench/export-memory.ts [--clients 24] [--pause-ms 1]
//
// The store: one global group at 0.25° (721 × 1440), 12 leads of t2m in 180 × 180 chunks spanning
// every lead (the full preset's layout), so a whole-globe export is 47.5 MiB, under the 64 MiB cap.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DEFAULTS } from "../src/config.ts";
import { exportMemoryBound } from "../src/forecast/export-memory.ts";
import { writeSample } from "../src/sample/index.ts";
import { PRESETS } from "../src/sample/presets.ts";
import { tempDir } from "../test/helpers/harness.ts";
import { procMib, resetPeak, serveProcess, slowGet } from "../test/helpers/serve-process.ts";
import { type BenchRow, type LoopDelay, loopDelay, loopDelayEnv, printRows } from "./lib.ts";

const MIB = 1024 * 1024;
const args = process.argv.slice(2);
const arg = (name: string, d: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : d;
};
const CLIENTS = arg("--clients", 24);
const PAUSE_MS = arg("--pause-ms", 1);
const LEADS = 12;
const EXPORT =
  `/api/export/forecast~global/{format}?var=t2m&time_index=0&lead_start=0&lead_stop=${LEADS - 1}` +
  "&lat_min=-90&lat_max=90&lon_min=-180&lon_max=179.75";

/** Sorted-sample quantile. */
function quantile(v: number[], q: number): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** /healthz back to back, one at a time, until `until` settles (or for `until` ms): each answer's ms. */
async function healthz(base: string, until: Promise<unknown> | number): Promise<number[]> {
  let done = false;
  const end = typeof until === "number" ? performance.now() + until : Number.POSITIVE_INFINITY;
  if (typeof until !== "number")
    until.then(
      () => (done = true),
      () => (done = true),
    );
  const out: number[] = [];
  while (!done && performance.now() < end) {
    const t = performance.now();
    await (await fetch(`${base}/healthz`)).arrayBuffer();
    out.push(performance.now() - t);
  }
  return out;
}

const work = tempDir("gridcast-export-memory-");
try {
  const store = join(work, "store");
  const full = PRESETS.full;
  const global = full.groups.find((g) => g.name === "global") ?? full.groups[0];
  process.stderr.write("writing a 0.25° global store of 12 leads…\n");
  await writeSample(store, {
    custom: {
      ...full,
      runs: [full.runs[0]],
      leads: Array.from({ length: LEADS }, (_, i) => full.leads[i] ?? i),
      groups: [{ ...global, variables: { t2m: "t2m" } }],
      products: { tokens: [256, 256, 32], map: [16, 16, 8], vector: [1, 1, 8] },
      tilePoints: [full.tilePoints[0]],
    },
  });
  const bound = (exportMemoryBound(DEFAULTS, DEFAULTS.max_heavy_requests) + DEFAULTS.chunk_cache_mb * MIB) / MIB;
  const rows: BenchRow[] = [];
  for (const format of ["npy", "tiff"]) {
    const dir = join(work, format);
    mkdirSync(dir);
    const delays = join(dir, "loop-delay.jsonl");
    const srv = await serveProcess(store, dir, loopDelayEnv(delays));
    try {
      const url = srv.url + EXPORT.replace("{format}", format);
      const headers = { "X-API-Key": srv.key };
      const one = await slowGet(url, headers, 0);
      if (one.status !== 200) throw new Error(`${format}: ${one.status}`);
      const baseline = procMib(srv.pid, "VmRSS");
      await loopDelay(srv.pid, delays);
      const idle = await healthz(srv.url, 2000);
      const loopIdle = await loopDelay(srv.pid, delays);
      resetPeak(srv.pid);
      const t0 = performance.now();
      const running = Promise.all(Array.from({ length: CLIENTS }, () => slowGet(url, headers, PAUSE_MS)));
      const during = await healthz(srv.url, running);
      const reads = await running;
      const loopDuring = await loopDelay(srv.pid, delays);
      const seconds = (performance.now() - t0) / 1000;
      const peak = procMib(srv.pid, "VmHWM");
      const after = procMib(srv.pid, "VmRSS");
      for (const r of reads) if (r.status !== 200 || r.bytes !== r.declared) throw new Error(`${format}: ${r.status}`);
      const growth = peak - baseline;
      const note =
        `${CLIENTS} × ${(one.bytes / MIB).toFixed(1)} MiB in ${seconds.toFixed(1)} s; ` +
        `RSS before ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)}, after ${after.toFixed(0)}`;
      rows.push({
        bench: `export memory (${format})`,
        figure: "peak RSS growth MiB",
        value: growth,
        baseline: "stated bound MiB (exports + chunk cache)",
        baselineValue: bound,
        ratio: bound / growth,
        target: 1,
        note,
      });
      for (const [figure, pick] of [
        ["/healthz p50 ms", (v: number[]) => quantile(v, 0.5)],
        ["/healthz p99 ms", (v: number[]) => quantile(v, 0.99)],
        ["/healthz max ms", (v: number[]) => Math.max(...v)],
      ] as const) {
        rows.push({
          bench: `export memory (${format})`,
          figure: `${figure} during the exports`,
          value: pick(during),
          baseline: `${figure} idle`,
          baselineValue: pick(idle),
          ratio: pick(idle) / pick(during),
          note: `${during.length} answers during, ${idle.length} idle`,
        });
      }
      for (const k of ["p50", "p99", "max"] as const satisfies (keyof LoopDelay)[]) {
        rows.push({
          bench: `export memory (${format})`,
          figure: `server event-loop delay ${k} ms during the exports`,
          value: loopDuring[k],
          baseline: `event-loop delay ${k} ms idle`,
          baselineValue: loopIdle[k],
          ratio: loopIdle[k] / loopDuring[k],
          note: "perf_hooks in the served process, 5 ms resolution included",
        });
      }
      rows.push({
        bench: `export memory (${format})`,
        figure: "peak RSS MiB",
        value: peak,
        baseline: "RSS before MiB",
        baselineValue: baseline,
        ratio: baseline / peak,
        note: "ratio: share of the peak the idle server already had",
      });
    } finally {
      await srv.close();
    }
  }
  printRows(rows);
} finally {
  rmSync(work, { recursive: true, force: true });
}
