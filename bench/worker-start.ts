// What a tile worker spends loading its modules before its first tile, with Node's compile cache
// (as `bin/gridcast` and the worker pool set it up, src/compile-cache.ts) and without it
// (NODE_DISABLE_COMPILE_CACHE=1): the README's "about half a second" per worker without the cache.
// Each sample is a fresh process that starts one worker thread importing what a tile worker
// imports; the process's CPU time over that (its main thread only waits) is the load-independent
// figure, the wall time is printed beside it with the load average.
//   node bench/worker-start.ts [pairs]   (default 5; modes alternate)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const MODULES = [
  "src/pipeline/render-job.ts",
  "src/pipeline/orientation-job.ts",
  "src/store/store.ts",
  "src/published/archive-sink.ts",
  "src/pipeline/coverage.ts",
  "src/pipeline/write.ts",
].map((m) => join(ROOT, m));

// Run in the child: one worker imports the modules; the parent thread reports CPU and wall time.
const CHILD = `
import { Worker } from "node:worker_threads";
const mods = ${JSON.stringify(MODULES)};
const body = "import { parentPort } from 'node:worker_threads';" +
  "Promise.all(" + JSON.stringify(mods) + ".map((m) => import(m))).then(() => parentPort.postMessage('loaded'));";
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const w = new Worker(body, { eval: true });
await new Promise((ok, fail) => { w.once("message", ok); w.once("error", fail); });
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await w.terminate();
console.log(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }));
`;

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
const cacheDir = mkdtempSync(join(tmpdir(), "gridcast-worker-start-"));

function sample(cached: boolean): { wall: number; cpu: number } {
  const env = { ...process.env };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  if (cached) env.NODE_COMPILE_CACHE = cacheDir;
  else env.NODE_DISABLE_COMPILE_CACHE = "1";
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", CHILD], { env, encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pairs = Number(process.argv[2] ?? 5);
try {
  sample(true); // fills the cache, as the first build after an install does
  const on: { wall: number; cpu: number }[] = [];
  const off: { wall: number; cpu: number }[] = [];
  const before = load();
  for (let i = 0; i < pairs; i++) {
    off.push(sample(false));
    on.push(sample(true));
  }
  const ms = (xs: { wall: number; cpu: number }[], k: "wall" | "cpu") => median(xs.map((x) => x[k]));
  console.log(`machine: ${os.cpus().length} cores, Node ${process.versions.node}; ${pairs} pairs, medians`);
  for (const k of ["cpu", "wall"] as const) {
    const a = ms(off, k);
    const b = ms(on, k);
    console.log(
      `worker start, ${k === "cpu" ? "CPU time" : "wall time"}: ${a.toFixed(0)} ms without the compile cache, ` +
        `${b.toFixed(0)} ms with it (ratio ${(a / b).toFixed(2)}; saved ${(a - b).toFixed(0)} ms a worker)`,
    );
  }
  console.log(`load average ${before} → ${load()}`);
} finally {
  rmSync(cacheDir, { recursive: true, force: true });
}
