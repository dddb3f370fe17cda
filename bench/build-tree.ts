// One build of the gdal bench's layer (z0–6 of t2m, first run and lead of the xarray-written
// store, 2 threads, no @2x) with the pipeline of any checkout of this repository, so two
// checkouts (before and after a change) can be run alternately in one session:
//   node bench/build-tree.ts <checkout> <store> <out>    prints seconds, tiles and process CPU
// (the store: .gridcast/bench/xarray-global-025, made by bench/xarray.ts).
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";

const [tree, store, out] = process.argv.slice(2).map((p) => resolve(p));
// The pipeline lived in src/render/build/ before it became its own layer.
const entry = [`${tree}/src/pipeline/run.ts`, `${tree}/src/render/build/run.ts`].find((p) => existsSync(p));
if (!entry || !store || !out) throw new Error("usage: node bench/build-tree.ts <checkout> <store> <out>");
const { runBuild } = await import(entry);
rmSync(out, { recursive: true, force: true });
execFileSync("sync");
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const built = await runBuild({
  store,
  out,
  concurrency: 2,
  reuse: false,
  groups: ["global"],
  vars: ["t2m"],
  leads: [0],
  maxZoom: 6,
  hidpi: false,
  progress: false,
  webDir: null,
});
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ tree, seconds, tiles: built.totals.tiles, cpuSeconds: (cpu.user + cpu.system) / 1e6 }));
