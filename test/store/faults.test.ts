// Faults at runtime: a group removed under a running server, corrupt and truncated chunks, an
// HTTP store that stops answering. Affected requests get 503/500 problem+json naming no path;
// other routes keep working; recovery needs no restart.
import assert from "node:assert/strict";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { get, sampleServer, type TestServer, testServer } from "../helpers/harness.ts";

// A sample store served for this file, with a weather key.
const sample = sampleServer(["weather"]);

const point = (q: string) => get(`${sample.srv.url}/point?${q}`, { "X-API-Key": sample.key });

function assertClean(body: Buffer): void {
  const t = body.toString();
  assert.ok(!t.includes(sample.storeDir) && !t.includes("/tmp") && !t.includes("node:"), t);
}

describe("store faults", () => {
  test("a group removed at runtime gives 503, other groups keep serving, and it recovers", async () => {
    assert.equal((await point("lat=10&lon=100&var=u10")).status, 200); // discover the global group
    const dir = join(sample.storeDir, "forecast", "global");
    renameSync(dir, `${dir}.gone`);
    sample.srv.running.ctx.store.cache.invalidate();
    try {
      const r = await point("lat=-40&lon=100&var=u10");
      assert.equal(r.status, 503);
      assert.equal(r.headers.get("content-type"), "application/problem+json");
      assertClean(r.body);
      // the alps patch still answers through its own group
      assert.equal((await point("lat=46.5&lon=10.1&var=t2m&group=forecast/alps")).status, 200);
      assert.equal((await get(`${sample.srv.url}/healthz`)).status, 200);
    } finally {
      renameSync(`${dir}.gone`, dir);
    }
    assert.equal((await point("lat=-40&lon=100&var=u10")).status, 200);
  });

  test("a corrupt or truncated chunk gives 500 problem+json without a path, and repair heals it", async () => {
    const chunk = join(sample.storeDir, "forecast", "global", "msl", "c", "0", "0", "0", "0");
    const good = readFileSync(chunk);
    try {
      writeFileSync(chunk, Buffer.from("this is not zstd"));
      const r = await point("lat=80&lon=10&var=msl&run=0");
      assert.equal(r.status, 500);
      assert.equal(r.json().type, "/problems/corrupt-data");
      assertClean(r.body);
      writeFileSync(chunk, good.subarray(0, good.length >> 1));
      sample.srv.running.ctx.store.cache.invalidate();
      const t = await point("lat=80&lon=10&var=msl&run=0");
      assert.equal(t.status, 500);
      assertClean(t.body);
    } finally {
      writeFileSync(chunk, good);
    }
    assert.equal((await point("lat=80&lon=10&var=msl&run=0")).status, 200);
  });
});

describe("http store faults", () => {
  let upstream: Server;
  let mode: "ok" | "hang" | "error" = "ok";
  let httpSrv: TestServer;
  /** Requests the store received while hanging or failing, by path (README: 5xx retried once, timeouts not). */
  let asked = new Map<string, number>();

  before(async () => {
    upstream = createServer((req, res) => {
      if (mode !== "ok") asked.set(req.url ?? "", (asked.get(req.url ?? "") ?? 0) + 1);
      if (mode === "hang") return; // never answers
      if (mode === "error") {
        res.statusCode = 500;
        res.end("boom");
        return;
      }
      const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
      try {
        const body = readFileSync(join(sample.storeDir, rel));
        res.end(body);
      } catch {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((ok) => upstream.listen(0, "127.0.0.1", () => ok()));
    const port = (upstream.address() as { port: number }).port;
    httpSrv = await testServer(`http://127.0.0.1:${port}/`, { store_timeout_ms: 300 });
  });
  after(async () => {
    await httpSrv.close();
    upstream.closeAllConnections();
    upstream.close();
  });

  test("reads over HTTP, 503 when it hangs or fails, and recovery when it answers again", async () => {
    const k = await httpSrv.key(["weather"]);
    const H = { "X-API-Key": k };
    const ok = await get(`${httpSrv.url}/point?lat=30&lon=30&var=t2m`, H);
    assert.equal(ok.status, 200, ok.body.toString());
    const direct = await point("lat=30&lon=30&var=t2m");
    assert.deepEqual(ok.json().values, direct.json().values);
    httpSrv.running.ctx.store.cache.invalidate();
    mode = "hang";
    asked = new Map();
    const hung = await get(`${httpSrv.url}/point?lat=-30&lon=30&var=t2m`, H);
    assert.equal(hung.status, 503);
    assertClean(hung.body);
    // A read that timed out is not asked again.
    assert.ok(asked.size > 0);
    assert.deepEqual([...new Set(asked.values())], [1], `hung reads asked once each: ${[...asked]}`);
    mode = "error";
    asked = new Map();
    const failed = await get(`${httpSrv.url}/point?lat=-30&lon=31&var=t2m`, H);
    assert.equal(failed.status, 503);
    // A 5xx is retried once, then the request fails.
    assert.ok(asked.size > 0);
    assert.deepEqual([...new Set(asked.values())], [2], `failed reads asked twice each: ${[...asked]}`);
    mode = "ok";
    assert.equal((await get(`${httpSrv.url}/point?lat=-30&lon=30&var=t2m`, H)).status, 200);
  });
});
