// Process-level behaviour: SIGTERM lets an in-flight request finish and exits 0; a PostgreSQL
// ledger that goes away gives 503 on keyed routes while public routes keep serving, and charges
// resume exactly once it returns; a build killed mid-render leaves the previous build published.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type pg from "pg";
import { currentBuild } from "../../src/pipeline/publish.ts";
import { cleanup, get, sampleStore, tempDir, testServer } from "../helpers/harness.ts";
import { PG_ADMIN, pgAdmin } from "../helpers/prereqs.ts";
import { build } from "../pipeline/build-fixture.ts";

const ROOT = join(import.meta.dirname, "../..");
const NODE = process.execPath;

let storeDir: string;
before(async () => {
  storeDir = await sampleStore();
});
after(() => cleanup(storeDir));

function waitFor(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((ok, fail) => {
    let text = "";
    const on = (d: Buffer) => {
      text += d.toString();
      const m = pattern.exec(text);
      if (m) ok(m[1] ?? m[0]);
    };
    child.stderr?.on("data", on);
    child.stdout?.on("data", on);
    child.on("exit", (code) => fail(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

describe("graceful shutdown", () => {
  let upstream: Server;
  let chunkAsked: () => void = () => {};
  before(async () => {
    // A slow object store: every chunk takes 1.5 s to arrive, metadata is instant.
    upstream = createServer((req, res) => {
      const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
      let body: Buffer;
      try {
        body = readFileSync(join(storeDir, rel));
      } catch {
        res.statusCode = 404;
        res.end();
        return;
      }
      const chunk = /\/c\//.test(rel);
      if (chunk) chunkAsked();
      setTimeout(() => res.end(body), chunk ? 1500 : 0);
    });
    await new Promise<void>((ok) => upstream.listen(0, "127.0.0.1", () => ok()));
  });
  after(() => {
    upstream.closeAllConnections();
    upstream.close();
  });

  test("SIGTERM during a slow request: the request completes, then the process exits 0", async () => {
    const dir = tempDir();
    const port = (upstream.address() as { port: number }).port;
    const env = { ...process.env, GRIDCAST_DB: join(dir, "ledger.db"), GRIDCAST_OUT: join(dir, "out") };
    const mk = spawn(NODE, ["bin/gridcast", "keys", "create", "--scopes", "weather", "--json"], { cwd: ROOT, env });
    const keyJson = await new Promise<string>((ok) => {
      let t = "";
      mk.stdout.on("data", (d) => (t += d));
      mk.on("exit", () => ok(t));
    });
    const key = JSON.parse(keyJson).key as string;
    const child = spawn(
      NODE,
      ["bin/gridcast", "serve", "--quiet", "--port", "0", "--store", `http://127.0.0.1:${port}/`],
      { cwd: ROOT, env },
    );
    try {
      const url = await waitFor(child, /serving on (http:\/\/\S+)/);
      const exited = new Promise<number | null>((ok) => child.on("exit", (code) => ok(code)));
      const started = Date.now();
      const asked = new Promise<void>((ok) => {
        chunkAsked = ok;
      });
      const pending = get(`${url}/point?lat=12&lon=34&var=t2m`, { "X-API-Key": key });
      await asked; // the request is in flight: its chunk is on the way, 1.5 s out

      child.kill("SIGTERM");
      const r = await pending;
      assert.equal(r.status, 200, r.body.toString());
      assert.ok(Date.now() - started >= 1400, "the request really was in flight");
      assert.equal(await exited, 0);
      // and it no longer accepts connections
      await assert.rejects(fetch(`${url}/healthz`));
    } finally {
      child.kill("SIGKILL");
      cleanup(dir);
    }
  });
});

describe("ledger outage (PostgreSQL)", () => {
  let admin: pg.Client | undefined;
  const db = `gridcast_outage_${process.pid}`;
  before(async () => {
    admin = await pgAdmin();
    await admin.query(`CREATE DATABASE ${db}`);
  });
  after(async () => {
    if (!admin) return;
    await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db}'`);
    await admin.query(`DROP DATABASE IF EXISTS ${db}`);
    await admin.end();
  });

  test("keyed routes 503 while the ledger is away, public routes keep serving, no credit lost", async () => {
    const url = new URL(PG_ADMIN);
    url.pathname = `/${db}`;
    const srv = await testServer(storeDir, { db: url.toString() });
    try {
      const out = join(srv.dir, "output");
      await build({ store: storeDir, out, maxZoom: 0, groups: ["forecast/global"], vars: ["t2m"] });
      const created = await srv.running.ctx.ledger.createKey({
        name: "o",
        scopes: ["weather", "embeddings"],
        credits: 5,
        rate: 0,
      });
      const H = { "X-API-Key": created.key };
      const items = (await get(`${srv.url}/api/embeddings?limit=1`, H)).json();
      const item = JSON.stringify(items).match(/"name":"([^"]+)"/)![1];
      const metered = `${srv.url}/api/embeddings/item/${item}`;
      assert.equal((await get(metered, H)).status, 200);
      assert.equal(await srv.running.ctx.ledger.balance(created.record.id), 4);

      await admin!.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
      await admin!.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db}'`);
      const down = await get(metered, H);
      assert.equal(down.status, 503);
      assert.equal(down.json().type, "/problems/ledger-unavailable");
      assert.ok(!/select|insert|postgres|pg_/i.test(down.body.toString()));
      assert.equal((await get(`${srv.url}/point?lat=1&lon=1&var=t2m`, H)).status, 503);
      assert.equal((await get(`${srv.url}/api/forecast/catalog`)).status, 200);
      assert.equal((await get(`${srv.url}/api/forecast/tile/0/0/0?layer=global.t2m`)).status, 200);
      assert.equal((await get(`${srv.url}/readyz`)).status, 503);

      await admin!.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
      assert.equal((await get(metered, H)).status, 200);
      assert.equal(await srv.running.ctx.ledger.balance(created.record.id), 3);
      const usage = await srv.running.ctx.ledger.usage(created.record.id);
      assert.equal(usage.length, 2, "one usage row per successful response, none for the outage");
    } finally {
      await srv.close();
    }
  });
});

describe("interrupted build", () => {
  test("a build killed mid-render leaves the previous build published; the next build completes", async () => {
    const out = join(tempDir(), "out");
    try {
      const first = await build({ store: storeDir, out, maxZoom: 1, groups: ["forecast/global"], vars: ["t2m"] });
      assert.equal(currentBuild(out)?.id, first.build_id);
      const child = spawn(
        NODE,
        ["bin/gridcast", "build", "--store", storeDir, "--out", out, "--max-zoom", "6", "--no-reuse"],
        { cwd: ROOT },
      );
      await waitFor(child, /(\d+)% /);
      child.kill("SIGKILL");
      await new Promise((r) => child.on("exit", r));
      assert.equal(currentBuild(out)?.id, first.build_id, "the old build is still published");
      const srv = await testServer(storeDir, { out });
      try {
        const cat = (await get(`${srv.url}/api/forecast/catalog`)).json();
        assert.equal(cat.build_id, first.build_id);
        assert.equal((await get(`${srv.url}/api/forecast/tile/1/0/0?layer=global.t2m`)).status, 200);
      } finally {
        await srv.close();
      }
      const next = await build({
        store: storeDir,
        out,
        maxZoom: 1,
        groups: ["forecast/global"],
        vars: ["t2m"],
        reuse: false,
      });
      assert.equal(currentBuild(out)?.id, next.build_id);
      assert.notEqual(next.build_id, first.build_id);
    } finally {
      cleanup(join(out, ".."));
    }
  });
});
