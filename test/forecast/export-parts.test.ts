// A box export whose one slab needs every chunk (all leads in one chunk step) is sent in two parts
// when its Blosc chunks hold several blocks (src/forecast/box.ts slabInParts, StoredArray
// readStoredSplit): the leads every chunk's first blocks complete go out while the other blocks
// decode. Each part holds exactly the cached path's values at the moment it is handed over; over
// HTTP the bytes are the cached path's, also with a chunk that is not stored (NaN); a chunk damaged
// in its first blocks is still a 500 before any byte, one damaged only in its last block cuts the
// body short of Content-Length, and the log names the store and key either way.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULTS, MIB } from "../../src/config.ts";
import { type BoxRequest, boxLeads, planBox, readBoxSlab } from "../../src/forecast/box.ts";
import { cleanup, get, getToEnd, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

// 2.5° grid, one run, 9 leads in every 9×16×16 chunk (9,216 bytes) of Blosc blocks of 256 bytes:
// 36 blocks, the first 18 (1,152 values) holding leads 0–3 whole.
const LEADS = 9;
const BLOCKS = 36;
const HEAD_LEADS = 4;
const BOXES = [
  { lat_min: -20, lat_max: 35, lon_min: 10, lon_max: 95 },
  // Across the antimeridian: two column runs, each read in two parts.
  { lat_min: -80, lat_max: 80, lon_min: 170, lon_max: 200 },
  // Six chunks, 0.0.2.3 among them.
  { lat_min: -25, lat_max: 20, lon_min: 100, lon_max: 170 },
];

describe("box exports in two parts (xarray v2 Blosc-lz4, 36 blocks a chunk)", () => {
  let root: string;
  let storeDir: string;
  let srv: TestServer;
  let key: string;
  before(async () => {
    root = tempDir("gridcast-export-parts-");
    storeDir = join(root, "store");
    const script = join(import.meta.dirname, "../python/xarray_forecast.py");
    execFileSync(PYTHON, [script, storeDir, "2.5", "1", String(LEADS), "16", String(LEADS), "256"]);
    srv = await testServer(storeDir);
    key = await srv.key(["weather"]);
  });
  after(async () => {
    await srv.close();
    cleanup(root);
  });

  const request = (b: (typeof BOXES)[number]) =>
    ({ group: "forecast/global", var: "t2m", time_index: 0, lead_start: 0, lead_stop: LEADS - 1, ...b }) as BoxRequest;
  const url = (b: (typeof BOXES)[number]) => {
    const q = new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: String(LEADS - 1) });
    for (const [k, v] of Object.entries(b)) q.set(k, String(v));
    return `${srv.url}/api/export/forecast~global/npy?${q}`;
  };
  const dataOf = (body: Buffer) => new Float32Array(new Uint8Array(body.subarray(10 + body.readUInt16LE(8))).buffer);

  test("the first part holds the leads every chunk's first blocks complete, each part the cached path's values", async () => {
    const { store, registry } = srv.running.ctx;
    for (const b of BOXES) {
      const plan = await planBox(store, registry, request(b), 1024);
      const plane = plan.shape[1] * plan.shape[2];
      store.cache.invalidate();
      // Copied the moment each part is handed over: a part handed over before its values are all
      // in place differs from the cached path here.
      const parts: Float32Array[] = [];
      for await (const p of boxLeads(plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB)) {
        parts.push(p.slice());
      }
      const cached = await readBoxSlab(plan, 0, LEADS);
      let at = 0;
      for (const [k, p] of parts.entries()) {
        for (let i = 0; i < p.length; i++) {
          if (!Object.is(p[i], cached[at + i])) {
            assert.fail(`${JSON.stringify(b)}: part ${k} value ${i} is ${p[i]}, ${cached[at + i]} through the cache`);
          }
        }
        at += p.length;
      }
      assert.equal(at, cached.length);
      assert.deepEqual(
        parts.map((p) => p.length / plane),
        [HEAD_LEADS, LEADS - HEAD_LEADS],
        "not sent as the first blocks' leads, then the rest",
      );
    }
  });

  test("over HTTP the body is the cached path's, byte for byte", async () => {
    const { store, registry } = srv.running.ctx;
    for (const b of BOXES) {
      store.cache.invalidate();
      const r = await get(url(b), { "X-API-Key": key });
      assert.equal(r.status, 200);
      const cached = await readBoxSlab(await planBox(store, registry, request(b), 1024), 0, LEADS);
      assert.deepEqual(dataOf(r.body), cached, JSON.stringify(b));
    }
  });

  test("a chunk that is not stored reads as its fill value (NaN) in both parts, the rest as stored", async () => {
    const { store, registry } = srv.running.ctx;
    const chunk = join(storeDir, "forecast", "global", "t2m", "0.0.2.3");
    const good = readFileSync(chunk);
    rmSync(chunk);
    try {
      const b = BOXES[2];
      // The chunk cache (where a chunk that is not stored is looked up) drops what it decoded.
      store.cache.invalidate();
      // Reused slabs first, so a value left unwritten would show an earlier export's numbers.
      for (let i = 0; i < 3; i++) await get(url(BOXES[0]), { "X-API-Key": key });
      const r = await get(url(b), { "X-API-Key": key });
      assert.equal(r.status, 200);
      const data = dataOf(r.body);
      // The chunk's 15 rows × 16 columns inside the box, at every lead.
      assert.equal(data.filter((v) => Number.isNaN(v)).length, LEADS * 15 * 16);
      store.cache.invalidate();
      assert.deepEqual(data, await readBoxSlab(await planBox(store, registry, request(b), 1024), 0, LEADS));
    } finally {
      writeFileSync(chunk, good);
    }
  });

  test("damage in a chunk's first blocks is a 500 before any byte; in its last block, a cut body", async () => {
    const chunk = join(storeDir, "forecast", "global", "t2m", "0.0.2.3");
    const good = readFileSync(chunk);
    const b = BOXES[2];
    const whole = await getToEnd(url(b), { "X-API-Key": key });
    assert.equal(whole.ended, "complete");
    const blocks = Math.ceil(good.readUInt32LE(4) / good.readUInt32LE(8));
    assert.equal(blocks, BLOCKS);
    // A block's first stream cut to one byte: the first block (read for the first part), the last.
    for (const block of [0, blocks - 1]) {
      const bad = Buffer.from(good);
      bad.writeUInt32LE(1, good.readUInt32LE(16 + 4 * block));
      writeFileSync(chunk, bad);
      const before = srv.logs.length;
      try {
        const r = await getToEnd(url(b), { "X-API-Key": key });
        if (block === 0) {
          assert.equal(r.status, 500);
          assert.equal(JSON.parse(r.got.toString()).type, "/problems/corrupt-data");
        } else {
          assert.equal(r.status, 200, "the first part went out before the damaged block was read");
          assert.equal(r.ended, "cut");
          assert.ok(r.got.length < r.declared, `${r.got.length} of ${r.declared} bytes and no sign of a cut`);
          assert.ok(r.got.equals(whole.got.subarray(0, r.got.length)), "what arrived is not the export's start");
        }
        const line = srv.logs.slice(before).find((e) => typeof e.key === "string");
        assert.ok(line, `block ${block}: no log line with the key`);
        assert.match(String(line.key), /t2m\/0\.0\.2\.3$/);
        assert.match(String(line.store), /directory store/);
      } finally {
        writeFileSync(chunk, good);
      }
    }
    const again = await getToEnd(url(b), { "X-API-Key": key });
    assert.ok(again.got.equals(whole.got));
  });
});
