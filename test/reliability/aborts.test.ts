// Clients that go away or stop reading, over real sockets (test/python/raw_client.py keeps its
// receive buffer small, as a slow link would). Every store-reading slot must come back, the
// gauge and /readyz must tell the truth while slots are taken, and nothing that did not go out is
// charged. One key from one address holds at most PER_KEY of the slots (fair shares): filling
// them all takes several keys and addresses.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { BIG_EXPORT, bigStore } from "../helpers/big-store.ts";
import { cleanup, get, PYTHON, type TestServer, testServer, until } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const CLIENT = join(import.meta.dirname, "../python/raw_client.py");
const SLOTS = 3;
const STALL_MS = 3000;
// All but a fair share (one slot of three): what one key may hold while others may need a slot.
const PER_KEY = SLOTS - 1;

let storeDir: string;
let srv: TestServer;
let key: string;
let keyId: string;
let item: string;

const EXPORT = BIG_EXPORT;

before(async () => {
  storeDir = await bigStore();
  srv = await testServer(storeDir, { max_heavy_requests: SLOTS, send_stall_ms: STALL_MS });
  await build({
    store: storeDir,
    out: join(srv.dir, "output"),
    maxZoom: 0,
    groups: ["forecast/global"],
    vars: ["t2m"],
  });
  const created = await srv.running.ctx.ledger.createKey({
    name: "aborts",
    scopes: ["weather", "embeddings"],
    credits: 10_000,
    rate: 0,
  });
  key = created.key;
  keyId = created.record.id;
  const listing = (await get(`${srv.url}/api/embeddings?prefix=geofm&limit=50`, { "X-API-Key": key })).json();
  // The largest latent of the sample: its slice does not fit the socket buffers of a small window.
  item = listing.items.find((i: { product: string }) => i.product === "tokens").name;
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

interface Client {
  proc: ChildProcess;
  /** The status line the client saw ("none" for an abandoned request). */
  status: Promise<string>;
  exited: Promise<void>;
}

function client(
  path: string,
  mode: "reset" | "close" | "stall" | "abandon",
  as: { key?: string; from?: string } = {},
): Client {
  const u = new URL(srv.url);
  const proc = spawn(PYTHON, [CLIENT, u.hostname, u.port, path, mode, `X-API-Key: ${as.key ?? key}`], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...(as.from ? { RAW_CLIENT_FROM: as.from } : {}) },
  });
  let out = "";
  const status = new Promise<string>((ok, fail) => {
    proc.stdout!.on("data", (d) => {
      out += String(d);
      if (out.includes("\n")) ok(out.split("\n")[0]);
    });
    proc.once("close", () => (out.includes("\n") ? ok(out.split("\n")[0]) : fail(new Error("client printed nothing"))));
  });
  const exited = new Promise<void>((ok) => proc.once("close", () => ok()));
  return { proc, status, exited };
}

function inFlight(): number {
  return srv.running.ctx.metrics.inFlight;
}

async function balance(): Promise<number> {
  return srv.running.ctx.ledger.balance(keyId);
}

describe("clients that go away", () => {
  test("downloads dropped half-way (reset and close) give every slot back", async () => {
    for (const mode of ["reset", "close"] as const) {
      // Three times the slot count: with a leak the server would be saturated twice over.
      for (let round = 0; round < 3; round++) {
        const batch = Array.from({ length: PER_KEY }, () => client(EXPORT, mode));
        for (const c of batch) assert.match(await c.status, /^HTTP\/1\.1 200/);
        await Promise.all(batch.map((c) => c.exited));
        await until(`slots back after ${mode} round ${round}`, () => inFlight() === 0, 10_000);
      }
    }
    const point = await get(`${srv.url}/point?lat=10&lon=10&var=t2m`, { "X-API-Key": key });
    assert.equal(point.status, 200);
    const aborted = srv.logs.filter((l) => l.route === "/api/export/{id}/npy" && l.aborted === true);
    assert.ok(aborted.length >= 6 * PER_KEY - 1, `aborted downloads are logged as such (${aborted.length})`);
  });

  test("readers that stop reading hold their slot only until send_stall_ms; /readyz shows it", async () => {
    const keys = [key, await srv.key(["weather"]), await srv.key(["weather"])];
    const stalled = keys.map((k, i) => client(EXPORT, "stall", { key: k, from: `127.0.0.${11 + i}` }));
    try {
      for (const c of stalled) assert.match(await c.status, /^HTTP\/1\.1 200/);
      assert.equal(inFlight(), SLOTS, "every slot is held by a stalled reader");
      const ready = await get(`${srv.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.json().checks.capacity, `${SLOTS}/${SLOTS}`);
      const busy = await get(`${srv.url}/point?lat=10&lon=10&var=t2m`, { "X-API-Key": key });
      assert.equal(busy.status, 503);
      assert.equal(busy.json().type, "/problems/busy");
      // Public tiles do not need a slot and keep answering.
      assert.equal((await get(`${srv.url}/healthz`)).status, 200);
      await until("stalled readers dropped", () => inFlight() === 0, STALL_MS * 5);
      assert.equal((await get(`${srv.url}/readyz`)).status, 200);
      assert.equal((await get(`${srv.url}/point?lat=10&lon=10&var=t2m`, { "X-API-Key": key })).status, 200);
      assert.ok(srv.logs.some((l) => l.event === "response-stall"));
    } finally {
      for (const c of stalled) c.proc.kill("SIGKILL");
      await Promise.all(stalled.map((c) => c.exited));
    }
  });

  test("a metered slice dropped before its first byte costs nothing; one reset later pays for what went out", async () => {
    const ledger = srv.running.ctx.ledger;
    const settled = () => srv.logs.filter((l) => l.event === "settled" && l.key_id === keyId).length;
    let before = await balance();
    const rowsBefore = (await ledger.usage(keyId)).length;
    const abandoned = Array.from({ length: PER_KEY }, () => client(`/api/embeddings/npy/${item}`, "abandon"));
    await Promise.all(abandoned.map((c) => c.exited));
    await until("slots back", () => inFlight() === 0, 10_000);
    // A request the server charged before it saw the reset is settled to nothing as it closes.
    await until("balance restored", async () => (await balance()) === before, 5000);
    assert.equal((await ledger.usage(keyId)).length, rowsBefore, "no usage row kept");

    // Read a little, then reset: charged by the per-MiB rule for the body the kernel took, which
    // (8 MiB of data against a send buffer of a few MiB) is never the whole.
    before = await balance();
    const settledBefore = settled();
    const reset = Array.from({ length: PER_KEY }, () => client(`/api/embeddings/npy/${item}`, "reset"));
    await Promise.all(reset.map((c) => c.exited));
    await until("slots back", () => inFlight() === 0, 10_000);
    await until("the resets settled", () => settled() - settledBefore >= PER_KEY, 10_000);
    const rows = (await ledger.usage(keyId)).slice(rowsBefore);
    assert.equal(rows.length, PER_KEY);
    const full = 1 + 8; // credit_cost_npy_base + 8 MiB
    for (const r of rows) {
      assert.ok(r.cost >= 1 && r.cost < full, `charged ${r.cost} for ${r.bytes} bytes`);
      assert.ok(r.bytes > 0 && r.bytes < 8 * 1024 * 1024);
    }
    assert.equal(await balance(), before - rows.reduce((n, r) => n + r.cost, 0));
    // A slice that is read to the end is charged as usual.
    before = await balance();
    const ok = await get(`${srv.url}/api/embeddings/npy/${item}`, { "X-API-Key": key });
    assert.equal(ok.status, 200);
    const charged = Number(ok.headers.get("x-credits-charged"));
    assert.equal(charged, full);
    assert.equal(await balance(), before - charged);
  });

  test("a 304 revalidation of item metadata is not charged", async () => {
    const first = await get(`${srv.url}/api/embeddings/item/${item}`, { "X-API-Key": key });
    assert.equal(first.status, 200);
    const etag = first.headers.get("etag");
    assert.ok(etag);
    const before = await balance();
    const rowsBefore = (await srv.running.ctx.ledger.usage(keyId)).length;
    const again = await get(`${srv.url}/api/embeddings/item/${item}`, { "X-API-Key": key, "If-None-Match": etag });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get("x-credits-charged"), null);
    assert.equal(await balance(), before);
    assert.equal((await srv.running.ctx.ledger.usage(keyId)).length, rowsBefore);
  });
});
