// The bound across keys on /data requests waiting for rate-limit tokens: real sockets held in the
// queues of two keys fill it, the next request that would wait gets 503 + Retry-After at once,
// /readyz shows it, and the places come back when the held clients leave (within header_timeout_ms). The places are shared
// fairly: one key, from however many addresses, cannot take the last share of them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { type ClientRequest, get as httpGet } from "node:http";
import { after, before, describe, test } from "node:test";
import { dataWaitersMax, openFileLimit } from "../../src/http/fd-limit.ts";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

const CAP = 5;
let storeDir: string;
let srv: TestServer;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { data_rate_waiters_max: CAP, data_rate_wait_ms: 60_000 });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

// One token every 40 s: inside data_rate_wait_ms, so a request without one waits for it (a token
// further away than the wait bound is refused 429 at once).
const RATE = { rate: 1 / 40, burst: 1 };

/** A key whose one token is spent: its next /data requests wait up to 40 s for another. */
async function drainedKey(): Promise<string> {
  const k = await srv.key(["weather"], 0, RATE);
  assert.equal((await get(`${srv.url}/data/datasets`, { "X-API-Key": k })).status, 200);
  return k;
}

/** A /data request on its own socket from `from`, left waiting; destroy the request to leave. */
function hold(k: string, from = "127.0.0.1"): ClientRequest {
  const req = httpGet(`${srv.url}/data/datasets`, { headers: { "X-API-Key": k }, agent: false, localAddress: from });
  req.on("error", () => {});
  return req;
}

/** A /data request that must be answered at once (a hung one fails the test instead of waiting). */
function answered(k: string, from = "127.0.0.1"): Promise<{ status: number; retryAfter?: string; body: string }> {
  return new Promise((ok, fail) => {
    const opts = { headers: { "X-API-Key": k }, agent: false, localAddress: from };
    const req = httpGet(`${srv.url}/data/datasets`, opts, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => ok({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"], body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error("left waiting: the cap across keys did not hold")));
    req.on("error", fail);
  });
}

const waiting = () => srv.running.ctx.metrics.dataWaiting();

describe("the cap on /data requests waiting for tokens", () => {
  test("sockets of two keys fill it; the next waiter of any key is 503 + Retry-After; /readyz shows it", async () => {
    const a = await drainedKey();
    const b = await drainedKey();
    const c = await drainedKey();
    // From two addresses: one address alone may not take the last share of the places either.
    const held = [hold(a), hold(a), hold(a), hold(b, "127.0.0.2"), hold(b, "127.0.0.2")];
    try {
      await until("five requests waiting", () => waiting() === CAP);
      for (const k of [a, c]) {
        const r = await answered(k);
        assert.equal(r.status, 503, r.body);
        assert.equal(r.retryAfter, "1");
        assert.equal(JSON.parse(r.body).type, "/problems/busy");
      }
      const ready = await get(`${srv.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.json().checks.data_waiters, `${CAP}/${CAP}`);
      const metrics = (await get(`${srv.url}/metrics`)).body.toString();
      assert.match(metrics, new RegExp(`^gridcast_data_rate_waiters ${CAP}$`, "m"));
      // A key with a token left is not held up by the others' queues.
      const free = await srv.key(["weather"], 0, RATE);
      assert.equal((await answered(free)).status, 200);
    } finally {
      for (const r of held) r.destroy();
    }
    await until("the held clients' places freed", () => waiting() === 0);
    const ready = await get(`${srv.url}/readyz`);
    assert.equal(ready.json().checks.data_waiters, `0/${CAP}`);
    // With room again, a request of a drained key waits (it is not refused).
    const again = hold(c);
    try {
      await until("a new waiter", () => waiting() === 1);
    } finally {
      again.destroy();
    }
    // A client that left looks like one that half-closed: its place is kept for at most
    // header_timeout_ms more (data-half-close.test.ts).
    await until("its place freed", () => waiting() === 0);
  });

  test("one rate-limited key from three addresses holds at most all but a share; another key's burst still waits", async () => {
    // CAP 5: a share is 2 places, so one key gets 3, and another client always finds 2.
    const greedy = await drainedKey();
    const held = ["127.0.0.3", "127.0.0.4", "127.0.0.5"].flatMap((from) => [hold(greedy, from), hold(greedy, from)]);
    try {
      await until("three of the greedy key's requests waiting", () => waiting() === CAP - 2);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(waiting(), CAP - 2, "the greedy key took no more than all but a share");
      const refused = await answered(greedy, "127.0.0.6");
      assert.equal(refused.status, 503, refused.body);
      assert.equal(refused.retryAfter, "1");
      assert.match(JSON.parse(refused.body).detail, /this key holds 3 of the 5 places .* share of 2/);
      // Another key's burst from another address waits its turn: nothing refused.
      const other = await drainedKey();
      const burst = [hold(other, "127.0.0.7"), hold(other, "127.0.0.7")];
      try {
        await until("the other key's burst waiting", () => waiting() === CAP);
      } finally {
        for (const r of burst) r.destroy();
      }
      // /readyz says the instance is full only while it is.
      await until("the burst gone", () => waiting() === CAP - 2);
      assert.equal((await get(`${srv.url}/readyz`)).status, 200);
    } finally {
      for (const r of held) r.destroy();
    }
    await until("every place freed", () => waiting() === 0);
  });

  test("the default is sized from the process's open-file limit", () => {
    const shell = execFileSync("sh", ["-c", "ulimit -n"]).toString().trim();
    const limit = openFileLimit();
    assert.equal(String(limit === Number.POSITIVE_INFINITY ? "unlimited" : limit), shell);
    assert.equal(dataWaitersMax(0, 1024), 256);
    assert.equal(dataWaitersMax(0, 20_000), 5000);
    assert.equal(dataWaitersMax(0, 1_048_576), 8192);
    assert.equal(dataWaitersMax(0, 40), 16);
    assert.equal(dataWaitersMax(300, 1024), 300);
  });
});
