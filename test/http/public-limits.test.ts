// Public files hold sockets and descriptors only within the same limits as the heavy routes:
// readers that stop reading a build file, an archive or a pipeline of archive tiles are dropped
// after send_stall_ms; one address cannot hold more than max_connections_per_client connections,
// nor everyone more than max_connections; a connection over either cap gets a 503 with
// Retry-After and is closed, while other addresses (health probes) keep being answered. All over
// real sockets on loopback (127.0.0.x are distinct client addresses on Linux).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Worker } from "node:worker_threads";
import { cleanup, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const STALL_MS = 400;
const PER_CLIENT = 6;
const MAX = 10;

let store: string;
let srv: TestServer;
let dir: string;
let archive: string;
let tile: string;

before(async () => {
  store = await sampleStore();
  srv = await testServer(store, {
    send_stall_ms: STALL_MS,
    max_connections_per_client: PER_CLIENT,
    max_connections: MAX,
  });
  await build({
    store,
    out: srv.running.ctx.settings.out,
    maxZoom: 2,
    groups: ["global"],
    vars: ["t2m"],
    tiles: "pmtiles",
  });
  dir = realpathSync(join(srv.running.ctx.settings.out, "current"));
  // Larger than every kernel buffer between server and client: a reader that stops stalls it.
  writeFileSync(join(dir, "big.bin"), randomBytes(24 * 1024 * 1024));
  const catalog = JSON.parse((await fetchText("/catalog.json", "127.0.0.2")).body);
  const lead = catalog.layers[0].runs[0].leads[0];
  archive = lead.tiles.replace("/{z}/{x}/{y}.png", ".pmtiles");
  tile = lead.tiles.replace("{z}/{x}/{y}", "2/1/1");
});
after(async () => {
  await srv.close();
  cleanup(store);
});

interface Staller {
  socket: Socket;
  /** The first line the server sent. */
  status: Promise<string>;
  closed: Promise<void>;
}

/** A client that sends `count` pipelined GETs of `path`, takes the first bytes, then never reads again. */
function staller(path: string, from: string, count = 1): Staller {
  const u = new URL(srv.url);
  const socket = connect({ host: u.hostname, port: Number(u.port), localAddress: from });
  socket.on("error", () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`.repeat(count));
  const status = new Promise<string>((ok, fail) => {
    setTimeout(() => fail(new Error(`${path} from ${from}: no answer`)), 20_000).unref();
    socket.once("data", (d) => {
      socket.pause();
      ok(String(d).split("\r\n")[0]);
    });
    socket.once("close", () => ok("closed"));
  });
  const closed = new Promise<void>((ok) => socket.once("close", () => ok()));
  return { socket, status, closed };
}

/** One GET on its own connection from `from`, read to the end; the connection closes after it. */
function fetchText(
  path: string,
  from: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(srv.url);
  return new Promise((ok, fail) => {
    const req = request(
      { host: u.hostname, port: u.port, path, localAddress: from, agent: false, headers: { Connection: "close" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => ok({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", fail);
    req.setTimeout(20_000, () => req.destroy(new Error(`${path} from ${from}: no answer`)));
    req.end();
  });
}

const gate = () => srv.running.ctx.metrics.connections!;

test("stalled readers of build files, archives and archive tiles are dropped after send_stall_ms", async () => {
  const before = srv.logs.length;
  const stalled = [
    staller("/big.bin", "127.0.0.1"),
    // Archives and tiles are small; a pipeline of them that is never read fills the buffers all the same.
    staller(archive, "127.0.0.1", 100),
    staller(tile, "127.0.0.1", 600),
  ];
  for (const s of stalled) assert.match(await s.status, /^HTTP\/1\.1 200/);
  // Every one is cut by the server (the client itself never closes).
  await until("stalled readers dropped", () => gate().open === 0, 20_000);
  // A paused client sees the close once it reads again.
  for (const s of stalled) s.socket.resume();
  await Promise.all(stalled.map((s) => s.closed));
  const stalls = srv.logs.slice(before).filter((l) => l.event === "response-stall");
  assert.ok(stalls.length >= stalled.length, `one response-stall per reader (${stalls.length})`);
  assert.ok(stalls.every((l) => l.route === "static"));
});

test("one address holds at most max_connections_per_client; others and health probes still get in", async () => {
  const mine = Array.from({ length: PER_CLIENT }, () => staller("/big.bin", "127.0.0.1"));
  try {
    for (const s of mine) assert.match(await s.status, /^HTTP\/1\.1 200/);
    const over = await fetchText("/healthz", "127.0.0.1");
    assert.equal(over.status, 503);
    assert.equal(over.headers["retry-after"], "1");
    assert.equal(JSON.parse(over.body).type, "/problems/busy");
    assert.match(JSON.parse(over.body).detail, /from this address/);
    // Another address is let in, and /readyz shows the connections and the limits.
    assert.equal((await fetchText("/healthz", "127.0.0.2")).status, 200);
    const ready = await fetchText("/readyz", "127.0.0.2");
    const body = JSON.parse(ready.body);
    assert.equal(body.checks.connections, `${PER_CLIENT + 1}/${MAX}`);
    assert.deepEqual(
      [body.limits.send_stall_ms, body.limits.max_connections, body.limits.max_connections_per_client],
      [STALL_MS, MAX, PER_CLIENT],
    );
    assert.equal(typeof body.limits.response_timeout_ms, "number");
    // Everyone together: at max_connections a new address is refused too.
    const others = Array.from({ length: MAX - PER_CLIENT }, (_, i) => staller("/big.bin", `127.0.0.${3 + (i % 2)}`));
    try {
      for (const s of others) assert.match(await s.status, /^HTTP\/1\.1 200/);
      const full = await fetchText("/healthz", "127.0.0.9");
      assert.equal(full.status, 503);
      assert.equal(full.headers["retry-after"], "1");
      assert.match(JSON.parse(full.body).detail, /too many open connections/);
    } finally {
      for (const s of others) s.socket.destroy();
    }
  } finally {
    for (const s of mine) s.socket.destroy();
  }
  await until("all connections closed", () => gate().open === 0);
  const metrics = await fetchText("/metrics", "127.0.0.2");
  assert.match(metrics.body, /gridcast_connections_refused_total\{cap="client"\} [1-9]/);
  assert.match(metrics.body, /gridcast_connections_refused_total\{cap="server"\} [1-9]/);
  assert.equal((await fetchText("/healthz", "127.0.0.1")).status, 200);
});

test("requests pipelined behind a dropped reader are not started: no burst of open files when it is cut", async () => {
  // A sampler on its own thread counts the descriptors open on the archive while three readers,
  // each with 150 archive GETs pipelined, stall and are cut. Each reader's request in progress
  // holds one; were the 149 queued behind it started when the connection died, they would all
  // open the archive at once.
  const real = realpathSync(join(dir, archive.replace(/^\//, "")));
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const sampler = new Worker(
    `const { workerData, parentPort } = require("node:worker_threads");
     const fs = require("node:fs");
     let peak = 0;
     while (Atomics.load(workerData.stop, 0) === 0) {
       let n = 0;
       for (const fd of fs.readdirSync("/proc/self/fd")) {
         try { if (fs.readlinkSync("/proc/self/fd/" + fd) === workerData.real) n++; } catch {}
       }
       peak = Math.max(peak, n);
     }
     parentPort.postMessage(peak);`,
    { eval: true, workerData: { stop, real } },
  );
  const peak = new Promise<number>((ok) => sampler.once("message", ok));
  const stalled = ["127.0.0.1", "127.0.0.2", "127.0.0.3"].map((from) => staller(archive, from, 150));
  for (const s of stalled) assert.match(await s.status, /^HTTP\/1\.1 200/);
  await until("stalled readers dropped", () => gate().open === 0, 20_000);
  // Give queued work, were any started, time to reach its open.
  await new Promise((r) => setTimeout(r, 300));
  Atomics.store(stop, 0, 1);
  const most = await peak;
  // And none is left for the garbage collector to find.
  const left = readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === real;
    } catch {
      return false;
    }
  });
  assert.equal(left.length, 0, "no archive descriptor left open after the readers were cut");
  await sampler.terminate();
  for (const s of stalled) s.socket.destroy();
  assert.ok(most >= 1, "the sampler saw the archive open while it was read");
  assert.ok(most <= stalled.length, `at most one open archive per connection (peak ${most})`);
});
