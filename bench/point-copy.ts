// /point with the build's point copy against the same routes reading the store (point_copy 0, the
// same server and build), against xarray reading the store, and against the demo store's warm
// /point, all in one run, on stores laid out as most producers write them (bench/point_copy_stores.py:
// xarray + zarr 2, one whole-field chunk per lead, float32, Blosc lz4): 0.25° global 1440×721 with
// LEADS hourly leads, and a 1° ensemble of 20 members. Points are random (a fixed seed), so neither
// the chunk cache nor the answer memo hold them.
//  - cold: a fresh server on a fresh build; the first request's latency, then p50/p99 of
//    sequential requests from that first one on (targets p50 ≤ 5 ms, p99 ≤ 20 ms);
//  - warm req/s under wrk (-t2 -c16, a Lua script drawing the points) against the store's answers
//    per second under the same wrk (target ≥ 100×) and the demo store's warm /point (≥ 0.5×);
//  - the build: seconds the copy added per GB of the store and its size against the store's (≤ 1.2×).
//   node bench/point-copy.ts [leads, default 120] [wrk seconds, default 10]
import { type ChildProcessWithoutNullStreams, execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, benchServer, benchStore, percentile, printRows } from "./lib.ts";

const run$ = promisify(execFile);
const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
const SCRIPT = resolve(import.meta.dirname, "point_copy_stores.py");
const DIR = join(BENCH_DIR, "point-copy");
/** Sequential requests of the cold rows; the store's answers take ~0.5 s each, so fewer of them. */
const COLD_N = 200;
const STORE_N = 12;
/** Sequential small-box exports each way. */
const BOX_N = 20;
/** Leads of the stores (set by run()). */
let LEADS = 120;

function points(n: number, seed: number): { lat: number; lon: number }[] {
  let s = seed >>> 0;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  return Array.from({ length: n }, () => ({ lat: -89 + 178 * next(), lon: -180 + 360 * next() }));
}

const duBytes = (path: string) => Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0]);

interface Wrk {
  rps: number;
  p50: string;
  p99: string;
  non2xx: number;
}

/** wrk -t2 -c16 over random points (a Lua script, seeded), the key in a header. */
async function wrk(
  base: string,
  key: string,
  seconds: number,
  extra: string,
  connections = 16,
  onePoint = false,
): Promise<Wrk> {
  const lua = join(DIR, `points-${process.pid}.lua`);
  writeFileSync(
    lua,
    `math.randomseed(7)\nrequest = function()\n  local lat = math.random() * 178 - 89\n  local lon = math.random() * 360 - 180\n` +
      `  return wrk.format("GET", string.format("/point?lat=%.3f&lon=%.3f&var=t2m${extra}", lat, lon))\nend\n`,
  );
  const script = onePoint ? [] : ["-s", lua];
  const url = onePoint ? `${base}/point?lat=48.1&lon=11.6&var=t2m${extra}` : base;
  const args = ["-t2", `-c${connections}`, `-d${seconds}s`, "--latency", ...script, "-H", `X-API-Key: ${key}`, url];
  const { stdout } = await run$("wrk", args, { maxBuffer: 1 << 20 });
  rmSync(lua, { force: true });
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0),
    p50: /\n\s+50%\s+(\S+)/.exec(stdout)?.[1] ?? "?",
    p99: /\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? "?",
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
  };
}

/** Sequential small-box exports (2° × 2°, every lead) as .npy: each latency (ms). */
async function sequentialBoxes(url: string, key: string, pts: { lat: number; lon: number }[], extra: string) {
  const ms: number[] = [];
  for (const p of pts) {
    const lat = Math.min(87, p.lat);
    const lon = Math.min(177, p.lon);
    const q =
      `var=t2m&time_index=0&lead_start=0&lead_stop=${LEADS - 1}&lat_min=${lat.toFixed(2)}&lat_max=${(lat + 2).toFixed(2)}` +
      `&lon_min=${lon.toFixed(2)}&lon_max=${(lon + 2).toFixed(2)}${extra}`;
    const t0 = performance.now();
    const r = await fetch(`${url}/api/export/forecast~global/npy?${q}`, { headers: { "X-API-Key": key } });
    const body = await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`export answered ${r.status}: ${Buffer.from(body).toString()}`);
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** Sequential requests: each latency (ms), the first one first. */
async function sequential(url: string, key: string, pts: { lat: number; lon: number }[], extra: string) {
  const ms: number[] = [];
  for (const p of pts) {
    const t0 = performance.now();
    const r = await fetch(`${url}/point?lat=${p.lat.toFixed(3)}&lon=${p.lon.toFixed(3)}&var=t2m${extra}`, {
      headers: { "X-API-Key": key },
    });
    const body = await r.text();
    if (r.status !== 200) throw new Error(`/point answered ${r.status}: ${body}`);
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** xarray reading the same series from the store (one open, then one .isel().values per point). */
async function xarrayPoints(store: string, pts: { lat: number; lon: number }[]): Promise<number[]> {
  const peer: ChildProcessWithoutNullStreams = spawn(PYTHON, [SCRIPT, "peer", store]);
  const lines = createInterface({ input: peer.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string);
  await next(); // ready
  const ms: number[] = [];
  for (const p of pts) {
    peer.stdin.write(`${p.lat} ${p.lon}\n`);
    ms.push((await next()).seconds * 1000);
  }
  peer.stdin.end();
  return ms;
}

async function variant(name: string, extra: string, seconds: number, demo: DemoRps): Promise<BenchRow[]> {
  const store = join(DIR, `${name}.zarr`);
  const out = join(DIR, `${name}.out`);
  rmSync(out, { recursive: true, force: true });
  const report = await runBuild({ store, out, progress: false, webDir: null, maxZoom: 0, orientation: false });
  const pc = report.point_copy!;
  const storeBytes = duBytes(join(store, "forecast/global/t2m"));
  const copyBytes = pc.copies.reduce((n, c) => n + c.bytes, 0);
  const perGb = pc.seconds / (storeBytes / 1e9);
  const rows: BenchRow[] = [];
  const srv = await benchServer(store, { out, max_heavy_requests: 1000 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    // As a load balancer does: no request before /readyz says ready (the warm-up done).
    const readyMs = await untilReady(srv.url);
    const cold = await sequential(srv.url, key, points(COLD_N, 11), extra);
    const warm = await wrk(srv.url, key, seconds, extra);
    const same = await wrk(srv.url, key, seconds, extra, 16, true);
    const boxes = await sequentialBoxes(srv.url, key, points(BOX_N, 17), extra);
    srv.ctx.settings.point_copy = 0;
    const boxesFromStore = await sequentialBoxes(srv.url, key, points(BOX_N, 17), extra);
    const fromStore = await sequential(srv.url, key, points(STORE_N, 13), extra);
    const storeWrk = await wrk(srv.url, key, seconds, extra, 4);
    srv.ctx.settings.point_copy = 1;
    const xr = extra ? [] : await xarrayPoints(store, points(STORE_N, 13));
    if (warm.non2xx || same.non2xx || storeWrk.non2xx) {
      throw new Error(`non-2xx answers: ${warm.non2xx}, ${same.non2xx}, ${storeWrk.non2xx}`);
    }
    const p50 = percentile(cold, 50);
    const p99 = percentile(cold, 99);
    const storeP50 = percentile(fromStore, 50);
    rows.push(
      {
        bench: `point copy ${name}: /point cold p50`,
        figure: "ms",
        value: p50,
        baseline: "store p50 ms",
        baselineValue: storeP50,
        ratio: storeP50 / p50,
        target: "p50 ≤ 5 ms",
        note: `first request ${cold[0].toFixed(1)} ms; p99 ${p99.toFixed(1)} ms (target ≤ 20); ${COLD_N} sequential random points after /readyz (${readyMs.toFixed(0)} ms from start)`,
      },
      {
        bench: `point copy ${name}: /point warm req/s`,
        figure: "req/s",
        value: warm.rps,
        baseline: "store req/s (point_copy 0)",
        baselineValue: storeWrk.rps,
        ratio: warm.rps / storeWrk.rps,
        target: 100,
        note: `wrk p50 ${warm.p50} p99 ${warm.p99}; store wrk p50 ${storeWrk.p50}`,
      },
      {
        bench: `point copy ${name}: /point warm req/s vs demo, random points`,
        figure: "req/s",
        value: warm.rps,
        baseline: "demo store, random points, req/s",
        baselineValue: demo.random,
        ratio: warm.rps / demo.random,
        target: 0.5,
      },
      {
        bench: `point copy ${name}: /point warm req/s vs demo, one point`,
        figure: "req/s",
        value: same.rps,
        baseline: "demo store, one point, req/s",
        baselineValue: demo.one,
        ratio: same.rps / demo.one,
        target: 0.5,
        note: `wrk p50 ${same.p50} p99 ${same.p99}`,
      },
      {
        bench: `point copy ${name}: disk`,
        figure: "MB",
        value: copyBytes / 1e6,
        baseline: "store t2m MB",
        baselineValue: storeBytes / 1e6,
        ratio: copyBytes / storeBytes,
        target: "≤ 1.2×",
        note: `build: the copy took ${pc.seconds.toFixed(1)} s (${perGb.toFixed(0)} s per GB of store, ${pc.passes} pass), tiles ${report.render_seconds.toFixed(1)} s`,
      },
    );
    const boxP50 = percentile(boxes, 50);
    const boxStoreP50 = percentile(boxesFromStore, 50);
    rows.push({
      bench: `point copy ${name}: small .npy export p50`,
      figure: "ms",
      value: boxP50,
      baseline: "store p50 ms (point_copy 0)",
      baselineValue: boxStoreP50,
      ratio: boxStoreP50 / boxP50,
      note: `${BOX_N} random 2°×2° boxes, every lead; p99 ${percentile(boxes, 99).toFixed(1)} ms vs ${percentile(boxesFromStore, 99).toFixed(1)} ms`,
    });
    if (xr.length) {
      const xp50 = percentile(xr, 50);
      rows.push({
        bench: `point copy ${name}: vs xarray`,
        figure: "p50 ms",
        value: p50,
        baseline: "xarray .isel().values p50 ms",
        baselineValue: xp50,
        ratio: xp50 / p50,
        note: `xarray p99 ${percentile(xr, 99).toFixed(0)} ms`,
      });
    }
  } finally {
    await srv.close();
  }
  return rows;
}

/** Milliseconds from now until /readyz answers 200. */
async function untilReady(url: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const r = await fetch(`${url}/readyz`);
    await r.arrayBuffer();
    if (r.status === 200) return performance.now() - t0;
    await new Promise((ok) => setTimeout(ok, 10));
  }
}

interface DemoRps {
  /** One point asked over and over (answered from the answer memo). */
  one: number;
  /** Random points (the same wrk script as the copy's rows). */
  random: number;
}

/** Warm /point req/s of the demo sample store (chunked for point reads), same wrk as the copy's. */
async function demoRps(seconds: number): Promise<DemoRps> {
  const store = await benchStore("demo");
  const srv = await benchServer(store, { max_heavy_requests: 1000 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    await untilReady(srv.url);
    // Warm: every chunk of t2m's latest run read once (the demo store fits the chunk cache).
    await wrk(srv.url, key, Math.max(2, Math.round(seconds / 2)), "");
    const random = await wrk(srv.url, key, seconds, "");
    const one = await wrk(srv.url, key, seconds, "", 16, true);
    if (random.non2xx || one.non2xx) throw new Error(`demo non-2xx answers: ${random.non2xx}, ${one.non2xx}`);
    return { one: one.rps, random: random.rps };
  } finally {
    await srv.close();
  }
}

export async function run(leads = 120, seconds = 10): Promise<BenchRow[]> {
  LEADS = leads;
  mkdirSync(DIR, { recursive: true });
  if (!existsSync(join(DIR, "det.zarr")) || !existsSync(join(DIR, "ens.zarr"))) {
    process.stderr.write(`writing the point-copy bench stores (${leads} leads) with xarray…\n`);
    execFileSync(PYTHON, [SCRIPT, "write", DIR, String(leads)], { stdio: "inherit" });
  }
  const demo = await demoRps(seconds);
  return [...(await variant("det", "", seconds, demo)), ...(await variant("ens", "", seconds, demo))];
}

if (import.meta.main) {
  const [leads, seconds] = process.argv.slice(2).map(Number);
  printRows(await run(leads || undefined, seconds || undefined));
}
