// Load (on demand, loopback only, stops by itself): autocannon at 64 connections for 20 s each
// against /point, a tile, a Zarr chunk and an embedding .npy, with the server in its own process
// so its peak RSS (VmHWM) can be read. Zero errors and zero non-2xx are required. A last round
// drives /point again while misbehaving clients (test/python/raw_client.py: downloads reset or
// closed half-way, requests abandoned, readers that stall) hammer the .npy export beside it: the
// well-behaved clients must still see no error, and every store-reading slot must come back.
// The public-file stall round (stallRound, below) holds build files, an archive and archive tiles
// with readers that never read, on a server limited to 1024 open files. The slow-reader round
// (slowReaderRound) has steady slow readers at several rates download build files and exports
// under a short send_stall_ms: none may be cut. The greedy-key round (greedyKeyRound) has one
// 0-credit weather key hold slow exports from four addresses while another client's /point and
// /readyz are measured (success rate and latency).
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
// `--fairness-only`: just the slow-reader and greedy-key rounds (issue 41), each on its own server.
if (process.argv.includes("--fairness-only")) {
  const good = (await slowReaderRound()) && (await greedyKeyRound());
  process.stdout.write(`${lines.slice(2).join("\n")}\n${good ? "kept" : "FAILED"}\n`);
  process.exit(good ? 0 : 1);
}
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
process.stderr.write("load: slow-reader round\n");
failed ||= !(await slowReaderRound());
process.stderr.write("load: greedy-key round\n");
failed ||= !(await greedyKeyRound());
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

/** A server of its own on the bench's store, build and ledger, with settings from `extra`. */
async function serveWith(extra: Record<string, string>): Promise<{ proc: ReturnType<typeof spawn>; url: string }> {
  const proc = spawn(process.execPath, ["bin/gridcast", "serve", "--quiet", "--port", "0"], {
    cwd: ROOT,
    env: { ...env, ...extra },
  });
  const url = await new Promise<string>((ok) => {
    let t = "";
    proc.stderr!.on("data", (d) => {
      if (process.env.LOAD_VERBOSE) process.stderr.write(d);
      t += d;
      const m = /serving on (\S+)/.exec(t);
      if (m) ok(m[1]);
    });
  });
  return { proc, url };
}

/** A new key on the bench's ledger (gridcast keys create), with `args`. */
async function cliKey(args: string[]): Promise<string> {
  const p = spawn(process.execPath, ["bin/gridcast", "keys", "create", ...args, "--json"], { cwd: ROOT, env });
  let t = "";
  p.stdout.on("data", (d) => (t += d));
  await new Promise((r) => p.on("exit", r));
  return JSON.parse(t).key as string;
}

/** One steady slow reader (test/helpers/paced_reader.py): its status, bytes read, seconds. */
function pacedRead(
  base: string,
  path: string,
  rate: number,
  opts: { key?: string; from?: string } = {},
): { proc: ReturnType<typeof spawn>; done: Promise<{ status: number; got: number; length: number; seconds: number }> } {
  const u = new URL(base);
  const proc = spawn(
    "/usr/bin/python3",
    [
      join(ROOT, "test/helpers/paced_reader.py"),
      u.hostname,
      u.port,
      path,
      String(rate),
      ...(opts.key ? [`X-API-Key: ${opts.key}`] : []),
    ],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...(opts.from ? { PACED_FROM: opts.from } : {}) } },
  );
  const done = new Promise<{ status: number; got: number; length: number; seconds: number }>((ok) => {
    let t = "";
    proc.stdout!.on("data", (d) => (t += d));
    proc.once("close", () => {
      try {
        const j = JSON.parse(t.trim().split("\n")[0]);
        const status = Number(String(j.head).split(" ")[1]);
        const length = Number(/content-length: (\d+)/i.exec(j.head)?.[1] ?? -1);
        ok({ status, got: j.got, length, seconds: j.seconds });
      } catch {
        ok({ status: 0, got: 0, length: -1, seconds: 0 });
      }
    });
  });
  return { proc, done };
}

/**
 * Steady slow readers at several rates (8 KiB receive buffer, so the kernel cannot soak up the
 * body), three per rate, each downloading a build file or a .npy export sized to take about
 * 12 s at its rate, on a server whose send_stall_ms is 3 s: a reader that keeps moving must
 * never be cut, however slow. Passes when every reader got its whole body.
 */
async function slowReaderRound(): Promise<boolean> {
  const RATES = [100_000, 250_000, 500_000, 1_000_000];
  const SECONDS = 12;
  const current = realpathSync(join(out, "current"));
  for (const rate of RATES) writeFileSync(join(current, `slow-${rate}.bin`), randomBytes(rate * SECONDS));
  const k = await cliKey(["--name", "slow-readers", "--scopes", "weather", "--rate", "0"]);
  const { proc, url: base } = await serveWith({ GRIDCAST_SEND_STALL_MS: "3000" });
  // A whole-globe lead of t2m is 721 × 1440 float32 (4.15 MB); a band of latitudes sized to the rate.
  const exportPath = (rate: number) => {
    const rows = Math.min(720, Math.max(8, Math.floor((rate * SECONDS) / (1440 * 4))));
    const latMax = -90 + rows * 0.25;
    return (
      "/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=1" +
      `&lat_min=-90&lat_max=${latMax}&lon_min=-180&lon_max=179.75`
    );
  };
  const readers = RATES.flatMap((rate) =>
    [0, 1, 2].map((i) => {
      const path = i === 2 ? exportPath(rate) : `/slow-${rate}.bin`;
      return { rate, kind: i === 2 ? "export .npy" : "build file", r: pacedRead(base, path, rate, { key: k }) };
    }),
  );
  const results = await Promise.all(readers.map((x) => x.r.done));
  proc.kill("SIGTERM");
  await new Promise((r) => proc.once("exit", r));
  let good = true;
  lines.push(
    "",
    `slow-reader round (send_stall_ms 3000; readers with an 8 KiB receive buffer, ${readers.length} at once)`,
    "| rate kB/s | what | status | bytes read / length | seconds | cut |",
    "|---|---|---|---|---|---|",
  );
  readers.forEach((x, i) => {
    const r = results[i];
    const whole = r.status === 200 && r.got === r.length;
    good &&= whole;
    lines.push(
      `| ${x.rate / 1000} | ${x.kind} | ${r.status} | ${r.got} / ${r.length} | ${r.seconds.toFixed(1)} | ${whole ? "no" : "YES"} |`,
    );
  });
  return good;
}

/**
 * The red team's greedy key: one 0-credit weather key holds 32 slow whole-globe exports (16 kB/s
 * each) from four addresses, on a server at the default 32 store-reading slots, while another
 * key's /point and an unauthenticated /readyz are asked every 200 ms for 15 s from another
 * address, each on a fresh connection. Reports their success rate and latency, and what the
 * greedy key got; the peer is the same probes on the same server for 5 s before the greedy key
 * starts. Passes when every /point and /readyz of the other client is 200.
 */
async function greedyKeyRound(): Promise<boolean> {
  const greedy = await cliKey(["--name", "greedy", "--scopes", "weather", "--credits", "0", "--rate", "0"]);
  const other = await cliKey(["--name", "other", "--scopes", "weather", "--rate", "0"]);
  const { proc, url: base } = await serveWith({ GRIDCAST_MAX_HEAVY_REQUESTS: "32" });
  const u = new URL(base);
  const exportPath =
    "/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2" +
    "&lat_min=-90&lat_max=90&lon_min=-180&lon_max=179.75";
  const ask = (path: string, key?: string) =>
    new Promise<{ status: number; ms: number }>((ok) => {
      const t0 = performance.now();
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path,
          localAddress: "127.0.0.30",
          agent: false,
          headers: key ? { "X-API-Key": key } : {},
        },
        (res) => {
          res.resume();
          res.on("end", () => ok({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
        },
      );
      req.on("error", () => ok({ status: 0, ms: performance.now() - t0 }));
      req.setTimeout(30_000, () => req.destroy());
      req.end();
    });
  /** /point (another key) and /readyz every 200 ms for `ms`, each on a fresh connection. */
  const probe = async (ms: number) => {
    const point: { status: number; ms: number }[] = [];
    const ready: { status: number; ms: number }[] = [];
    const end = performance.now() + ms;
    while (performance.now() < end) {
      const [p, r] = await Promise.all([ask("/point?lat=48.1&lon=11.6&var=t2m", other), ask("/readyz")]);
      point.push(p);
      ready.push(r);
      await new Promise((r) => setTimeout(r, 200));
    }
    return { point, ready };
  };
  // The peer: the same probes on the same server before the greedy key starts.
  const quiet = await probe(5_000);
  const hogs = Array.from({ length: 32 }, (_, i) =>
    pacedRead(base, exportPath, 16_000, { key: greedy, from: `127.0.0.${21 + (i % 4)}` }),
  );
  const hogStatus: number[] = [];
  for (const h of hogs) void h.done.then((d) => hogStatus.push(d.status));
  await new Promise((r) => setTimeout(r, 2000));
  const { point, ready } = await probe(15_000);
  const holding = hogStatus.length;
  for (const h of hogs) h.proc.kill("SIGKILL");
  await Promise.all(hogs.map((h) => h.done));
  proc.kill("SIGTERM");
  await new Promise((r) => proc.once("exit", r));
  const pct = (xs: number[], q: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(0) : "-";
  };
  const oks = (xs: { status: number; ms: number }[]) => xs.filter((x) => x.status === 200).map((x) => x.ms);
  const row = (name: string, xs: { status: number; ms: number }[], peer: { status: number; ms: number }[]) => {
    const ok = oks(xs);
    const ratio = Number(pct(ok, 0.5)) / Math.max(1, Number(pct(oks(peer), 0.5)));
    return (
      `| ${name} | ${ok.length}/${xs.length} | ${pct(ok, 0.5)} | ${pct(ok, 0.99)} | ` +
      `${oks(peer).length}/${peer.length} | ${pct(oks(peer), 0.5)} | ${pct(oks(peer), 0.99)} | ${ratio.toFixed(2)} | ` +
      `${[...xs, ...peer]
        .filter((x) => x.status !== 200)
        .map((x) => `${x.status || "no answer"} after ${x.ms.toFixed(0)} ms`)
        .join(", ")} |`
    );
  };
  const refusedGreedy = hogStatus.filter((s) => s === 503).length;
  lines.push(
    "",
    "greedy-key round (max_heavy_requests 32): one 0-credit weather key, 32 whole-globe exports read at 16 kB/s " +
      `from 4 addresses; ${32 - holding} still downloading when the probes ended, ` +
      `${refusedGreedy} refused 503 (its share)`,
    "| other client's request (every 200 ms) | 200s, greedy key holding (15 s) | p50 ms | p99 ms | " +
      "200s, before it (peer, 5 s) | p50 ms | p99 ms | p50 ratio holding / before | not 200 |",
    "|---|---|---|---|---|---|---|---|---|",
    row("/point (another key)", point, quiet.point),
    row("/readyz", ready, quiet.ready),
  );
  return [...point, ...ready, ...quiet.point, ...quiet.ready].every((x) => x.status === 200);
}
