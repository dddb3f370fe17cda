// Hostile chunks in real stores, served through /point: a Zstandard frame that expands to 1 GiB,
// a frame that decodes to half a chunk, a Blosc header that lies about its size. Each gives a 500
// problem+json naming no path, a log line naming the store and the chunk key, and no memory
// blow-up — never a 200 with zeros or fill values. Genuine chunks of an xarray-written store
// (Blosc lz4, zarr-python's default) decode natively to numpy's values.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { zstdCompressSync } from "node:zlib";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

/** A valid zstd frame of RLE blocks that decodes to `total` copies of one byte (4 bytes per 128 KiB). */
function zstdBomb(total: number): Buffer {
  const BLOCK = 128 * 1024;
  const n = Math.ceil(total / BLOCK);
  const out = Buffer.alloc(14 + n * 4);
  out.writeUInt32LE(0xfd2fb528, 0);
  out[4] = 0xc0; // 8-byte content size, windowed, no checksum, no dictionary
  out[5] = 7 << 3; // window 2^17
  out.writeBigUInt64LE(BigInt(total), 6);
  for (let i = 0, at = 14; i < n; i++, at += 4) {
    const size = Math.min(BLOCK, total - i * BLOCK);
    const hdr = (i === n - 1 ? 1 : 0) | (1 << 1) | (size << 3); // last flag, RLE block, size
    out[at] = hdr & 255;
    out[at + 1] = (hdr >> 8) & 255;
    out[at + 2] = (hdr >> 16) & 255;
    out[at + 3] = 0;
  }
  return out;
}

function assertClean(body: Buffer, storeDir: string): void {
  const t = body.toString();
  assert.ok(!t.includes(storeDir) && !t.includes("/tmp") && !t.includes("node:"), t);
}

function loggedDecodeFailure(srv: TestServer, storeDir: string, key: string): boolean {
  return srv.logs.some((l) => {
    // The store and key ride in the log line's fields, never in the client's body.
    const line = JSON.stringify(l);
    return l.level === "error" && line.includes(storeDir) && line.includes(key);
  });
}

describe("hostile chunks in a zarrita-written (v3, zstd) store", () => {
  let storeDir: string;
  let srv: TestServer;
  let key: string;
  const chunkKey = "forecast/global/msl/c/0/0/0/0";
  let chunk: string;
  let good: Buffer;

  before(async () => {
    storeDir = await sampleStore();
    srv = await testServer(storeDir);
    key = await srv.key(["weather"]);
    chunk = join(storeDir, chunkKey);
    good = readFileSync(chunk);
  });
  after(async () => {
    await srv.close();
    cleanup(storeDir);
  });

  const point = () => get(`${srv.url}/point?lat=80&lon=10&var=msl&run=0`, { "X-API-Key": key });

  test("a 1 GiB zstd bomb: 500 problem+json, store and key in the log, memory stays put", async () => {
    const before = await point();
    assert.equal(before.status, 200);
    const bomb = zstdBomb(2 ** 30);
    assert.ok(bomb.length < 40_000);
    writeFileSync(chunk, bomb);
    srv.running.ctx.store.cache.invalidate();
    const rssBefore = process.resourceUsage().maxRSS; // KiB, the process peak so far
    try {
      for (let i = 0; i < 3; i++) {
        const r = await point();
        assert.equal(r.status, 500, r.body.toString());
        assert.equal(r.headers.get("content-type"), "application/problem+json");
        assert.equal(r.json().type, "/problems/corrupt-data");
        assertClean(r.body, storeDir);
        srv.running.ctx.store.cache.invalidate();
      }
      const grownMb = (process.resourceUsage().maxRSS - rssBefore) / 1024;
      assert.ok(grownMb < 256, `peak RSS grew by ${grownMb} MB`);
      assert.ok(loggedDecodeFailure(srv, storeDir, chunkKey), JSON.stringify(srv.logs.slice(-3)));
    } finally {
      writeFileSync(chunk, good);
      srv.running.ctx.store.cache.invalidate();
    }
    const healed = await point();
    assert.equal(healed.status, 200);
    assert.deepEqual(healed.json().values, before.json().values);
  });

  test("a zstd frame decoding to half the chunk is refused, not served as zeros or NaN", async () => {
    // 1×7×90×90 float32 = 226,800 bytes; this frame holds the first half of them.
    const half = zstdCompressSync(Buffer.alloc(226_800 / 2));
    writeFileSync(chunk, half);
    srv.running.ctx.store.cache.invalidate();
    try {
      const r = await point();
      assert.equal(r.status, 500, r.body.toString());
      assert.equal(r.json().type, "/problems/corrupt-data");
      assert.ok(loggedDecodeFailure(srv, storeDir, chunkKey));
    } finally {
      writeFileSync(chunk, good);
      srv.running.ctx.store.cache.invalidate();
    }
  });
});

describe("an xarray-written store (v2, Blosc lz4)", () => {
  let parent: string;
  let storeDir: string;
  let srv: TestServer;
  let key: string;
  const chunkKey = "forecast/global/t2m/0.0.0.0";

  before(async () => {
    parent = tempDir();
    storeDir = join(parent, "store");
    execFileSync(PYTHON, [join(import.meta.dirname, "../python/xarray_forecast.py"), storeDir, "1", "2", "5", "30"]);
    srv = await testServer(storeDir);
    key = await srv.key(["weather"]);
  });
  after(async () => {
    await srv.close();
    cleanup(parent);
  });

  const point = (lat: number, lon: number) =>
    get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m&run=1`, { "X-API-Key": key });

  test("decodes natively to the values numpy reads", async () => {
    const want = JSON.parse(
      execFileSync(PYTHON, [
        "-c",
        `import xarray as xr, json, sys
ds = xr.open_zarr(sys.argv[1], group="forecast/global")
print(json.dumps([float(v) for v in ds.t2m.isel(time=1).sel(lat=47, lon=11).values]))`,
        storeDir,
      ]).toString(),
    ) as number[];
    const r = await point(47, 11);
    assert.equal(r.status, 200, r.body.toString());
    const got = r.json().values as number[];
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got[i] - want[i]) < 1e-4, `${got[i]} vs ${want[i]}`);
  });

  test("a Blosc header claiming 1 GiB, or a chunk written for a larger shape, gives 500", async () => {
    const chunk = join(storeDir, chunkKey);
    const good = readFileSync(chunk);
    const lying = Buffer.from(good);
    lying.writeUInt32LE(2 ** 30, 4);
    // A real Blosc chunk of 1×5×60×30 values where 1×5×30×30 belong.
    const bigger = execFileSync(PYTHON, [
      "-c",
      `import numpy as np, sys
from numcodecs.blosc import Blosc
sys.stdout.buffer.write(Blosc(cname="lz4").encode(np.ones((1, 5, 60, 30), "float32")))`,
    ]);
    try {
      for (const bad of [lying, bigger]) {
        writeFileSync(chunk, bad);
        srv.running.ctx.store.cache.invalidate();
        const r = await point(89, 1); // chunk (1, 0, 0, 0) holds run 1; (0, ...) is run 0
        assert.equal(r.status, 200); // run 1 lives in another chunk and is unaffected
        const hit = await get(`${srv.url}/point?lat=89&lon=1&var=t2m&run=0`, { "X-API-Key": key });
        assert.equal(hit.status, 500, hit.body.toString());
        assert.equal(hit.json().type, "/problems/corrupt-data");
        assertClean(hit.body, storeDir);
        assert.ok(loggedDecodeFailure(srv, storeDir, chunkKey));
      }
    } finally {
      writeFileSync(chunk, good);
      srv.running.ctx.store.cache.invalidate();
    }
  });
});
