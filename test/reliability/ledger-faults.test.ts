// The ledger in trouble, over real HTTP: a sqlite write lock held by another process, a
// PostgreSQL table lock, a PostgreSQL link that stops answering, and a PostgreSQL that is not
// there when the server starts. Public routes must keep answering promptly throughout; keyed
// routes answer 503 within the ledger's deadline (never hang); credits stay exact.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { LEDGER_TIMEOUT_MS } from "../../src/ledger/guard.ts";
import { openLedger } from "../../src/ledger/open.ts";
import { RETRY_MS } from "../../src/ledger/reopening.ts";
import { cleanup, type Got, get, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { TcpProxy } from "../helpers/tcp-proxy.ts";
import { build } from "../pipeline/build-fixture.ts";

const PG_ADMIN = process.env.GRIDCAST_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
// Generous against machine load, yet far below the lock durations below.
const PROMPT_MS = 1000;
const LOCK_MS = 6000;

let storeDir: string;
before(async () => {
  storeDir = await sampleStore();
});
after(() => cleanup(storeDir));

async function timed(url: string, headers: Record<string, string> = {}): Promise<Got & { ms: number }> {
  const t0 = performance.now();
  const r = await get(url, headers);
  return { ...r, ms: performance.now() - t0 };
}

/** Builds the map layer and returns a metered URL (an embedding item) and its key headers. */
async function prepare(srv: TestServer, credits = 5) {
  await build({
    store: storeDir,
    out: join(srv.dir, "output"),
    maxZoom: 0,
    groups: ["forecast/global"],
    vars: ["t2m"],
  });
  const created = await srv.running.ctx.ledger.createKey({
    name: "faults",
    scopes: ["weather", "embeddings"],
    credits,
    rate: 0,
  });
  const H = { "X-API-Key": created.key };
  const listing = await get(`${srv.url}/api/embeddings?limit=1`, H);
  assert.equal(listing.status, 200, listing.body.toString());
  const item = JSON.stringify(listing.json()).match(/"name":"([^"]+)"/)![1];
  return { H, id: created.record.id, metered: `${srv.url}/api/embeddings/item/${item}` };
}

/** Polls public routes until `done` resolves; every answer must be prompt. Returns how many. */
async function publicStaysUp(srv: TestServer, done: Promise<unknown>, during: () => boolean): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true));
  let whileHeld = 0;
  while (!finished) {
    for (const path of ["/healthz", "/api/forecast/tile/0/0/0?layer=global.t2m"]) {
      const held = during();
      const r = await timed(`${srv.url}${path}`);
      assert.equal(r.status, 200, `${path}: ${r.body.toString()}`);
      assert.ok(r.ms < PROMPT_MS, `${path} took ${Math.round(r.ms)} ms while the ledger was locked`);
      if (held && during()) whileHeld++;
    }
    await sleep(100);
  }
  return whileHeld;
}

describe("sqlite ledger: another process holds the write lock", { timeout: 60_000 }, () => {
  test("public routes answer promptly, metered routes 503 within the deadline, credits exact", async () => {
    const srv = await testServer(storeDir);
    let locker: ChildProcess | undefined;
    try {
      const { H, id, metered } = await prepare(srv);
      assert.equal((await get(metered, H)).status, 200);
      const point = `${srv.url}/point?lat=1&lon=1&var=t2m`;
      assert.equal((await get(point, H)).status, 200);

      // Another process (a CLI run, a backup, a second server) takes the write lock and sits on it.
      const script = `
        const { DatabaseSync } = require("node:sqlite");
        const db = new DatabaseSync(process.argv[1]);
        db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE; UPDATE keys SET name = name");
        process.stdout.write("locked\\n");
        setTimeout(() => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); }, ${LOCK_MS});`;
      locker = spawn(process.execPath, ["-e", script, join(srv.dir, "ledger.db")], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let held = false;
      const released = new Promise<void>((ok) => {
        locker!.stdout!.on("data", (d: Buffer) => {
          if (d.includes("locked")) held = true;
          if (d.includes("released")) {
            held = false;
            ok();
          }
        });
      });
      while (!held) await sleep(20);

      // A metered request needs the write lock to charge: it must fail within the deadline.
      const charged = timed(metered, H);
      const whileHeld = await publicStaysUp(srv, released, () => held);
      const c = await charged;
      assert.equal(c.status, 503, c.body.toString());
      assert.equal(c.json().type, "/problems/ledger-unavailable");
      assert.ok(c.ms < LEDGER_TIMEOUT_MS + PROMPT_MS * 2, `503 after ${Math.round(c.ms)} ms`);
      assert.ok(whileHeld >= 4, `only ${whileHeld} public answers while the lock was held`);

      // After the release: the refused request was not charged, the next one is, exactly once.
      const after = await get(metered, H);
      assert.equal(after.status, 200, after.body.toString());
      assert.equal(await srv.running.ctx.ledger.balance(id), 3);
      assert.equal((await srv.running.ctx.ledger.usage(id)).length, 2);
    } finally {
      locker?.kill("SIGKILL");
      await srv.close();
    }
  });

  test("while a charge waits for the lock, checks of new keys still answer promptly", async () => {
    const srv = await testServer(storeDir);
    let locker: ChildProcess | undefined;
    try {
      const { H, metered } = await prepare(srv);
      // Keys never used yet, so their checks cannot come from the key cache.
      const fresh = await Promise.all(Array.from({ length: 5 }, () => srv.key(["weather", "embeddings"])));
      const script = `
        const { DatabaseSync } = require("node:sqlite");
        const db = new DatabaseSync(process.argv[1]);
        db.exec("BEGIN IMMEDIATE; UPDATE keys SET name = name");
        process.stdout.write("locked\\n");
        setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${LOCK_MS});`;
      locker = spawn(process.execPath, ["-e", script, join(srv.dir, "ledger.db")], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise((ok) => locker!.stdout!.once("data", ok));
      const waiting = timed(metered, H); // its charge now waits for the write lock
      await sleep(200);
      for (const key of fresh) {
        const r = await timed(`${srv.url}/point?lat=1&lon=1&var=t2m`, { "X-API-Key": key });
        assert.equal(r.status, 200, r.body.toString());
        assert.ok(r.ms < PROMPT_MS, `/point with a new key took ${Math.round(r.ms)} ms`);
      }
      assert.equal((await waiting).status, 503);
    } finally {
      locker?.kill("SIGKILL");
      await srv.close();
    }
  });
});

/** A scratch database on the test server, or null (skip) when PostgreSQL is not reachable here. */
async function scratch(): Promise<{ url: URL; admin: pg.Client; drop: () => Promise<void> } | null> {
  const admin = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (e) {
    if (process.env.CI === "true") throw e;
    return null;
  }
  const name = `gridcast_faults_${randomBytes(5).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url,
    admin,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

describe("PostgreSQL ledger faults", { timeout: 60_000 }, () => {
  test("a table locked by another session: 503 within the deadline, public routes unaffected", async (t) => {
    const db = await scratch();
    if (!db) return t.skip("PostgreSQL is not reachable");
    const srv = await testServer(storeDir, { db: db.url.toString() });
    const locker = new pg.Client({ connectionString: db.url.toString() });
    try {
      const { H, id, metered } = await prepare(srv);
      assert.equal((await get(metered, H)).status, 200);
      await locker.connect();
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE keys IN ACCESS EXCLUSIVE MODE");
      const lockedAt = performance.now();
      const refused = timed(metered, H);
      const done = refused.then(() => sleep(200));
      await publicStaysUp(srv, done, () => true);
      const r = await refused;
      assert.equal(r.status, 503, r.body.toString());
      assert.equal(r.json().type, "/problems/ledger-unavailable");
      assert.ok(!/lock|statement|cancel|postgres/i.test(r.body.toString()), r.body.toString());
      assert.ok(r.ms < 2 * LEDGER_TIMEOUT_MS + PROMPT_MS, `503 after ${Math.round(r.ms)} ms`);
      assert.ok(performance.now() - lockedAt < LOCK_MS, "the lock was still held when the 503 came");
      await locker.query("ROLLBACK");
      assert.equal((await get(metered, H)).status, 200);
      assert.equal(await srv.running.ctx.ledger.balance(id), 3);
      assert.equal((await srv.running.ctx.ledger.usage(id)).length, 2);
    } finally {
      await locker.end().catch(() => {});
      await srv.close();
      await db.drop();
    }
  });

  test("a link that stops answering mid-connection: 503 within the deadline, recovery after", async (t) => {
    const db = await scratch();
    if (!db) return t.skip("PostgreSQL is not reachable");
    const proxy = await TcpProxy.reserve({ host: db.url.hostname, port: Number(db.url.port || 5432) });
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const srv = await testServer(storeDir, { db: viaProxy.toString() });
    try {
      const { H, id, metered } = await prepare(srv);
      assert.equal((await get(metered, H)).status, 200);
      proxy.freeze();
      const r = await timed(metered, H);
      assert.equal(r.status, 503, r.body.toString());
      assert.ok(r.ms < 2 * LEDGER_TIMEOUT_MS + PROMPT_MS, `503 after ${Math.round(r.ms)} ms`);
      assert.equal((await timed(`${srv.url}/healthz`)).status, 200);
      proxy.thaw();
      let ok: Got | undefined;
      for (let i = 0; i < 20 && ok?.status !== 200; i++) {
        ok = await get(metered, H);
        if (ok.status !== 200) await sleep(250);
      }
      assert.equal(ok?.status, 200, ok?.body.toString());
      // The frozen charge was cancelled server-side or never arrived: exactly two charges landed.
      const direct = await openLedger(db.url.toString());
      try {
        assert.equal(await direct.balance(id), 3);
        assert.equal((await direct.usage(id)).length, 2);
      } finally {
        await direct.close();
      }
    } finally {
      await srv.close();
      await proxy.stop();
      await db.drop();
    }
  });

  test("unreachable at start-up: serve starts, public routes answer, keyed 503 until it returns", async (t) => {
    const db = await scratch();
    if (!db) return t.skip("PostgreSQL is not reachable");
    // The schema and a key, written directly; the server will reach the database through a relay
    // that is not listening yet.
    const direct = await openLedger(db.url.toString());
    const { key, record } = await direct.createKey({ name: "late", scopes: ["weather"], credits: 0, rate: 0 });
    await direct.close();
    const proxy = await TcpProxy.reserve({ host: db.url.hostname, port: Number(db.url.port || 5432) });
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const srv = await testServer(storeDir, { db: viaProxy.toString() });
    try {
      assert.ok(
        srv.logs.some((l) => l.event === "ledger-unavailable"),
        "start-up logs the missing ledger",
      );
      await build({
        store: storeDir,
        out: join(srv.dir, "output"),
        maxZoom: 0,
        groups: ["forecast/global"],
        vars: ["t2m"],
      });
      assert.equal((await get(`${srv.url}/healthz`)).status, 200);
      assert.equal((await get(`${srv.url}/api/forecast/tile/0/0/0?layer=global.t2m`)).status, 200);
      const ready = await get(`${srv.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.json().checks.ledger, "unavailable");
      const point = `${srv.url}/point?lat=1&lon=1&var=t2m`;
      const down = await timed(point, { "X-API-Key": key });
      assert.equal(down.status, 503);
      assert.equal(down.json().type, "/problems/ledger-unavailable");
      assert.ok(down.ms < PROMPT_MS, `refusal took ${Math.round(down.ms)} ms`);

      await proxy.start();
      await sleep(RETRY_MS + 100);
      const up = await get(point, { "X-API-Key": key });
      assert.equal(up.status, 200, up.body.toString());
      assert.equal((await get(`${srv.url}/readyz`)).status, 200);
      assert.ok(srv.logs.some((l) => l.event === "ledger-available"));
      assert.equal((await srv.running.ctx.ledger.getKey(record.id))?.id, record.id);
    } finally {
      await srv.close();
      await proxy.stop();
      await db.drop();
    }
  });
});

describe("gridcast serve with a ledger that cannot be reached", { timeout: 60_000 }, () => {
  test("starts, says so on stderr even when quiet, serves public routes, /readyz names the ledger", async () => {
    const proxy = await TcpProxy.reserve({ host: "127.0.0.1", port: 1 }); // a free port nobody listens on
    const dir = tempDir();
    const child = spawn(
      process.execPath,
      [
        "bin/gridcast",
        "serve",
        "--quiet",
        "--port",
        "0",
        "--store",
        storeDir,
        "--out",
        join(dir, "out"),
        "--db",
        `postgres://postgres@127.0.0.1:${proxy.port}/nowhere`,
      ],
      { cwd: join(import.meta.dirname, "../.."), stdio: ["ignore", "pipe", "pipe"] },
    );
    try {
      let stderr = "";
      const url = await new Promise<string>((ok, fail) => {
        child.stderr!.on("data", (d: Buffer) => {
          stderr += d.toString();
          const m = /serving on (http:\/\/\S+)/.exec(stderr);
          if (m) ok(m[1]);
        });
        child.on("exit", (code) => fail(new Error(`serve exited ${code}: ${stderr}`)));
      });
      assert.match(stderr, /key ledger could not be opened/);
      assert.equal((await get(`${url}/healthz`)).status, 200);
      assert.equal((await get(`${url}/api/models`)).status, 200);
      const ready = await get(`${url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.json().checks.ledger, "unavailable");
    } finally {
      child.kill("SIGKILL");
      cleanup(dir);
    }
  });
});
