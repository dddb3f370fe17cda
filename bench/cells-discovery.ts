// /healthz while a server discovers large cell grids, against /healthz on the same server idle, in
// one run. The store (written with the project's ZarrWriter: metadata and the chunks asked for):
// a whole HEALPix grid at nside 2048 (50 M cells, EERIE's zoom 11) and an ICON grid of 2 M cells
// (its coordinates stored, so its index is made). `gridcast serve` runs as a child process; this
// process asks /healthz back to back (one request at a time) while a /point to a group not yet
// opened waits for its discovery, then again after a new cycle's metadata (one more run, the
// documents rewritten as a producer appending a run does) while the /point that notices it waits.
// Prints /healthz p50, p99 and max per phase, their ratio to idle, the server's own event-loop
// delay over the phase (bench/loop-delay.ts: perf_hooks in the served process, its 5 ms
// resolution included) and its resident memory.
//   node bench/cells-discovery.ts [icon cells, default 2000000]
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { openLedger } from "../src/ledger/open.ts";
import { ZarrWriter } from "../src/sample/zarr-writer.ts";
import { healpixNearest } from "../src/store/healpix.ts";
import { appendCellRun, writeOneRunAxes } from "../test/helpers/cell-run.ts";
import { cleanup, tempDir } from "../test/helpers/harness.ts";
import { type LoopDelay, loopDelay, loopDelayEnv, percentile } from "./lib.ts";

const ICON_CELLS = Number(process.argv[2] ?? 2_000_000);
const NSIDE = 2048;
const CHUNK = 1 << 20;
const ROOT = join(import.meta.dirname, "..");
const POINT: [number, number] = [47.3, 8.5];

const dir = tempDir("gridcast-bench-cells-");
const store = join(dir, "cells.zarr");
const DELAYS = join(dir, "loop-delay.jsonl");

async function writeStore(): Promise<void> {
  const w = new ZarrWriter(store, 1);
  w.plainGroup("forecast", 3);
  const hp = w.group("forecast/hp", 3, {});
  await writeOneRunAxes(hp);
  hp.array("crs", {
    shape: [],
    chunks: [],
    dtype: "int32",
    dims: [],
    fill: 0,
    attrs: { grid_mapping_name: "healpix", healpix_nside: NSIDE, healpix_order: "nested" },
  });
  const t2m = hp.array("t2m", {
    shape: [1, 1, 12 * NSIDE * NSIDE],
    chunks: [1, 1, CHUNK],
    dtype: "float32",
    dims: ["time", "lead_time", "cell"],
    fill: "NaN",
    attrs: { units: "K", standard_name: "air_temperature", grid_mapping: "crs" },
  });
  const c = Math.floor(healpixNearest(NSIDE, "nested", POINT[0], POINT[1]).cell / CHUNK);
  await t2m.writeChunk([0, 0, c], (t2m.chunkBuffer() as Float32Array).fill(285));
  hp.close();
  const icon = w.group("forecast/icon", 3, {});
  await writeOneRunAxes(icon);
  const n = ICON_CELLS;
  // Cells spread over the sphere (a Fibonacci lattice), in radians as ICON stores them.
  const lat = new Float64Array(n);
  const lon = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    lat[k] = Math.asin(1 - (2 * k + 1) / n);
    lon[k] = ((k * Math.PI * (3 - Math.sqrt(5))) % (2 * Math.PI)) - Math.PI;
  }
  for (const [name, values, standard] of [
    ["clat", lat, "latitude"],
    ["clon", lon, "longitude"],
  ] as const) {
    await icon
      .array(name, {
        shape: [n],
        chunks: [CHUNK],
        dtype: "float64",
        dims: ["ncells"],
        fill: 0,
        attrs: { units: "radian", standard_name: standard },
      })
      .writeAll(values);
  }
  icon.array("t_2m", {
    shape: [1, 1, n],
    chunks: [1, 1, CHUNK],
    dtype: "float32",
    dims: ["time", "lead_time", "ncells"],
    fill: "NaN",
    attrs: { units: "K", standard_name: "air_temperature", CDI_grid_type: "unstructured" },
  });
  icon.close();
  w.rootGroup({});
  await w.close();
}

function serve(db: string): Promise<{ child: ChildProcess; url: string }> {
  const env = { ...process.env, GRIDCAST_DB: db, GRIDCAST_OUT: join(dir, "out"), ...loopDelayEnv(DELAYS) };
  const child = spawn(process.execPath, ["bin/gridcast", "serve", "--port", "0", "--store", store], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((ok, fail) => {
    let text = "";
    const on = (d: Buffer) => {
      text += d.toString();
      const m = /serving on (http:\/\/\S+)/.exec(text);
      if (m) ok({ child, url: m[1] });
    };
    child.stdout!.on("data", on);
    child.stderr!.on("data", on);
    child.on("exit", (code) => fail(new Error(`serve exited ${code}: ${text}`)));
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

/** /healthz back to back until `until` settles (or for `ms`), each request's milliseconds. */
async function healthz(url: string, until: Promise<unknown> | number): Promise<number[]> {
  const times: number[] = [];
  let done = false;
  if (typeof until === "number") setTimeout(() => (done = true), until);
  else void until.finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    await (await fetch(`${url}/healthz`)).arrayBuffer();
    times.push(performance.now() - t0);
  }
  return times;
}

await writeStore();
const db = join(dir, "ledger.db");
const ledger = await openLedger(db);
const { key } = await ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 } as never);
await ledger.close();
const { child, url } = await serve(db);
const H = { "X-API-Key": key };
const point = (group: string, variable: string) =>
  fetch(`${url}/point?lat=${POINT[0]}&lon=${POINT[1]}&var=${variable}&group=forecast/${group}`, { headers: H }).then(
    async (r) => {
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`/point ${group}: ${r.status}`);
    },
  );
try {
  await healthz(url, 500); // warm the client and server
  const rows: [string, number[], number, LoopDelay][] = [];
  const pid = child.pid!;
  await loopDelay(pid, DELAYS);
  const idle = await healthz(url, 3000);
  rows.push(["idle", idle, rssMiB(pid), await loopDelay(pid, DELAYS)]);
  for (const [group, variable] of [
    ["hp", "t2m"],
    ["icon", "t_2m"],
  ] as const) {
    const t0 = performance.now();
    const p = point(group, variable);
    const during = await healthz(url, p);
    await p;
    const ms = (performance.now() - t0).toFixed(0);
    rows.push([`discovery of ${group} (${ms} ms)`, during, rssMiB(pid), await loopDelay(pid, DELAYS)]);
    await appendCellRun(store, `forecast/${group}`, [variable]);
    await sleep(2500); // past the metadata check interval (METADATA_CHECK_MS)
    await loopDelay(pid, DELAYS);
    const t1 = performance.now();
    const q = point(group, variable);
    const refresh = await healthz(url, q);
    await q;
    const ms1 = (performance.now() - t1).toFixed(0);
    rows.push([`new cycle of ${group} (${ms1} ms)`, refresh, rssMiB(pid), await loopDelay(pid, DELAYS)]);
  }
  const base50 = percentile(idle, 50);
  const base99 = percentile(idle, 99);
  const baseMax = Math.max(...idle);
  console.log(`HEALPix nside ${NSIDE} (${12 * NSIDE * NSIDE} cells), ICON ${ICON_CELLS} cells; /healthz back to back`);
  console.log(
    "phase                                    n   p50 ms  ×idle   p99 ms  ×idle   max ms  ×idle | loop delay p99 / max ms | RSS MiB",
  );
  const f = (x: number, w: number, d: number) => x.toFixed(d).padStart(w);
  for (const [name, t, rss, loop] of rows) {
    const p50 = percentile(t, 50);
    const p99 = percentile(t, 99);
    const max = Math.max(...t);
    console.log(
      `${name.padEnd(38)} ${String(t.length).padStart(5)} ${f(p50, 8, 2)} ${f(p50 / base50, 6, 2)} ${f(p99, 8, 1)} ${f(p99 / base99, 6, 1)} ${f(max, 8, 1)} ${f(max / baseMax, 6, 1)} | ${f(loop.p99, 10, 1)} / ${f(loop.max, 6, 1)} | ${f(rss, 7, 0)}`,
    );
  }
} finally {
  child.kill("SIGTERM");
  cleanup(dir);
}
