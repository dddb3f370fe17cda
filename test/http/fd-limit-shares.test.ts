// At an open-file limit of 1,024 the connection caps leave room for at least ten client
// addresses: the attack was three addresses × 128 connections taking all 384 places, after
// which every other client, health probes included, got 503. This test process runs under a
// limit of 1,024 (prlimit on itself, soft and hard) and runs the in-process server with its
// default caps. A separate process shows that Node starts with its soft limit raised to the hard
// one, so the hard limit is the one the caps are sized from.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { MIN_CLIENTS_SERVED } from "../../src/http/fd-limit.ts";
import { cleanup, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

const LIMIT = 1024;
const ATTACKERS = ["127.0.1.1", "127.0.1.2", "127.0.1.3"];
const PER_ATTACKER = 128;

let storeDir: string;
let srv: TestServer;

before(async () => {
  execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${LIMIT}:${LIMIT}`]);
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** A connection from `from` that sends nothing: it holds its place until destroyed. */
function idle(from: string): Promise<Socket> {
  const u = new URL(srv.url);
  return new Promise((ok) => {
    const s = connect({ host: u.hostname, port: Number(u.port), localAddress: from });
    s.on("error", () => undefined);
    s.once("connect", () => ok(s));
  });
}

function status(path: string, from: string): Promise<number> {
  const u = new URL(srv.url);
  return new Promise((ok, fail) => {
    const req = request({ host: u.hostname, port: u.port, path, localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on("end", () => ok(res.statusCode ?? 0));
    });
    req.on("error", fail);
    req.end();
  });
}

test("three addresses opening 128 connections each leave room for ten more addresses", async () => {
  const gate = srv.running.ctx.metrics.connections!;
  assert.equal(srv.running.ctx.metrics.fdLimit, LIMIT);
  assert.equal(gate.max, 384);
  assert.equal(gate.perClient, Math.floor(384 / MIN_CLIENTS_SERVED));
  const sockets: Socket[] = [];
  try {
    for (const from of ATTACKERS) {
      for (let i = 0; i < PER_ATTACKER; i++) sockets.push(await idle(from));
    }
    await until("the attackers admitted up to their caps", () => gate.open === ATTACKERS.length * gate.perClient);
    const others = Array.from({ length: MIN_CLIENTS_SERVED }, (_, i) => `127.0.2.${i + 1}`);
    const answers = await Promise.all(others.map((from) => status("/healthz", from)));
    assert.deepEqual(
      answers,
      others.map(() => 200),
    );
    assert.equal(await status("/readyz", "127.0.2.99"), 200);
    // Each attacker's extra connections were refused for its own cap, not the server's.
    assert.ok(gate.refused.client > 0 && gate.refused.server === 0, JSON.stringify(gate.refused));
  } finally {
    for (const s of sockets) s.destroy();
  }
  await until("every connection closed", () => gate.open === 0);
});

test("a Node process starts with its soft open-file limit raised to the hard one", () => {
  const script = join(import.meta.dirname, "../../src/http/fd-limit.ts");
  const out = execFileSync("prlimit", [
    "--nofile=512:1000",
    process.execPath,
    "--input-type=module",
    "-e",
    `import { openFileLimit } from ${JSON.stringify(script)}; console.log(openFileLimit());`,
  ]).toString();
  assert.equal(Number(out), 1000);
});
