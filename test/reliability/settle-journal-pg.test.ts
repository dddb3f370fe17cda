// The settlement journal on the PostgreSQL ledger: a metered .npy cut short while another
// connection holds the usage table in ACCESS EXCLUSIVE mode cannot be settled then (the ledger's
// lock_timeout ends the attempt); the settlement is journaled on local disk and lands once the
// lock is released, or, when the server stopped meanwhile, when the next one starts with the same
// database and journal. The usage row then records the bytes that went out, not the whole body.
// A real PostgreSQL server in a throwaway database; real clients over loopback
// (test/python/raw_client.py stops reading after the headers; killing it resets).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import pg from "pg";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { publish, writeBigItem } from "../embeddings/fixtures.ts";
import { cleanup, PYTHON, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";
import { PG_ADMIN, pgAdmin } from "../helpers/prereqs.ts";

const CLIENT = join(import.meta.dirname, "../python/raw_client.py");
const MIB = 1024 * 1024;
// 128 × 128 × 128 float32: 8 MiB of data, more than the kernel buffers hold; a whole slice costs 1 + 8.
const SHAPE: [number, number, number] = [128, 128, 128];
const FULL = 1 + 8;

let storeDir: string;
let big: string;
let dbUrl: string;
let dbName: string;
const journal = join(tempDir(), "settlements");

before(async () => {
  storeDir = await sampleStore();
  big = (await writeBigItem(storeDir, SHAPE)).name;
  const admin = await pgAdmin();
  dbName = `gridcast_test_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const u = new URL(PG_ADMIN);
  u.pathname = `/${dbName}`;
  dbUrl = u.toString();
});
after(async () => {
  const admin = await pgAdmin();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  cleanup(storeDir, join(journal, ".."));
});

async function server(): Promise<TestServer> {
  const srv = await testServer(storeDir, { db: dbUrl, settlement_journal: journal });
  await publish(srv, storeDir);
  return srv;
}

/** Another connection holds the usage table in ACCESS EXCLUSIVE mode until release(). */
async function lockUsage(): Promise<{ release: () => Promise<void> }> {
  const c = new pg.Client(dbUrl);
  await c.connect();
  await c.query("BEGIN");
  await c.query("LOCK TABLE usage IN ACCESS EXCLUSIVE MODE");
  let done = false;
  return {
    release: async () => {
      if (done) return;
      done = true;
      await c.query("ROLLBACK");
      await c.end();
    },
  };
}

/** A .npy slice whose client reads the headers and a little, then stops; kill() resets it. */
async function stalledSlice(srv: TestServer, key: string): Promise<ChildProcess> {
  const u = new URL(srv.url);
  const proc = spawn(PYTHON, [CLIENT, u.hostname, u.port, `/api/embeddings/npy/${big}`, "stall", `X-API-Key: ${key}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((ok) => proc.stdout!.once("data", (d) => ok(String(d))));
  assert.match(line, /^HTTP\/1\.1 200/);
  return proc;
}

const journaled = (srv: TestServer, id: string) =>
  srv.logs.some((l) => l.event === "settle-journaled" && l.key_id === id);
const pending = () => readdirSync(journal).filter((n) => n.endsWith(".json")).length;

test("postgres: a settlement refused under a table lock is journaled and lands once the lock is released", async () => {
  const srv = await server();
  let lock: Awaited<ReturnType<typeof lockUsage>> | undefined;
  try {
    const key = await srv.key(["embeddings"], 100);
    const id = parseKeyId(key)!;
    const client = await stalledSlice(srv, key);
    lock = await lockUsage();
    client.kill("SIGKILL");
    await until("the settlement journaled", () => journaled(srv, id), 20_000);
    assert.equal(pending(), 1);
    // Nothing came back yet: the ledger still holds the whole charge (keys is not locked).
    assert.equal(await srv.running.ctx.ledger.balance(id), 100 - FULL);
    await lock.release();
    await until("the refund", async () => (await srv.running.ctx.ledger.balance(id)) > 100 - FULL, 20_000);
    const [row] = await srv.running.ctx.ledger.usage(id);
    assert.ok(row.cost < FULL && row.bytes < 8 * MIB, `kept ${row.cost} credits for ${row.bytes} bytes`);
    assert.equal(await srv.running.ctx.ledger.balance(id), 100 - row.cost);
    await until("the journal emptied", () => pending() === 0);
  } finally {
    await lock?.release();
    await srv.close();
  }
});

test("postgres: a settlement still journaled when the server stops lands when the next one starts", async () => {
  const first = await server();
  let lock: Awaited<ReturnType<typeof lockUsage>> | undefined;
  let id: string;
  try {
    const key = await first.key(["embeddings"], 100);
    id = parseKeyId(key)!;
    const client = await stalledSlice(first, key);
    lock = await lockUsage();
    client.kill("SIGKILL");
    await until("the settlement journaled", () => journaled(first, id), 20_000);
  } finally {
    await first.close();
    await lock?.release();
  }
  assert.equal(pending(), 1);
  const second = await server();
  try {
    await until("the refund after the restart", async () => (await second.running.ctx.ledger.balance(id)) > 100 - FULL);
    const [row] = await second.running.ctx.ledger.usage(id);
    assert.ok(row.cost < FULL && row.bytes < 8 * MIB, `kept ${row.cost} credits for ${row.bytes} bytes`);
    assert.equal(await second.running.ctx.ledger.balance(id), 100 - row.cost);
    assert.ok(second.logs.some((l) => l.event === "settled" && l.from_journal === true && l.key_id === id));
    assert.equal(pending(), 0);
  } finally {
    await second.close();
  }
});
