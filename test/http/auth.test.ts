// The gate in front of every keyed route, generated from the route list itself: each keyed route
// × {no key, malformed, unknown, revoked, expired, wrong scope, key in the query string}.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { allRoutes } from "../../src/http/routes/index.ts";
import { KeyCachingLedger } from "../../src/ledger/key-cache.ts";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
const keys: Record<string, string> = {};

const SAMPLE_PARAMS: Record<string, string> = {
  id: "forecast~global",
  name: "geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32TNS",
  key: ".zmetadata",
  z: "0",
  x: "0",
  y: "0",
};

function samplePath(path: string): string {
  return path.replace(/\{(\w+)\+?\}/g, (_, n: string) => SAMPLE_PARAMS[n] ?? "x");
}

before(async () => {
  storeDir = await sampleStore();
  // Refusal without waiting (rate_wait_ms 0): the pacing of keyed routes is in rate-pace.test.ts.
  srv = await testServer(storeDir, { rate_wait_ms: 0 });
  const ledger = srv.running.ctx.ledger;
  keys.weather = await srv.key(["weather"]);
  keys.embeddings = await srv.key(["embeddings"]);
  const revoked = await ledger.createKey({ name: "r", scopes: ["weather", "embeddings"], credits: 10, rate: 0 });
  await ledger.revokeKey(revoked.record.id);
  keys.revoked = revoked.key;
  const expired = await ledger.createKey({
    name: "e",
    scopes: ["weather", "embeddings"],
    credits: 10,
    rate: 0,
    expiresAt: new Date(Date.now() - 60_000),
  });
  keys.expired = expired.key;
  keys.unknown = keys.weather.replace(/_[0-9a-f]{12}_/, "_000000000000_");
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

describe("auth matrix", () => {
  const keyed = allRoutes().filter((r) => r.auth !== "public");

  test("there are keyed routes for both scopes", () => {
    assert.ok(keyed.some((r) => r.auth === "weather"));
  });

  for (const def of keyed) {
    test(`${def.path} (${def.auth})`, async () => {
      const url = `${srv.url}${samplePath(def.path)}`;
      const wrongScope = def.auth === "weather" ? keys.embeddings : keys.weather;
      const cases: [string, Record<string, string>, string, number][] = [
        ["no key", {}, "", 401],
        ["malformed", { "X-API-Key": "not-a-key" }, "", 401],
        ["unknown", { "X-API-Key": keys.unknown }, "", 401],
        ["revoked", { "X-API-Key": keys.revoked }, "", 401],
        ["expired", { "X-API-Key": keys.expired }, "", 401],
        ["wrong scope", { "X-API-Key": wrongScope }, "", 403],
        ["key in query", {}, `?api_key=${encodeURIComponent(keys.weather)}`, 401],
      ];
      for (const [label, headers, query, status] of cases) {
        const r = await get(url + (url.includes("?") ? query.replace("?", "&") : query), headers);
        assert.equal(r.status, status, `${label}: ${r.body.toString()}`);
        assert.equal(r.headers.get("content-type"), "application/problem+json", label);
        if (status === 401) assert.equal(r.headers.get("www-authenticate"), 'ApiKey header="X-API-Key"', label);
        if (label === "key in query") assert.match(r.json().detail, /X-API-Key header/);
      }
    });
  }
});

describe("rate limit", () => {
  // A slow refill (one token every 2 s) keeps the test independent of machine load.
  test("429 with Retry-After and RateLimit headers past the rate, success again after waiting", async () => {
    const created = await srv.running.ctx.ledger.createKey({
      name: "slow",
      scopes: ["weather"],
      credits: 0,
      rate: 0.5,
      burst: 2,
    });
    const H = { "X-API-Key": created.key };
    const url = `${srv.url}/point?lat=1&lon=1&var=t2m`;
    assert.equal((await get(url, H)).status, 200);
    const second = await get(url, H);
    assert.equal(second.status, 200);
    assert.match(second.headers.get("ratelimit") ?? "", /limit=2/);
    assert.equal(second.headers.get("ratelimit-policy"), "2;w=4");
    const third = await get(url, H);
    assert.equal(third.status, 429);
    const wait = Number(third.headers.get("retry-after"));
    assert.ok(wait >= 1, `retry-after ${wait}`);
    assert.equal(third.json().retry_after, wait);
    // The access log line of the refusal names the key it refused (an operator's first question).
    const id = third.headers.get("x-request-id");
    const line = await until("the 429's log line", () => srv.logs.find((l) => l.request_id === id && l.status === 429));
    assert.equal(line.key_id, created.record.id);
    // Retry-After is rounded up to whole seconds; the margin absorbs timer slack only.
    await new Promise((r) => setTimeout(r, wait * 1000 + 100));
    assert.equal((await get(url, H)).status, 200);
  });
});

describe("keyed hot path", () => {
  test("repeated requests with one key reach the ledger for the key once, not per request", async () => {
    const ledger = srv.running.ctx.ledger as KeyCachingLedger;
    assert.ok(ledger instanceof KeyCachingLedger, "the server's ledger is behind the key cache");
    const key = await srv.key(["weather"]);
    const before = ledger.lookups;
    const url = `${srv.url}/point?lat=1&lon=1&var=t2m`;
    const results = await Promise.all(Array.from({ length: 40 }, () => get(url, { "X-API-Key": key })));
    for (let i = 0; i < 20; i++) results.push(await get(url, { "X-API-Key": key }));
    assert.ok(
      results.every((r) => r.status === 200),
      results.map((r) => r.status).join(","),
    );
    assert.equal(ledger.lookups - before, 1);
  });
});
