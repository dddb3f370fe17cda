// Server behaviour over real HTTP: problem+json everywhere, CORS, request ids and the access log,
// health/readiness/metrics, method and body rules, header limits and timeouts.
import assert from "node:assert/strict";
import { renameSync } from "node:fs";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { header_timeout_ms: 400, request_timeout_ms: 2000 });
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

function rawExchange(port: number, payload: string | Buffer, dribbleMs = 0): Promise<{ text: string; ms: number }> {
  return new Promise((ok, fail) => {
    const started = Date.now();
    const sock = connect(port, "127.0.0.1");
    const parts: Buffer[] = [];
    sock.on("data", (d) => parts.push(d));
    sock.on("error", fail);
    sock.on("close", () => ok({ text: Buffer.concat(parts).toString("latin1"), ms: Date.now() - started }));
    if (dribbleMs) {
      sock.write("GET /healthz HTTP/1.1\r\nHost: x\r\n");
      const t = setInterval(() => {
        if (sock.writable) sock.write("X-Slow: 1\r\n");
      }, dribbleMs);
      sock.on("close", () => clearInterval(t));
    } else {
      sock.write(payload);
    }
  });
}

const port = () => Number(new URL(srv.url).port);

describe("server", () => {
  test("healthz, readyz and metrics", async () => {
    assert.equal((await get(`${srv.url}/healthz`)).json().status, "ok");
    const ready = await get(`${srv.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json().checks.store, "ok");
    await get(`${srv.url}/point?lat=1&lon=1&var=t2m`, { "X-API-Key": key });
    await get(`${srv.url}/point?lat=1&lon=1&var=t2m`, { "X-API-Key": key });
    const m = (await get(`${srv.url}/metrics`)).body.toString();
    assert.match(m, /gridcast_requests_total\{route="\/point",status="200"\} 2/);
    assert.match(m, /gridcast_request_duration_seconds_bucket\{route="\/point",le="\+Inf"\} 2/);
    const ratio = Number(/^gridcast_chunk_cache_hit_ratio (\S+)$/m.exec(m)![1]);
    assert.ok(ratio > 0 && ratio < 1, `hit ratio ${ratio}`);
  });

  test("readyz says 503 while the store is gone and recovers without restart", async () => {
    const moved = `${storeDir}.away`;
    renameSync(storeDir, moved);
    try {
      const r = await get(`${srv.url}/readyz`);
      assert.equal(r.status, 503);
      assert.equal(r.json().checks.store, "unavailable");
    } finally {
      renameSync(moved, storeDir);
    }
    assert.equal((await get(`${srv.url}/readyz`)).status, 200);
  });

  test("every response has a request id; the access log has the key id but never the key", async () => {
    const r = await get(`${srv.url}/point?lat=5&lon=5&var=t2m`, { "X-API-Key": key });
    const id = r.headers.get("x-request-id");
    assert.match(id ?? "", /^[0-9a-f-]{36}$/);
    const entry = await until("access log entry", () => srv.logs.find((e) => e.request_id === id));
    assert.equal(entry.route, "/point");
    assert.equal(entry.status, 200);
    assert.equal(typeof entry.ms, "number");
    assert.match(String(entry.key_id), /^[0-9a-f]{12}$/);
    assert.ok(!JSON.stringify(srv.logs).includes(key));
  });

  test("a static 404 is logged with its path (no query); routed requests with their route", async () => {
    const miss = await get(`${srv.url}/no/such/file.png?k=v`);
    assert.equal(miss.status, 404);
    const id = miss.headers.get("x-request-id");
    const entry = await until("access log entry", () => srv.logs.find((e) => e.request_id === id));
    assert.equal(entry.status, 404);
    assert.equal(entry.route, "static");
    assert.equal(entry.path, "/no/such/file.png");
    const ok = await get(`${srv.url}/healthz`);
    const routed = await until("access log entry", () =>
      srv.logs.find((e) => e.request_id === ok.headers.get("x-request-id")),
    );
    assert.equal(routed.route, "/healthz");
    assert.equal(routed.path, undefined);
  });

  test("CORS preflight is answered without a key and names the allowed and exposed headers", async () => {
    const r = await get(
      `${srv.url}/data/datasets/forecast~global/zarr/.zmetadata`,
      {
        Origin: "http://example.test",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key, range",
      },
      "OPTIONS",
    );
    assert.equal(r.status, 204);
    assert.equal(r.headers.get("access-control-allow-origin"), "*");
    assert.match(r.headers.get("access-control-allow-headers")!, /X-API-Key/);
    assert.match(r.headers.get("access-control-allow-headers")!, /Range/);
    const g = await get(`${srv.url}/healthz`);
    for (const h of ["Content-Range", "ETag", "X-SVC-Field", "X-Credits-Charged", "X-Credits-Remaining"]) {
      assert.match(g.headers.get("access-control-expose-headers")!, new RegExp(h));
    }
  });

  test("unknown paths, wrong methods and GET bodies are problem+json", async () => {
    const nf = await get(`${srv.url}/no/such/thing`);
    assert.equal(nf.status, 404);
    assert.equal(nf.headers.get("content-type"), "application/problem+json");
    assert.equal(nf.json().status, 404);
    const post = await fetch(`${srv.url}/point?lat=1&lon=1&var=t2m`, { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD, OPTIONS");
    const body = await rawExchange(
      port(),
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    );
    assert.match(body.text, /^HTTP\/1.1 400/);
    assert.match(body.text, /application\/problem\+json/);
  });

  test("oversized headers get 431 and dribbled headers 408, both problem+json; others keep being served", async () => {
    const big = await rawExchange(port(), `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    assert.match(big.text, /^HTTP\/1.1 431/);
    assert.match(big.text, /problem\+json/);
    const slowP = rawExchange(port(), "", 100);
    assert.equal((await get(`${srv.url}/healthz`)).status, 200);
    const slow = await slowP;
    assert.match(slow.text, /^HTTP\/1.1 408/);
    assert.ok(slow.ms < 3000, `closed after ${slow.ms} ms`);
  });

  test("errors never leak paths or stacks", async () => {
    for (const u of [
      "/point?lat=1&lon=1&var=t2m&group=forecast/..%2f..",
      "/api/export/..%2f..%2fetc/npy?var=t2m",
      "/%2e%2e/%2e%2e/etc/passwd",
    ]) {
      const r = await get(`${srv.url}${u}`, { "X-API-Key": key });
      assert.ok(r.status >= 400 && r.status < 500, `${u} → ${r.status}`);
      const text = r.body.toString();
      assert.ok(!text.includes(storeDir) && !text.includes("/tmp/") && !/\bat \w+ \(/.test(text), text);
    }
  });
});
