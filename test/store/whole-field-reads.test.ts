// Reads of stores laid out with one whole-field chunk per lead (issue 51), written by xarray with
// zarr-python 2 (Debian's python3) and zarr-python 3 (the venv): a point down every lead touches
// more chunks than the chunk cache holds, so it is read for that request alone, decoding only the
// Blosc blocks that hold the point (or, uncompressed, reading only its bytes), and it neither fills
// the cache nor evicts what other requests keep coming back to. Values are compared with xarray's
// and with whole-chunk decodes; damage in a block the point needs is a 500 naming store and key,
// damage elsewhere is never read.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { partialDecodes } from "../../src/store/array.ts";
import type { Range } from "../../src/store/region.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { listen, rangeServer } from "../helpers/static-server.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";

const ROOT = join(import.meta.dirname, "../..");
const LEADS = 8;
const [NY, NX] = [73, 144];
const CHUNK = NY * NX * 4;
/** A cache of three whole-field chunks: a point down the eight leads does not fit in it. */
const CACHE_MB = (3 * CHUNK) / (1024 * 1024);
// Blosc blocks of 256 bytes (c-blosc keeps a forced block size this small): 165 to a chunk.
const BLOCK = 256;

const STORES = [
  { name: "v2 lz4 shuffle", codec: "lz4-shuffle", fmt: 2 },
  { name: "v2 zstd shuffle", codec: "zstd-shuffle", fmt: 2 },
  { name: "v2 lz4 bitshuffle", codec: "lz4-bitshuffle", fmt: 2 },
  { name: "v2 zstd bitshuffle", codec: "zstd-bitshuffle", fmt: 2 },
  { name: "v2 uncompressed", codec: "none", fmt: 2 },
  { name: "v3 lz4 shuffle", codec: "lz4-shuffle", fmt: 3 },
  { name: "v3 zstd bitshuffle", codec: "zstd-bitshuffle", fmt: 3 },
  { name: "v3 uncompressed", codec: "none", fmt: 3 },
] as const;

let root: string;
const dirs = new Map<string, string>();
const truths = new Map<string, Float32Array>();

before(() => {
  root = tempDir("gridcast-whole-field-");
  const py3 = requireZarr3Python("whole-field reads");
  for (const s of STORES) {
    const dir = join(root, s.name.replaceAll(" ", "-"));
    const py = s.fmt === 3 ? py3 : PYTHON;
    execFileSync(
      py,
      [
        join(ROOT, "test/python/whole_field_store.py"),
        dir,
        "2.5",
        String(LEADS),
        s.codec,
        String(s.fmt),
        String(BLOCK),
      ],
      { stdio: ["ignore", "ignore", "ignore"] },
    );
    const raw = join(root, `${s.name.replaceAll(" ", "-")}.f32`);
    execFileSync(
      py,
      [
        "-c",
        "import sys, xarray as xr; xr.open_zarr(sys.argv[1], group='forecast/global').t2m.values.astype('<f4').tofile(sys.argv[2])",
        dir,
        raw,
      ],
      { stdio: ["ignore", "ignore", "ignore"] },
    );
    const b = readFileSync(raw);
    dirs.set(s.name, dir);
    truths.set(s.name, new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4));
  }
});
after(() => {
  partialDecodes(true);
  cleanup(root);
});

const column = (i: number, j: number): Range[] => [
  [0, 1],
  [0, LEADS],
  [i, i + 1],
  [j, j + 1],
];
const POINTS = [
  [0, 0],
  [36, 77],
  [72, 143],
  [50, 3],
];

async function t2m(dir: string, opts: ConstructorParameters<typeof Store>[1] = {}) {
  const store = new Store(dir, { cacheMb: CACHE_MB, ...opts });
  const g = await store.forecastGroup("forecast/global");
  return { store, array: g.variables.get("t2m")!.array };
}

function sameAsXarray(name: string, got: Float32Array | Float64Array, i: number, j: number, how: string): void {
  const truth = truths.get(name)!;
  for (let k = 0; k < LEADS; k++) {
    const want = truth[(k * NY + i) * NX + j];
    if (!Object.is(got[k], want)) assert.fail(`${name} ${how}: lead ${k} at (${i}, ${j}) is ${got[k]}, xarray ${want}`);
  }
}

describe("a point down every lead of a one-chunk-per-lead store", () => {
  for (const s of STORES) {
    test(`${s.name}: xarray's values, nothing admitted to the cache, the same as whole-chunk decodes`, async () => {
      const { store, array } = await t2m(dirs.get(s.name)!);
      // The coordinates opening the group read are cached; the points add nothing.
      const entries = store.cache.stats().entries;
      for (const [i, j] of POINTS) {
        const before = store.backend.bytes;
        sameAsXarray(s.name, await array.read(column(i, j)), i, j, "partial");
        const read = store.backend.bytes - before;
        // Uncompressed: one ranged read of each lead's 4 bytes; compressed: each stored chunk once.
        if (s.codec === "none") assert.equal(read, LEADS * 4, `${s.name}: bytes read`);
      }
      assert.equal(store.cache.stats().entries, entries, "a read larger than the cache admits nothing");
      partialDecodes(false);
      try {
        const whole = await t2m(dirs.get(s.name)!);
        const wholeEntries = whole.store.cache.stats().entries;
        for (const [i, j] of POINTS) {
          const before = whole.store.backend.bytes;
          sameAsXarray(s.name, await whole.array.read(column(i, j)), i, j, "whole decode");
          if (s.codec === "none") assert.equal(whole.store.backend.bytes - before, LEADS * CHUNK);
        }
        assert.equal(whole.store.cache.stats().entries, wholeEntries);
        assert.equal(whole.store.cache.stats().bypassed, LEADS * POINTS.length);
      } finally {
        partialDecodes(true);
      }
    });
  }
});

/** Each lead's chunk with the first stream of the Blosc block holding (row, col) cut to one byte. */
function damageBlockAt(dir: string, row: number, col: number): void {
  for (let k = 0; k < LEADS; k++) {
    const file = join(dir, "forecast/global/t2m", `0.${k}.0.0`);
    const b = readFileSync(file);
    const blocksize = b.readUInt32LE(8);
    assert.ok(blocksize < b.readUInt32LE(4) && (b[2] & 2) === 0, "compressed, several blocks");
    const block = Math.floor(((row * NX + col) * 4) / blocksize);
    b.writeUInt32LE(1, b.readUInt32LE(16 + 4 * block));
    writeFileSync(file, b);
  }
}

describe("a damaged block", () => {
  let dir: string;
  let srv: TestServer;
  before(async () => {
    dir = join(root, "damaged");
    cpSync(dirs.get("v2 lz4 shuffle")!, dir, { recursive: true });
    damageBlockAt(dir, 72, 5);
    srv = await testServer(dir, { chunk_cache_mb: CACHE_MB });
  });
  after(() => srv.close());

  test("a point in the first rows never reads it (a whole decode fails); one in the last rows fails naming the key", async () => {
    const { array } = await t2m(dir);
    sameAsXarray("v2 lz4 shuffle", await array.read(column(0, 5)), 0, 5, "first row");
    await assert.rejects(
      async () => array.read(column(72, 5)),
      (e: Error & { logFields?: Record<string, unknown> }) => {
        assert.match(String(e.logFields?.key), /t2m\/0\.\d\.0\.0$/);
        return true;
      },
    );
    partialDecodes(false);
    try {
      const whole = await t2m(dir);
      await assert.rejects(async () => whole.array.read(column(0, 5)), "a whole decode reads the damaged block");
    } finally {
      partialDecodes(true);
    }
  });

  test("over HTTP: 500 problem+json without a path, the log naming store and key; the first rows answer", async () => {
    const key = await srv.key(["weather"]);
    const point = (q: string) => get(`${srv.url}/point?${q}&var=t2m&run=0`, { "X-API-Key": key });
    const before = srv.logs.length;
    const r = await point("lat=-90&lon=12.5");
    assert.equal(r.status, 500);
    assert.equal(r.headers.get("content-type"), "application/problem+json");
    assert.equal(r.json().type, "/problems/corrupt-data");
    assert.doesNotMatch(r.body.toString(), /\/tmp|gridcast-whole/);
    const line = srv.logs.slice(before).find((e) => typeof e.key === "string");
    assert.ok(line, "no log line with the key");
    assert.match(String(line.key), /t2m\/0\.\d\.0\.0$/);
    assert.match(String(line.store), /directory store/);
    assert.equal((await point("lat=90&lon=0")).status, 200);
  });
});

/** The float32 values of an .npy body. */
function npyValues(body: Buffer): Float32Array {
  assert.equal(body.subarray(1, 6).toString(), "NUMPY");
  const at = 10 + body.readUInt16LE(8);
  const data = body.subarray(at);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}

/** A box export of every lead: rows 0-4 (lat 90 to 80), columns 0-4 (lon 0 to 10). */
const NORTH_BOX = "lat_min=80&lat_max=90&lon_min=0&lon_max=10";

/** What xarray holds for NORTH_BOX, as the export lays it out (lead, lat ascending, lon). */
function northBox(name: string): Float32Array {
  const truth = truths.get(name)!;
  const out = new Float32Array(LEADS * 25);
  let n = 0;
  for (let k = 0; k < LEADS; k++) {
    for (let i = 4; i >= 0; i--) for (let j = 0; j < 5; j++) out[n++] = truth[(k * NY + i) * NX + j];
  }
  return out;
}

describe("small box exports from whole-field chunks", () => {
  const exportOf = (srv: TestServer, key: string, box: string) =>
    get(`${srv.url}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=${LEADS - 1}&${box}`, {
      "X-API-Key": key,
    });

  test("Blosc: a block damaged outside the box is never read; one inside is a 500 naming the key", async () => {
    const dir = join(root, "damaged-export");
    cpSync(dirs.get("v2 lz4 shuffle")!, dir, { recursive: true });
    damageBlockAt(dir, 72, 5);
    const srv = await testServer(dir, { chunk_cache_mb: CACHE_MB });
    try {
      const key = await srv.key(["weather"]);
      const r = await exportOf(srv, key, NORTH_BOX);
      assert.equal(r.status, 200, r.body.toString().slice(0, 300));
      assert.deepEqual(npyValues(r.body), northBox("v2 lz4 shuffle"));
      const before = srv.logs.length;
      const bad = await exportOf(srv, key, "lat_min=-90&lat_max=-85&lon_min=10&lon_max=15");
      assert.equal(bad.status, 500);
      assert.equal(bad.json().type, "/problems/corrupt-data");
      const line = srv.logs.slice(before).find((e) => typeof e.key === "string");
      assert.match(String(line?.key), /t2m\/0\.\d\.0\.0$/);
    } finally {
      await srv.close();
    }
  });

  test("uncompressed: only the bytes the box spans are read", async () => {
    const srv = await testServer(dirs.get("v2 uncompressed")!, { chunk_cache_mb: CACHE_MB });
    try {
      const key = await srv.key(["weather"]);
      const backend = srv.running.ctx.store.backend;
      await exportOf(srv, key, "lat_min=0&lat_max=1&lon_min=0&lon_max=1"); // the group opened
      const before = backend.bytes;
      const r = await exportOf(srv, key, NORTH_BOX);
      assert.equal(r.status, 200);
      assert.deepEqual(npyValues(r.body), northBox("v2 uncompressed"));
      // Rows 0-4 from column 0 to 4 of each lead: (4 × 144 + 5) values, not the 10,512 of a chunk.
      assert.equal(backend.bytes - before, LEADS * (4 * NX + 5) * 4);
    } finally {
      await srv.close();
    }
  });
});

describe("the working set under sweeps", () => {
  /** A small box in lead 0 read twice, sweeps of points down every lead and of two-lead boxes, the box again: its stored reads. */
  async function workingSetReads(policy: "slru" | "lru"): Promise<number> {
    const { store, array } = await t2m(dirs.get("v2 lz4 shuffle")!, { cachePolicy: policy });
    const box: Range[] = [
      [0, 1],
      [0, 1],
      [10, 20],
      [30, 40],
    ];
    const key = "forecast/global/t2m/0.0.0.0";
    await array.read(box);
    await array.read(box);
    for (const [i, j] of POINTS) await array.read(column(i, j));
    // Two-lead boxes, each within the cache, sweeping leads 1-6 once: seven chunks through a cache of three.
    for (let k = 1; k + 2 <= LEADS; k += 2) {
      await array.read([
        [0, 1],
        [k, k + 2],
        [0, 5],
        [0, 5],
      ]);
    }
    const reads = store.backend.reads.get(key) ?? 0;
    await array.read(box);
    return (store.backend.reads.get(key) ?? 0) - reads;
  }

  test("slru keeps a box read twice through sweeps of more chunks than the cache holds; lru reads it again", async () => {
    assert.equal(await workingSetReads("slru"), 0, "slru: the box's chunk was evicted");
    assert.equal(await workingSetReads("lru"), 1, "lru: the sweep should have evicted it");
  });
});

describe("large whole-field chunks (0.5°, 1 MB a lead) over HTTP: a point reads only the header, block table and its block", () => {
  const BIG = [
    { name: "v2 default (lz4 shuffle)", codec: "default", fmt: 2 },
    { name: "v2 zstd bitshuffle (blocks stored out of order)", codec: "zstd-bitshuffle", fmt: 2 },
    { name: "v3 zstd bitshuffle", codec: "zstd-bitshuffle", fmt: 3 },
  ] as const;
  const [BY, BX, BL] = [361, 720, 3];
  const big = new Map<string, { dir: string; truth: Float32Array }>();
  const servers: Server[] = [];
  after(() => {
    for (const srv of servers) srv.close();
  });
  /** The store served by a static server that honours Range (as object stores do). */
  const served = async (dir: string) => {
    const srv = rangeServer(dir, () => "none");
    servers.push(srv);
    return listen(srv);
  };
  before(() => {
    const py3 = requireZarr3Python("whole-field reads");
    for (const s of BIG) {
      const dir = join(root, `big-${s.codec}-${s.fmt}`);
      const py = s.fmt === 3 ? py3 : PYTHON;
      const quiet: { stdio: "ignore" } = { stdio: "ignore" };
      execFileSync(
        py,
        [join(ROOT, "test/python/whole_field_store.py"), dir, "0.5", String(BL), s.codec, String(s.fmt)],
        quiet,
      );
      const raw = `${dir}.f32`;
      const read =
        "import sys, xarray as xr; xr.open_zarr(sys.argv[1], group='forecast/global').t2m.values.astype('<f4').tofile(sys.argv[2])";
      execFileSync(py, ["-c", read, dir, raw], quiet);
      const b = readFileSync(raw);
      big.set(s.name, { dir, truth: new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4) });
    }
  });
  const chunkFile = (dir: string, fmt: number, k: number) =>
    join(dir, "forecast/global/t2m", fmt === 3 ? `c/0/${k}/0/0` : `0.${k}.0.0`);

  for (const s of BIG) {
    test(`${s.name}: xarray's values, a fraction of the stored bytes read; other blocks never looked at`, async () => {
      const { dir, truth } = big.get(s.name)!;
      const cacheMb = (2 * BY * BX * 4) / (1024 * 1024);
      const stored = Array.from({ length: BL }, (_, k) => readFileSync(chunkFile(dir, s.fmt, k)));
      const total = stored.reduce((a, b) => a + b.length, 0);
      assert.ok(
        stored.every((b) => b.readUInt32LE(8) < b.readUInt32LE(4)),
        "several blocks a chunk",
      );
      const col = (i: number, j: number): Range[] => [
        [0, 1],
        [0, BL],
        [i, i + 1],
        [j, j + 1],
      ];
      const want = (i: number, j: number) => Array.from({ length: BL }, (_, k) => truth[(k * BY + i) * BX + j]);
      const url = await served(dir);
      const store = new Store(url, { cacheMb });
      const array = (await store.forecastGroup("forecast/global")).variables.get("t2m")!.array;
      for (const [i, j] of [
        [0, 0],
        [180, 360],
        [360, 719],
      ]) {
        const before = store.backend.bytes;
        assert.deepEqual(Array.from(await array.read(col(i, j))), want(i, j), `${s.name} (${i}, ${j})`);
        const read = store.backend.bytes - before;
        assert.ok(read < 0.75 * total, `${s.name}: read ${read} of ${total} stored bytes`);
      }
      // Every block but the one holding row 0, column 0 overwritten: that point still reads exactly.
      for (const [k, b] of stored.entries()) {
        const blocks = Math.ceil(b.readUInt32LE(4) / b.readUInt32LE(8));
        const starts = Array.from({ length: blocks }, (_, n) => b.readUInt32LE(16 + 4 * n));
        const first = starts[0];
        const end = [...starts, b.length].filter((x) => x > first).sort((x, y) => x - y)[0];
        const bad = Buffer.alloc(b.length, 0xa5);
        b.copy(bad, 0, 0, 16 + 4 * blocks);
        b.copy(bad, first, first, end);
        writeFileSync(chunkFile(dir, s.fmt, k), bad);
      }
      try {
        const fresh = new Store(url, { cacheMb });
        const a2 = (await fresh.forecastGroup("forecast/global")).variables.get("t2m")!.array;
        assert.deepEqual(Array.from(await a2.read(col(0, 0))), want(0, 0));
        await assert.rejects(async () => a2.read(col(360, 719)), "a point in an overwritten block fails");
      } finally {
        for (const [k, b] of stored.entries()) writeFileSync(chunkFile(dir, s.fmt, k), b);
      }
    });
  }
});
