// Load (on demand, loopback only, stops by itself): autocannon at 64 connections for 20 s each
// against /point, a tile, a Zarr chunk and an embedding .npy, with the server in its own process
// so its peak RSS (VmHWM) can be read. Zero errors and zero non-2xx are required. A last round
// drives /point again while misbehaving clients (test/python/raw_client.py: downloads reset or
// closed half-way, requests abandoned, readers that stall) hammer the .npy export beside it: the
// well-behaved clients must still see no error, and every store-reading slot must come back.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEFAULTS } from "../src/config.ts";
import { runBuild } from "../src/render/build/run.ts";
import { BENCH_DIR, benchStore, load } from "./lib.ts";

const ROOT = resolve(import.meta.dirname, "..");
// The decoded-chunk cache may fill its whole budget (chunk_cache_mb, 256 by default); the rest is
// Node itself, sockets and response buffers of 64 connections.
const RSS_BUDGET_MB = DEFAULTS.chunk_cache_mb + 144;
const seconds = Number(process.argv[2] ?? 20);

const store = await benchStore("demo");
const out = join(BENCH_DIR, "load-output");
const db = join(BENCH_DIR, `load-${process.pid}.db`);
await runBuild({ store, out, maxZoom: 3, groups: ["forecast/global"], vars: ["t2m"], progress: false, webDir: null });
const env = {
  ...process.env,
  GRIDCAST_STORE: store,
  GRIDCAST_OUT: out,
  GRIDCAST_DB: db,
  GRIDCAST_MAX_HEAVY_REQUESTS: "256",
  GRIDCAST_SEND_STALL_MS: "2000",
};
const mk = spawn(
  process.execPath,
  ["bin/gridcast", "keys", "create", "--credits", "100000000", "--rate", "0", "--json"],
  {
    cwd: ROOT,
    env,
  },
);
let text = "";
mk.stdout.on("data", (d) => (text += d));
await new Promise((r) => mk.on("exit", r));
const key = JSON.parse(text).key as string;

const server = spawn(process.execPath, ["bin/gridcast", "serve", "--quiet", "--port", "0"], { cwd: ROOT, env });
const url = await new Promise<string>((ok) => {
  let t = "";
  server.stderr.on("data", (d) => {
    t += d;
    const m = /serving on (\S+)/.exec(t);
    if (m) ok(m[1]);
  });
});
const H = { "X-API-Key": key };
const items = (await (
  await fetch(`${url}/api/embeddings?limit=1&prefix=geofm/rf/v1.2/base/tokens`, { headers: H })
).json()) as {
  items: { name: string }[];
};
const item = items.items[0].name;
const targets: [string, string][] = [
  ["/point", `${url}/point?lat=48.1&lon=11.6&var=t2m`],
  ["tile", `${url}/api/forecast/tile/3/4/2?layer=global.t2m`],
  ["zarr chunk", `${url}/data/datasets/forecast~global/zarr/t2m/0.0.1.1`],
  ["embedding npy", `${url}/api/embeddings/npy/${item}?y_stop=16&x_stop=16`],
];
const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) / 1024;
const lines = [
  "| target | req/s | p50 ms | p99 ms | errors | non-2xx | server peak RSS MB |",
  "|---|---|---|---|---|---|---|",
];
let failed = false;
for (const [name, u] of targets) {
  const first = await fetch(u, { headers: H });
  if (first.status !== 200) throw new Error(`${name}: ${first.status} ${await first.text()}`);
  await first.arrayBuffer();
  const r = await load(u, { headers: H, connections: 64, seconds });
  const rss = peakRss();
  failed ||= r.errors > 0 || r.non2xx > 0 || rss > RSS_BUDGET_MB;
  lines.push(`| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${rss.toFixed(0)} |`);
}
// The hostile mix: misbehaving clients on the export route beside well-behaved /point load.
const exportPath =
  "/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2" +
  "&lat_min=-90&lat_max=90&lon_min=-180&lon_max=179.75";
const hostUrl = new URL(url);
const MODES = ["reset", "close", "abandon", "stall"] as const;
let misbehaved = 0;
let mixing = true;
const misbehave = async (slot: number) => {
  for (let i = slot; mixing; i++) {
    const mode = MODES[i % MODES.length];
    const c = spawn(
      "/usr/bin/python3",
      [join(ROOT, "test/python/raw_client.py"), hostUrl.hostname, hostUrl.port, exportPath, mode, `X-API-Key: ${key}`],
      { stdio: "ignore" },
    );
    // A stalled reader is left hanging for longer than send_stall_ms, then killed.
    const kill = setTimeout(() => c.kill("SIGKILL"), mode === "stall" ? 4000 : 30_000);
    await new Promise((r) => c.on("close", r));
    clearTimeout(kill);
    misbehaved++;
  }
};
const mix = Array.from({ length: 8 }, (_, i) => misbehave(i));
const well = await load(targets[0][1], { headers: H, connections: 32, seconds });
mixing = false;
await Promise.all(mix);
const gauge = async () =>
  Number(/gridcast_heavy_requests_in_flight (\d+)/.exec(await (await fetch(`${url}/metrics`)).text())![1]);
let inFlight = await gauge();
for (let i = 0; i < 100 && inFlight > 0; i++) {
  await new Promise((r) => setTimeout(r, 100));
  inFlight = await gauge();
}
failed ||= well.errors > 0 || well.non2xx > 0 || inFlight !== 0;
lines.push(
  `| /point beside ${misbehaved} misbehaving export clients | ${well.rps.toFixed(0)} | ${well.p50} | ${well.p99} | ${well.errors} | ${well.non2xx} | ${peakRss().toFixed(0)} |`,
);
lines.push(`\nstore-reading slots in use after the hostile mix: ${inFlight} (must be 0)`);
server.kill("SIGTERM");
process.stdout.write(
  `${lines.join("\n")}\nRSS budget ${RSS_BUDGET_MB} MB (chunk cache ${DEFAULTS.chunk_cache_mb} MB + 144 MB): ${failed ? "EXCEEDED or errors" : "kept, no errors"}\n`,
);
process.exitCode = failed ? 1 : 0;
