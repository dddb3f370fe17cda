// gridcast against xarray + zarr-python on a store xarray wrote itself (0.25° global, chunks
// 1×25×90×90, zarr-python's default Blosc lz4 + byte shuffle), same directory, same run:
//  - export .npy MB/s, cold (decoded-chunk cache emptied before each request), four disjoint
//    40°×60°×25-lead boxes, against the two ways a remote user could get the same numbers:
//    xarray reading the boxes over HTTP from a static server (nginx) of the same store (target
//    ≥ 5), and the static server handing gridcast's own answers as files, the physical limit of
//    moving those bytes to that client (target ≥ 0.4);
//  - the same export against xarray reading the boxes in its own process, from the directory (a
//    reference row: no transport at all);
//  - the same export with the JavaScript Blosc decoder instead of the addon's (what the addon buys);
//  - /point cold p50 (one 1×25×90×90 chunk decoded per request) against xarray's point read;
//  - the transport alone from node:http (a bare server sending a ready body of a box's size to the
//    same curl): what Node's own socket path costs beside the static server's sendfile;
//  - the bound on the "× xarray over HTTP" ratio: the static server handing the finished answers
//    against xarray over HTTP. No server can be further ahead of that reader here, so it is
//    printed beside the target, with the reader's own profile (its time fetching from the store,
//    decoding, and the rest: opening, indexing, copying; peer_phases.py).
//   node bench/xarray.ts [rounds]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { constants, PerformanceObserver } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { DEFAULTS, MIB } from "../src/config.ts";
import { boxLeads, planBox } from "../src/forecast/box.ts";
import { useNativeAddon } from "../src/native.ts";
import { recycleSlab } from "../src/read-ahead.ts";
import { bufferStats } from "../src/store/scan-buffers.ts";
import { BENCH_DIR, type BenchRow, bareServer, benchServer, curlGet, keepAliveGet, percentile } from "./lib.ts";
import { staticServer } from "./static-server.ts";

const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
/** The four boxes of the export rows (also bench/wire-loop.ts's). */
export const EXPORT_BOXES = [
  { lat_min: 10, lat_max: 50, lon_min: 0, lon_max: 60 },
  { lat_min: -50, lat_max: -10, lon_min: 60, lon_max: 120 },
  { lat_min: 20, lat_max: 60, lon_min: -120, lon_max: -60 },
  { lat_min: -40, lat_max: 0, lon_min: -60, lon_max: 0 },
];
const POINTS = Array.from({ length: 41 }, (_, i) => ({ lat: -60 + i * 3, lon: -170 + i * 8.5 }));

/** The xarray-written store, made once under .gridcast/bench. */
export function xarrayStore(): string {
  const dir = join(BENCH_DIR, "xarray-global-025");
  if (!existsSync(join(dir, ".zmetadata"))) {
    mkdirSync(BENCH_DIR, { recursive: true });
    process.stderr.write("writing the 0.25° store with xarray…\n");
    const script = resolve(import.meta.dirname, "../test/python/xarray_forecast.py");
    execFileSync(PYTHON, [script, dir, "0.25", "1", "25", "90"], { stdio: "inherit" });
  }
  return dir;
}

/** The Python peer, one command at a time (see xarray_peer.py). */
function startPeer(store: string) {
  const child = spawn(
    PYTHON,
    [resolve(import.meta.dirname, "xarray_peer.py"), store, JSON.stringify(EXPORT_BOXES), JSON.stringify(POINTS)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const reply = async () =>
    JSON.parse((await lines.next()).value as string) as {
      seconds: number;
      bytes: number;
      fetch?: number;
      decode?: number;
    };
  return {
    ready: reply(),
    async ask(cmd: string) {
      child.stdin.write(`${cmd}\n`);
      return reply();
    },
    close: () => child.kill(),
  };
}

export async function run(rounds = 5): Promise<BenchRow[]> {
  const store = xarrayStore();
  const peer = startPeer(store);
  const srv = await benchServer(store, { field_export_max_mb: 1024, max_heavy_requests: 64 });
  // The transport alone: a ready body of one box's size to the same client. What any HTTP
  // service pays on this machine and the in-process peer does not.
  const bare = await bareServer();
  // The same store, and gridcast's answers as files, from a static server.
  const web = await staticServer();
  web.link("store", store);
  try {
    await peer.ready;
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const H = { "X-API-Key": key };
    const urls = EXPORT_BOXES.map((b) => {
      const q = new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: "24" });
      for (const [k, v] of Object.entries(b)) q.set(k, String(v));
      return `${srv.url}/api/export/forecast~global/npy?${q}`;
    });
    /** One cold round of the four exports: seconds and bytes, as curl timed them. */
    // Major (mark-compact) collections in this process while gridcast's exports run: the cost
    // the cold path pays for its chunk buffers (see BENCHMARKS.md).
    let counting = false;
    let majorGcs = 0;
    let exports = 0;
    const gcs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (
          counting &&
          (e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR
        ) {
          majorGcs++;
        }
      }
    });
    gcs.observe({ entryTypes: ["gc"] });
    const exportRound = async () => {
      let bytes = 0;
      let seconds = 0;
      counting = true;
      for (const url of urls) {
        srv.ctx.store.cache.invalidate();
        const r = await curlGet(url, H);
        bytes += r.bytes;
        seconds += r.seconds;
        exports++;
      }
      // Entries arrive asynchronously: let the last ones in before counting stops.
      await new Promise((ok) => setImmediate(ok));
      counting = false;
      return { seconds, bytes };
    };
    // Warm-up of both sides (metadata, workers, imports, page cache), then interleaved rounds.
    // The same boxes read by the store layer alone (plan, read, decode, assemble; no HTTP), cold.
    const storeRound = async () => {
      let bytes = 0;
      let seconds = 0;
      for (const b of EXPORT_BOXES) {
        srv.ctx.store.cache.invalidate();
        const t0 = performance.now();
        const req = { group: "forecast/global", var: "t2m", time_index: 0, lead_start: 0, lead_stop: 24, ...b };
        const plan = await planBox(srv.ctx.store, srv.ctx.registry, req, 1024);
        // Each slab handed back once counted, as the export route does once its bytes are sent.
        for await (const slab of boxLeads(plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB)) {
          bytes += slab.byteLength;
          recycleSlab(slab);
        }
        seconds += (performance.now() - t0) / 1000;
      }
      return { seconds, bytes };
    };
    bare.body = new Uint8Array((await curlGet(urls[0], H)).bytes);
    // gridcast's answers, byte for byte, as files the static server hands out.
    for (const [i, url] of urls.entries()) {
      const r = await fetch(url, { headers: H });
      if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
      web.put(`box${i}.npy`, new Uint8Array(await r.arrayBuffer()));
    }
    const staticRound = async () => {
      let bytes = 0;
      let seconds = 0;
      for (let i = 0; i < urls.length; i++) {
        const r = await curlGet(`${web.url}box${i}.npy`);
        bytes += r.bytes;
        seconds += r.seconds;
      }
      return { seconds, bytes };
    };
    const remoteBoxes = `boxes ${web.url}store`;
    const bareRound = async () => {
      let seconds = 0;
      for (let i = 0; i < urls.length; i++) seconds += (await curlGet(bare.url)).seconds;
      return { seconds, bytes: bare.body.byteLength * urls.length };
    };
    await exportRound();
    await storeRound();
    await peer.ask("boxes");
    await peer.ask(remoteBoxes);
    await staticRound();
    const sum = {
      gridcast: [0, 0],
      inline: [0, 0],
      xarray: [0, 0],
      remote: [0, 0],
      static: [0, 0],
      store: [0, 0],
      bare: [0, 0],
    };
    const add = (k: keyof typeof sum, r: { seconds: number; bytes: number }) => {
      sum[k][0] += r.seconds;
      sum[k][1] += r.bytes;
    };
    /** xarray over HTTP: its seconds in the store's fetches and in the codec, over its rounds. */
    const remotePhases = { fetch: 0, decode: 0 };
    for (let i = 0; i < rounds; i++) {
      add("gridcast", await exportRound());
      add("xarray", await peer.ask("boxes"));
      const r = await peer.ask(remoteBoxes);
      add("remote", r);
      remotePhases.fetch += r.fetch ?? 0;
      remotePhases.decode += r.decode ?? 0;
      add("static", await staticRound());
      add("store", await storeRound());
      add("bare", await bareRound());
    }
    // The JavaScript decoder's rounds come after all the others: its garbage (a decoded chunk per
    // chunk read) would otherwise be collected during, and billed to, the next addon round.
    useNativeAddon(false);
    await exportRound();
    for (let i = 0; i < rounds; i++) add("inline", await exportRound());
    useNativeAddon(true);
    const mbs = (k: keyof typeof sum) => sum[k][1] / 1e6 / sum[k][0];

    const cold: number[] = [];
    const coldKept: number[] = [];
    const peerCold: number[] = [];
    const healthz: number[] = [];
    const healthzKept: number[] = [];
    // Cold: the chunk cache emptied before each request. A first pass over the points is a
    // warm-up of the /point path (as the export rounds have one) and is not counted; then three.
    for (let round = 0; round < 4; round++) {
      for (const [i, p] of POINTS.entries()) {
        const url = `${srv.url}/point?lat=${p.lat}&lon=${p.lon}&var=t2m`;
        srv.ctx.store.cache.invalidate();
        // curl in its own process (as for the exports), timing itself; fails on any status but 200.
        const ms = (await curlGet(url, H)).seconds * 1000;
        // The same request from a client that keeps its connection (the runner's pooled agent).
        srv.ctx.store.cache.invalidate();
        const kept = (await keepAliveGet(url, H)).seconds * 1000;
        const peerMs = (await peer.ask(`point ${i}`)).seconds * 1000;
        // What each client alone costs: the same client asking /healthz.
        const hz = (await curlGet(`${srv.url}/healthz`)).seconds * 1000;
        const hzKept = (await keepAliveGet(`${srv.url}/healthz`)).seconds * 1000;
        if (round === 0) continue;
        cold.push(ms);
        coldKept.push(kept);
        peerCold.push(peerMs);
        healthz.push(hz);
        healthzKept.push(hzKept);
      }
    }
    gcs.disconnect();
    const pointP50 = percentile(cold, 50);
    const peerP50 = percentile(peerCold, 50);
    const ms4 = (k: keyof typeof sum) => `${((sum[k][0] / rounds) * 1000).toFixed(1)} ms`;
    const perRound = (s: number) => `${((s / rounds) * 1000).toFixed(1)} ms`;
    const bound = mbs("static") / mbs("remote");
    return [
      {
        bench: "export npy cold, 4 boxes 40°×60°×25 leads, xarray-written Blosc-lz4 store",
        figure: "MB/s",
        value: mbs("gridcast"),
        baseline: `xarray+zarr over HTTP from ${web.kind} serving the store, MB/s`,
        baselineValue: mbs("remote"),
        ratio: mbs("gridcast") / mbs("remote"),
        target: 5,
        note: `bound ${bound.toFixed(2)} (next row); 4 boxes: gridcast ${ms4("gridcast")}, xarray over HTTP ${ms4("remote")}; ${(sum.xarray[1] / rounds / 4 / 1e6).toFixed(2)} MB per box, ${rounds} interleaved rounds; ${(majorGcs / exports).toFixed(2)} major GCs per export (both decoders); scan buffer pool: ${bufferStats.taken} handed out, ${bufferStats.fresh} allocated`,
      },
      {
        bench: "bound on the ratio above: the static server handing gridcast's answers against xarray over HTTP",
        figure: `${web.kind}, MB/s`,
        value: mbs("static"),
        baseline: "xarray+zarr over HTTP (same rounds), MB/s",
        baselineValue: mbs("remote"),
        ratio: bound,
        note: `no server can beat the remote reader by more than this here (target above 5); xarray's ${ms4("remote")}: fetching from the store ${perRound(remotePhases.fetch)}, decoding ${perRound(remotePhases.decode)}, the rest (open, index, copy) ${perRound(sum.remote[0] - remotePhases.fetch - remotePhases.decode)}`,
      },
      {
        bench: "same export against a static server handing gridcast's answers as files to the same curl",
        figure: "MB/s",
        value: mbs("gridcast"),
        baseline: `${web.kind} serving the same bytes, MB/s`,
        baselineValue: mbs("static"),
        ratio: mbs("gridcast") / mbs("static"),
        target: 0.4,
        note: `4 boxes: gridcast ${ms4("gridcast")}, static file ${ms4("static")}`,
      },
      {
        bench: "same export against xarray reading the store in its own process (reference: no transport)",
        figure: "MB/s",
        value: mbs("gridcast"),
        baseline: "xarray+zarr same boxes from the directory, MB/s",
        baselineValue: mbs("xarray"),
        ratio: mbs("gridcast") / mbs("xarray"),
        note: `4 boxes: xarray in-process ${ms4("xarray")}`,
      },
      {
        bench: "same boxes through the store layer alone (no HTTP: plan, read, decode, assemble), cold",
        figure: "MB/s",
        value: mbs("store"),
        baseline: "xarray+zarr same boxes MB/s",
        baselineValue: mbs("xarray"),
        ratio: mbs("store") / mbs("xarray"),
        note: "what the HTTP transfer and the server around it cost is the gap to the first row",
      },
      {
        bench: "the transport alone: a bare node:http server sending the same bytes to curl",
        figure: "ms per box",
        value: (sum.bare[0] / rounds / EXPORT_BOXES.length) * 1000,
        baseline: "gridcast export ms per box",
        baselineValue: (sum.gridcast[0] / rounds / EXPORT_BOXES.length) * 1000,
        ratio: sum.bare[0] / sum.gridcast[0],
        note: `xarray reads a box in ${((sum.xarray[0] / rounds / EXPORT_BOXES.length) * 1000).toFixed(2)} ms in-process, with no transport; xarray's read plus this transport against the export: ${((sum.xarray[0] + sum.bare[0]) / sum.gridcast[0]).toFixed(2)}`,
      },
      {
        bench: "same export with the JavaScript Blosc decoder (no addon)",
        figure: "MB/s",
        value: mbs("inline"),
        baseline: "with the addon MB/s",
        baselineValue: mbs("gridcast"),
        ratio: mbs("inline") / mbs("gridcast"),
      },
      {
        bench: "/point cold, one 1×25×90×90 Blosc-lz4 chunk, client keeping its connection (key check included)",
        figure: "p50 ms",
        value: percentile(coldKept, 50),
        baseline: "xarray point read p50 ms (in-process)",
        baselineValue: peerP50,
        ratio: peerP50 / percentile(coldKept, 50),
        target: "p50 ≤ 3 ms",
        note: `ratio = xarray/gridcast latency; p90 ${percentile(coldKept, 90).toFixed(2)} ms; /healthz through the same client: p50 ${percentile(healthzKept, 50).toFixed(2)} ms; 3 rounds of ${POINTS.length} points after one of warm-up`,
      },
      {
        bench: "same, curl per request (a new connection and client each time)",
        figure: "p50 ms",
        value: pointP50,
        baseline: "xarray point read p50 ms (in-process)",
        baselineValue: peerP50,
        ratio: peerP50 / pointP50,
        note: `/healthz through the same curl: p50 ${percentile(healthz, 50).toFixed(2)} ms`,
      },
    ];
  } finally {
    peer.close();
    await srv.close();
    await bare.close();
    await web.close();
  }
}

if (import.meta.main) {
  const { printRows } = await import("./lib.ts");
  printRows(await run(Number(process.argv[2] ?? 5)));
}
