// Load (on demand, loopback only, stops by itself): autocannon at 64 connections for 20 s each
// against /point, a tile, a Zarr chunk and an embedding .npy, with the server in its own process
// so its peak RSS (VmHWM) can be read. Zero errors and zero non-2xx are required. A last round
// drives /point again while misbehaving clients (test/python/raw_client.py: downloads reset or
// closed half-way, requests abandoned, readers that stall) hammer the .npy export beside it: the
// well-behaved clients must still see no error, and every store-reading slot must come back.
// The public-file stall round (stallRound, below) holds build files, an archive and archive tiles
// with readers that never read, on a server limited to 1024 open files.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { DEFAULTS } from "../src/config.ts";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, benchStore, load } from "./lib.ts";

const ROOT = resolve(import.meta.dirname, "..");
// The decoded-chunk cache may fill its whole budget (chunk_cache_mb, 256 by default); the rest is
// Node itself, sockets and response buffers of 64 connections.
const RSS_BUDGET_MB = DEFAULTS.chunk_cache_mb + 144;
const seconds = Number(process.argv.find((a, i) => i >= 2 && /^\d+$/.test(a)) ?? 20);

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
const lines = [
  "| target | req/s | p50 ms | p99 ms | errors | non-2xx | server peak RSS MB |",
  "|---|---|---|---|---|---|---|",
];
let failed = false;
// `--stall-only`: just the public-file stall round (it needs no key and no other server).
if (process.argv.includes("--stall-only")) {
  const good = await stallRound();
  process.stdout.write(`${lines.slice(2).join("\n")}\n${good ? "kept" : "FAILED"}\n`);
  process.exit(good ? 0 : 1);
}
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
for (const [name, u] of targets) {
  process.stderr.write(`load: ${name}\n`);
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
process.stderr.write("load: hostile mix\n");
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
await new Promise((r) => server.once("exit", r));
process.stderr.write("load: public-file stall round\n");
failed ||= !(await stallRound());
process.stdout.write(
  `${lines.join("\n")}\nRSS budget ${RSS_BUDGET_MB} MB (chunk cache ${DEFAULTS.chunk_cache_mb} MB + 144 MB): ${failed ? "EXCEEDED or errors" : "kept, no errors"}\n`,
);
process.exitCode = failed ? 1 : 0;

/**
 * Public files under stalled readers, as the red team ran them: a server limited to 1024 open
 * files, an archive build plus one large build file, and STALLERS clients (spread over eight
 * loopback addresses) that request a file, an archive or a pipeline of archive tiles and never
 * read, while a fourth address opens BURST connections at once and /healthz is probed from a
 * fifth. Passes when every probe is answered 200, the burst is capped at max_connections_per_client,
 * the process never runs out of descriptors, and every connection is gone after send_stall_ms.
 */
async function stallRound(): Promise<boolean> {
  const STALLERS = 240;
  // Spread so that each address stays under its automatic cap (a tenth of the 384 connections a
  // limit of 1024 allows): 30 each.
  const STALL_ADDRESSES = 8;
  const BURST = 200;
  const stallOut = join(BENCH_DIR, "load-stall-output");
  await runBuild({
    store,
    out: stallOut,
    maxZoom: 2,
    groups: ["forecast/global"],
    vars: ["t2m"],
    tiles: "pmtiles",
    progress: false,
    webDir: null,
  });
  const current = realpathSync(join(stallOut, "current"));
  writeFileSync(join(current, "stall.bin"), randomBytes(16 * 1024 * 1024));
  const catalog = JSON.parse(readFileSync(join(current, "catalog.json"), "utf8"));
  const leadTiles: string = catalog.layers[0].runs[0].leads[0].tiles;
  const paths: [string, number][] = [
    ["/stall.bin", 1],
    [leadTiles.replace("/{z}/{x}/{y}.png", ".pmtiles"), 60],
    [leadTiles.replace("{z}/{x}/{y}", "0/0/0"), 400],
  ];
  const srv = spawn(
    "bash",
    ["-c", 'ulimit -n 1024 && exec "$0" bin/gridcast serve --quiet --port 0', process.execPath],
    {
      cwd: ROOT,
      // Stalls held 10 s here, long enough to count them on a loaded machine.
      env: { ...env, GRIDCAST_OUT: stallOut, GRIDCAST_SEND_STALL_MS: "10000" },
    },
  );
  const base = await new Promise<string>((ok) => {
    let t = "";
    srv.stderr.on("data", (d) => {
      if (process.env.LOAD_VERBOSE) process.stderr.write(d);
      t += d;
      const m = /serving on (\S+)/.exec(t);
      if (m) ok(m[1]);
    });
  });
  const u = new URL(base);
  const fds = () => readdirSync(`/proc/${srv.pid}/fd`).length;
  const rss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${srv.pid}/status`, "utf8"))![1]) / 1024;
  const sockets: Socket[] = [];
  const open = (path: string, count: number, from: string) =>
    new Promise<string>((ok) => {
      const s = connect({ host: u.hostname, port: Number(u.port), localAddress: from });
      sockets.push(s);
      s.on("error", () => ok("error"));
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`.repeat(count));
      s.once("data", (d) => {
        s.pause();
        ok(String(d).split(" ")[1]);
      });
    });
  const probe = async () => {
    const r = await new Promise<number>((ok) => {
      const req = request(
        { host: u.hostname, port: u.port, path: "/healthz", localAddress: "127.0.0.9", agent: false },
        (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        },
      );
      req.on("error", () => ok(0));
      req.setTimeout(5000, () => req.destroy());
      req.end();
    });
    return r;
  };
  let peakFds = fds();
  const statuses = await Promise.all(
    Array.from({ length: STALLERS }, (_, i) =>
      open(...paths[i % paths.length], `127.0.0.${10 + (i % STALL_ADDRESSES)}`),
    ),
  );
  const burst = await Promise.all(Array.from({ length: BURST }, () => open("/stall.bin", 1, "127.0.0.5")));
  peakFds = Math.max(peakFds, fds());
  const probes: number[] = [];
  for (let i = 0; i < 10; i++) {
    probes.push(await probe());
    peakFds = Math.max(peakFds, fds());
    await new Promise((r) => setTimeout(r, 100));
  }
  // A fresh connection per look (fetch would reuse a pooled one the server may be closing).
  const look = (path: string) =>
    new Promise<string>((ok, fail) => {
      const req = request({ host: u.hostname, port: u.port, path, agent: false }, (res) => {
        let t = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (t += d));
        res.on("end", () => ok(t));
      });
      req.on("error", (e) => fail(new Error(`${path}: ${e.message}`)));
      req.end();
    });
  const ready = JSON.parse(await look("/readyz"));
  const held = ready.checks.connections as string;
  // Every stalled reader is dropped once send_stall_ms (2 s here) has passed.
  let left = Number.NaN;
  let looksFailed = 0;
  for (let i = 0; i < 150; i++) {
    await new Promise((r) => setTimeout(r, 200));
    peakFds = Math.max(peakFds, fds());
    // A refused or reset look counts against the round (the probes' address is never capped).
    const text = await look("/readyz").catch(() => undefined);
    if (text === undefined) {
      looksFailed++;
      continue;
    }
    const r = JSON.parse(text);
    left = Number(r.checks.connections.split("/")[0]) - 1;
    if (left === 0) break;
  }
  const after = await probe();
  const metrics = await look("/metrics");
  const refused = (cap: string) => Number(new RegExp(`refused_total\\{cap="${cap}"\\} (\\d+)`).exec(metrics)?.[1]);
  const peakRssMb = rss();
  for (const s of sockets) s.destroy();
  srv.kill("SIGTERM");
  const ok200 = statuses.filter((s) => s === "200").length;
  const burst200 = burst.filter((s) => s === "200").length;
  const probesOk = probes.filter((p) => p === 200).length;
  const good =
    ok200 === STALLERS &&
    burst200 === ready.limits.max_connections_per_client &&
    probesOk === probes.length &&
    after === 200 &&
    left === 0 &&
    looksFailed === 0 &&
    peakFds < 1024;
  lines.push(
    "",
    `public-file stall round (server limited to 1024 open files; send_stall_ms ${ready.limits.send_stall_ms}): ` +
      `${STALLERS} stalled readers of a 16 MiB build file, an archive (60 pipelined GETs) and archive tiles (400 pipelined) ` +
      `from ${STALL_ADDRESSES} addresses, ${BURST} more from one address`,
    "| stalled readers answered 200 | burst admitted / refused | connections held (readyz) | /healthz probes 200 | " +
      "refused (client cap / server cap) | peak fds | peak RSS MB | connections left after the stall limit | /readyz looks failed |",
    "|---|---|---|---|---|---|---|---|---|",
    `| ${ok200}/${STALLERS} | ${burst200} / ${BURST - burst200} | ${held} | ${probesOk}/${probes.length} then ${after} | ` +
      `${refused("client")} / ${refused("server")} | ${peakFds} | ${peakRssMb.toFixed(0)} | ${left} | ${looksFailed} |`,
  );
  return good;
}
