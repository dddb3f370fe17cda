// A /data client that half-closes its connection after the request (shuts down its sending side,
// as some scripted clients do) and finds its key's rate-limit bucket empty is answered like any
// other client: it waits for its token, for up to header_timeout_ms after the half-close (a client
// that is gone for good looks the same from the server, and must not hold one of the bounded
// waiter places for data_rate_wait_ms), and past that gets 429 with Retry-After. Real sockets over
// loopback; a real server and ledger.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

const HEADER_TIMEOUT_MS = 4000;
let storeDir: string;
let srv: TestServer;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { header_timeout_ms: HEADER_TIMEOUT_MS, data_rate_wait_ms: 60_000 });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** Sends a /data request, half-closes, and reads the reply to the server's end. */
function halfClosed(key: string): Promise<{ reply: string; ms: number }> {
  const u = new URL(srv.url);
  const t0 = performance.now();
  return new Promise((ok, fail) => {
    const s = connect(Number(u.port), u.hostname);
    let reply = "";
    s.on("data", (d) => (reply += d));
    s.on("error", fail);
    const giveUp = setTimeout(() => s.destroy(new Error("no answer within 30 s")), 30_000);
    s.on("close", () => {
      clearTimeout(giveUp);
      ok({ reply, ms: performance.now() - t0 });
    });
    s.end(`GET /data/datasets HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`);
  });
}

async function drained(rate: number): Promise<string> {
  const k = await srv.key(["weather"], 0, { rate, burst: 1 });
  assert.equal((await get(`${srv.url}/data/datasets`, { "X-API-Key": k })).status, 200);
  return k;
}

test("a half-closed /data request whose token comes within the header timeout waits for it and gets 200", async (t) => {
  // One token a second: the next one is at most a second away.
  const k = await drained(1);
  const r = await halfClosed(k);
  t.diagnostic(`answered after ${Math.round(r.ms)} ms`);
  assert.match(r.reply, /^HTTP\/1\.1 200 /, r.reply.slice(0, 400));
  assert.match(r.reply, /"datasets"/);
});

test("a half-closed /data request whose token is further away gets 429 + Retry-After, and frees its place", async (t) => {
  // One token every 40 s: inside data_rate_wait_ms, so a connected client would wait for it.
  const k = await drained(1 / 40);
  const pending = halfClosed(k);
  await until("the request waiting", () => srv.running.ctx.metrics.dataWaiting() === 1);
  const r = await pending;
  t.diagnostic(`answered after ${Math.round(r.ms)} ms`);
  assert.match(r.reply, /^HTTP\/1\.1 429 /, r.reply.slice(0, 400));
  const retry = Number(/\r\nretry-after: (\d+)\r\n/i.exec(r.reply)?.[1]);
  assert.ok(retry >= 1 && retry <= 40, `Retry-After ${retry}`);
  assert.match(r.reply, /application\/problem\+json/);
  // It waited out the header timeout (not refused at once), and not the 40 s to its token.
  assert.ok(r.ms >= HEADER_TIMEOUT_MS - 100, `answered after ${r.ms} ms`);
  assert.equal(srv.running.ctx.metrics.dataWaiting(), 0);
});
