// A refund is never lost to a ledger outage: a metered .npy cut short while another process holds
// the sqlite ledger's write lock cannot be settled then; the settlement is journaled, and lands once
// the lock is released, or, when the server stopped meanwhile, when the next one starts on the same
// ledger. The usage row then records the bytes that went out, not the whole body. Real clients over
// loopback (test/python/raw_client.py stops reading after the headers; killing it resets).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { publish, writeBigItem } from "../embeddings/fixtures.ts";
import { cleanup, PYTHON, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";

const CLIENT = join(import.meta.dirname, "../python/raw_client.py");
const MIB = 1024 * 1024;
// 128 × 128 × 128 float32: 8 MiB of data, more than the kernel buffers hold; a whole slice costs 1 + 8.
const SHAPE: [number, number, number] = [128, 128, 128];
const FULL = 1 + 8;

let storeDir: string;
let big: string;
const dbDir = tempDir();
const db = join(dbDir, "ledger.db");

before(async () => {
  storeDir = await sampleStore();
  big = (await writeBigItem(storeDir, SHAPE)).name;
});
after(() => cleanup(storeDir, dbDir));

async function server(): Promise<TestServer> {
  const srv = await testServer(storeDir, { db });
  await publish(srv, storeDir);
  return srv;
}

/** Another process takes the ledger's write lock and holds it until killed. */
async function lockLedger(): Promise<ChildProcess> {
  const script = `
    const { DatabaseSync } = require("node:sqlite");
    const db = new DatabaseSync(process.argv[1]);
    db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE; UPDATE keys SET name = name");
    process.stdout.write("locked\\n");
    setInterval(() => {}, 1000);`;
  const locker = spawn(process.execPath, ["-e", script, db], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((ok) => locker.stdout!.once("data", ok));
  return locker;
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
const pending = () => readdirSync(`${db}.settlements`).filter((n) => n.endsWith(".json")).length;

test("a settlement refused by a locked ledger is journaled and lands once the lock is released", async () => {
  const srv = await server();
  let locker: ChildProcess | undefined;
  try {
    const key = await srv.key(["embeddings"], 100);
    const id = parseKeyId(key)!;
    const client = await stalledSlice(srv, key);
    locker = await lockLedger();
    client.kill("SIGKILL");
    await until("the settlement journaled", () => journaled(srv, id), 15_000);
    assert.equal(pending(), 1);
    // Nothing came back yet: the ledger still holds the whole charge.
    assert.equal(await srv.running.ctx.ledger.balance(id), 100 - FULL);
    locker.kill("SIGKILL");
    locker = undefined;
    await until("the refund", async () => (await srv.running.ctx.ledger.balance(id)) > 100 - FULL, 15_000);
    const [row] = await srv.running.ctx.ledger.usage(id);
    assert.ok(row.cost < FULL && row.bytes < 8 * MIB, `kept ${row.cost} credits for ${row.bytes} bytes`);
    assert.equal(await srv.running.ctx.ledger.balance(id), 100 - row.cost);
    await until("the journal emptied", () => pending() === 0);
  } finally {
    locker?.kill("SIGKILL");
    await srv.close();
  }
});

test("a settlement still journaled when the server stops lands when the next one starts", async () => {
  const first = await server();
  let locker: ChildProcess | undefined;
  let id: string;
  try {
    const key = await first.key(["embeddings"], 100);
    id = parseKeyId(key)!;
    const client = await stalledSlice(first, key);
    locker = await lockLedger();
    client.kill("SIGKILL");
    await until("the settlement journaled", () => journaled(first, id), 15_000);
  } finally {
    await first.close();
    locker?.kill("SIGKILL");
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
