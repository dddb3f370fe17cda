// Bulk reads as scans (src/store/scan.ts): chunks decoded straight into reused buffers, outside the
// chunk cache. The direct decoders give numcodecs' bytes; exports read this way equal the cached
// path's values on stores written by xarray (v2, Blosc) and by zarrita (v3, Zstandard), also many
// at once sharing the buffer pool; a chunk that is not stored reads as its fill value, a damaged
// one fails loudly with its store and key in the log; buffers go back when a scan ends, also one
// abandoned while decodes were in flight.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULTS, MIB } from "../../src/config.ts";
import { type BoxPlan, type BoxRequest, boxLeads, planBox, readBoxSlab, slabRegions } from "../../src/forecast/box.ts";
import { directDecoder } from "../../src/store/codecs/direct.ts";
import type { DirectoryBackend } from "../../src/store/directory-backend.ts";
import type { Json, NodeMeta } from "../../src/store/metadata.ts";
import { ChunkScan } from "../../src/store/scan.ts";
import { poisonReturned, pooledBytes, takeBytes } from "../../src/store/scan-buffers.ts";
import {
  cleanup,
  get,
  getToEnd,
  PYTHON,
  sampleStore,
  type TestServer,
  tempDir,
  testServer,
} from "../helpers/harness.ts";

// Every buffer handed back is overwritten at once: a read after the hand-back gives wrong values.
poisonReturned(true);

type Case = { name: string; config: { id: string } & Record<string, unknown>; dtype: string; shape: number[] };

function arrayMeta(format: 2 | 3, dtype: string, shape: number[], codecs: Json[], order = "C"): NodeMeta {
  return {
    kind: "array",
    format,
    path: "a",
    attrs: {},
    raw: format === 2 ? { ".zarray": { order } } : { "zarr.json": {} },
    array: { shape, chunks: shape, dtype, fill_value: null, dimension_names: undefined, codecs },
  } as NodeMeta;
}

describe("direct decoders", () => {
  let dir: string;
  let cases: Case[];
  before(() => {
    dir = tempDir("gridcast-direct-");
    execFileSync(PYTHON, [join(import.meta.dirname, "../python/codec_chunks.py"), dir]);
    cases = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  });
  after(() => cleanup(dir));

  test("every numcodecs Blosc and Zstd chunk decodes into a reused buffer to numpy's bytes", async () => {
    let direct = 0;
    for (const c of cases) {
      const { id, ...config } = c.config;
      const meta = arrayMeta(2, c.dtype, c.shape, [
        { name: "bytes", configuration: { endian: "little" } },
        { name: id, configuration: config },
      ]);
      const dec = directDecoder(meta);
      if (id === "gzip" || id === "zlib") {
        assert.equal(dec, undefined, `${c.name}: gzip and zlib go through zarrita's pipeline`);
        continue;
      }
      assert.ok(dec, `${c.name}: no direct decoder`);
      const raw = readFileSync(join(dir, `${c.name}.raw`));
      // A dirty buffer from the pool: every byte must be overwritten.
      const into = takeBytes(dec.bytes).fill(0xa5);
      const out = await dec.decode(new Uint8Array(readFileSync(join(dir, `${c.name}.enc`))), () => into);
      assert.equal(out, into);
      assert.ok(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(raw), `${c.name} differs`);
      direct++;
    }
    assert.ok(direct >= 60, `only ${direct} cases decoded directly`);
  });

  test("a chunk that decodes to more or fewer bytes than its shape, or not at all, is refused", async () => {
    for (const name of ["zstd-1-float32", "blosc-lz4-shuffle-float32-202500-0"]) {
      const c = cases.find((x) => x.name === name);
      assert.ok(c, name);
      const { id, ...config } = c.config;
      const enc = new Uint8Array(readFileSync(join(dir, `${c.name}.enc`)));
      for (const shape of [c.shape.map((s, i) => (i === c.shape.length - 1 ? s - 1 : s)), [...c.shape, 2]]) {
        const codecs = [
          { name: "bytes", configuration: { endian: "little" } },
          { name: id, configuration: config },
        ];
        const dec = directDecoder(arrayMeta(2, c.dtype, shape, codecs));
        assert.ok(dec);
        await assert.rejects(
          dec.decode(enc, () => new Uint8Array(dec.bytes)),
          /zstd|blosc/,
        );
      }
      const dec = directDecoder(
        arrayMeta(2, c.dtype, c.shape, [
          { name: "bytes", configuration: { endian: "little" } },
          { name: id, configuration: config },
        ]),
      );
      assert.ok(dec);
      await assert.rejects(dec.decode(enc.subarray(0, enc.length >> 1), () => new Uint8Array(dec.bytes)));
      await assert.rejects(
        dec.decode(
          enc.map((b, i) => (i > 40 ? b ^ 0x5a : b)),
          () => new Uint8Array(dec.bytes),
        ),
      );
    }
  });

  test("chains it does not handle are left to zarrita: F order, big-endian, filters, sharding, crc32c", () => {
    const blosc = { name: "blosc", configuration: {} };
    const le = { name: "bytes", configuration: { endian: "little" } };
    assert.ok(directDecoder(arrayMeta(2, "float32", [4, 4], [le, blosc])));
    assert.equal(directDecoder(arrayMeta(2, "float32", [4, 4], [le, blosc], "F")), undefined);
    assert.equal(
      directDecoder(arrayMeta(2, "float32", [4, 4], [{ name: "bytes", configuration: { endian: "big" } }])),
      undefined,
    );
    assert.equal(directDecoder(arrayMeta(2, "int16", [4, 4], [{ name: "numcodecs.delta" }, le, blosc])), undefined);
    assert.equal(directDecoder(arrayMeta(3, "float32", [4, 4], [{ name: "sharding_indexed" }])), undefined);
    assert.equal(directDecoder(arrayMeta(3, "float32", [4, 4], [le, blosc, { name: "crc32c" }])), undefined);
    assert.equal(directDecoder(arrayMeta(3, "bool", [4, 4], [le])), undefined);
  });
});

/** Every lead of a box read as a scan (what exports do) and, apart, through the chunk cache. */
async function bothWays(plan: BoxPlan): Promise<{ scan: Float32Array; cached: Float32Array }> {
  const parts: Float32Array[] = [];
  for await (const s of boxLeads(plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB)) parts.push(s.slice());
  const scan = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    scan.set(p, at);
    at += p.length;
  }
  const cached = await readBoxSlab(plan, plan.leads[0], plan.leads[1] + 1);
  return { scan, cached };
}

function sameValues(a: Float32Array, b: Float32Array, what: string): void {
  assert.equal(a.length, b.length, what);
  for (let i = 0; i < a.length; i++) {
    if (!Object.is(a[i], b[i])) assert.fail(`${what}: value ${i} is ${a[i]} by scan, ${b[i]} through the cache`);
  }
}

const GLOBE = { lat_min: -90, lat_max: 90, lon_min: 0, lon_max: 359 };

const BOXES = [
  { lat_min: -20, lat_max: 35, lon_min: 10, lon_max: 95 },
  { lat_min: -80, lat_max: 80, lon_min: 170, lon_max: 200 },
  { lat_min: 40, lat_max: 60, lon_min: -30, lon_max: 5 },
  GLOBE,
];

for (const kind of ["xarray v2 Blosc-lz4", "zarrita v3 Zstandard"] as const) {
  describe(`exports as scans: ${kind}`, () => {
    let root: string;
    let storeDir: string;
    let srv: TestServer;
    let group: string;
    let variable: string;
    before(async () => {
      if (kind === "xarray v2 Blosc-lz4") {
        root = tempDir("gridcast-scan-");
        storeDir = join(root, "store");
        execFileSync(PYTHON, [
          join(import.meta.dirname, "../python/xarray_forecast.py"),
          storeDir,
          "2.5",
          "2",
          "9",
          "16",
        ]);
        group = "forecast/global";
        variable = "t2m";
      } else {
        storeDir = await sampleStore();
        root = join(storeDir, "..");
        group = "forecast/global";
        variable = "msl";
      }
      srv = await testServer(storeDir);
    });
    after(async () => {
      await srv.close();
      cleanup(root);
    });

    const plan = (b: (typeof BOXES)[number], leads = [0, 5]) =>
      planBox(
        srv.running.ctx.store,
        srv.running.ctx.registry,
        { group, var: variable, time_index: 0, lead_start: leads[0], lead_stop: leads[1], ...b } as BoxRequest,
        1024,
      );

    test("every box equals the cached path's values, and the chunk cache is left alone", async () => {
      const cache = srv.running.ctx.store.cache;
      for (const b of BOXES) {
        const p = await plan(b);
        const leadDim = p.variable.roles.indexOf("lead");
        assert.ok(
          (ChunkScan.holdFor(p.variable.array, regionsOf(p), leadDim) ?? Infinity) <= DEFAULTS.scan_hold_mb * MIB,
          "not read as a scan",
        );
        cache.invalidate();
        const misses = cache.stats().misses;
        // Directory stores read chunk files straight into the scan's buffers, never with get.
        const inner = srv.running.ctx.store.backend.inner as DirectoryBackend;
        const got: string[] = [];
        const get = inner.get;
        inner.get = (key) => {
          got.push(key);
          return get.call(inner, key);
        };
        const parts: Float32Array[] = [];
        try {
          for await (const s of boxLeads(p, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB)) {
            parts.push(s.slice());
          }
        } finally {
          inner.get = get;
        }
        assert.deepEqual(got, [], "chunks were read with get, not into the scan's buffers");
        assert.equal(cache.stats().misses, misses, "a scan went through the chunk cache");
        const { scan, cached } = await bothWays(p);
        sameValues(scan, cached, JSON.stringify(b));
        assert.ok(cached.some((v) => !Number.isNaN(v)));
      }
    });

    test("many scans at once share the buffer pool without sharing a buffer", async () => {
      const plans = await Promise.all(BOXES.flatMap((b) => [plan(b, [0, 6]), plan(b, [2, 5])]));
      const expected = await Promise.all(plans.map((p) => readBoxSlab(p, p.leads[0], p.leads[1] + 1)));
      for (let round = 0; round < 3; round++) {
        const got = await Promise.all(
          plans.map(async (p) => {
            const parts: Float32Array[] = [];
            // Small slabs: many parts per scan, each decoded while others are copied.
            for await (const s of boxLeads(p, 64 * 1024, DEFAULTS.scan_hold_mb * MIB)) parts.push(s.slice());
            return parts;
          }),
        );
        for (const [i, parts] of got.entries()) {
          sameValues(concat(parts), expected[i], `scan ${i}, round ${round}`);
        }
      }
      assert.ok(pooledBytes() > 0, "no buffer came back to the pool");
    });

    test("an export over HTTP equals the cached path", async () => {
      const key = await srv.key(["weather"]);
      const b = BOXES[1];
      const q = new URLSearchParams({ var: variable, time_index: "0", lead_start: "0", lead_stop: "5" });
      for (const [k, v] of Object.entries(b)) q.set(k, String(v));
      const r = await get(`${srv.url}/api/export/${group.replace("/", "~")}/npy?${q}`, { "X-API-Key": key });
      assert.equal(r.status, 200);
      const p = await plan(b);
      const cached = await readBoxSlab(p, 0, 6);
      const body = r.body;
      const hlen = body.readUInt16LE(8);
      const data = new Float32Array(new Uint8Array(body.subarray(10 + hlen)).buffer);
      sameValues(data, cached, "HTTP export");
    });
  });
}

function regionsOf(p: BoxPlan) {
  return slabRegions(p, p.leads[0], p.leads[1] + 1);
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe("scans on a damaged store (xarray v2 Blosc-lz4)", () => {
  let root: string;
  let storeDir: string;
  let srv: TestServer;
  let key: string;
  const arrayDir = () => join(storeDir, "forecast", "global", "t2m");
  before(async () => {
    root = tempDir("gridcast-scan-faults-");
    const pristine = join(root, "pristine");
    execFileSync(PYTHON, [join(import.meta.dirname, "../python/xarray_forecast.py"), pristine, "2.5", "2", "9", "16"]);
    storeDir = join(root, "store");
    cpSync(pristine, storeDir, { recursive: true });
    srv = await testServer(storeDir);
    key = await srv.key(["weather"]);
  });
  after(async () => {
    await srv.close();
    cleanup(root);
  });
  /** Every lead of run 0 over the whole globe. */
  const globePlan = () =>
    planBox(
      srv.running.ctx.store,
      srv.running.ctx.registry,
      { group: "forecast/global", var: "t2m", time_index: 0, lead_start: 0, lead_stop: 8, ...GLOBE },
      1024,
    );
  const url = (q: Record<string, string>) =>
    `${srv.url}/api/export/forecast~global/npy?${new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: "8", lat_min: "-90", lat_max: "90", lon_min: "0", lon_max: "359", ...q })}`;

  test("a chunk that is not stored reads as the fill value (NaN), the rest as stored", async () => {
    const chunk = join(arrayDir(), "0.0.2.3");
    const good = readFileSync(chunk);
    rmSync(chunk);
    try {
      const r = await get(url({}), { "X-API-Key": key });
      assert.equal(r.status, 200);
      const hlen = r.body.readUInt16LE(8);
      const data = new Float32Array(new Uint8Array(r.body.subarray(10 + hlen)).buffer);
      const nan = data.filter((v) => Number.isNaN(v)).length;
      // One chunk of 9 leads × 16 × 16 cells is missing from the box (all leads, all its cells).
      assert.equal(nan, 9 * 16 * 16);
      const p = await globePlan();
      srv.running.ctx.store.cache.invalidate();
      sameValues(data, await readBoxSlab(p, 0, 9), "export with a missing chunk");
    } finally {
      writeFileSync(chunk, good);
    }
  });

  test("a stored chunk larger than any chunk of its shape is still read whole (past the one-job read)", async () => {
    // Blosc ignores bytes after the compressed size its header states; 4 MiB of them make the file
    // larger than the buffer the native read takes, so node:fs reads it at its own size instead.
    const chunk = join(arrayDir(), "0.0.1.1");
    const good = readFileSync(chunk);
    writeFileSync(chunk, Buffer.concat([good, Buffer.alloc(4 << 20)]));
    try {
      const p = await globePlan();
      // (The cached path sees files changed within the last 100 ms as they were: start it afresh.)
      await new Promise((ok) => setTimeout(ok, 150));
      srv.running.ctx.store.cache.invalidate();
      const { scan, cached } = await bothWays(p);
      sameValues(scan, cached, "padded chunk");
      assert.ok(!Number.isNaN(scan[0]));
    } finally {
      writeFileSync(chunk, good);
    }
  });

  test("a damaged chunk: 500 problem+json before any byte, the log names the store and key", async () => {
    const chunk = join(arrayDir(), "0.0.3.4");
    const good = readFileSync(chunk);
    for (const bad of [good.subarray(0, good.length >> 1), Buffer.alloc(good.length, 0xa5)]) {
      writeFileSync(chunk, bad);
      const before = srv.logs.length;
      try {
        const r = await getToEnd(url({}), { "X-API-Key": key });
        assert.equal(r.status, 500);
        const body = JSON.parse(r.got.toString());
        assert.equal(body.type, "/problems/corrupt-data");
        assert.doesNotMatch(r.got.toString(), /\/tmp|gridcast-scan/);
        const line = srv.logs.slice(before).find((e) => typeof e.key === "string");
        assert.ok(line, "no log line with the key");
        assert.match(String(line.key), /t2m\/0\.0\.3\.4$/);
        assert.match(String(line.store), /directory store/);
      } finally {
        writeFileSync(chunk, good);
      }
    }
    assert.equal((await get(url({}), { "X-API-Key": key })).status, 200);
  });

  test("a scan closed while its decodes are in flight gives every buffer back", async () => {
    const p = await globePlan();
    const scan = new ChunkScan(p.variable.array, p.variable.roles.indexOf("lead"));
    for (const r of regionsOf(p)) scan.prefetch(r);
    assert.ok(scan.holding > 0);
    scan.close();
    for (let i = 0; i < 200 && scan.holding > 0; i++) await new Promise((ok) => setTimeout(ok, 5));
    assert.equal(scan.holding, 0, "buffers still held after the scan closed");
  });
});

describe("a scan that fails after the headers went out (xarray v2, 3-lead chunks)", () => {
  let root: string;
  let storeDir: string;
  let srv: TestServer;
  before(async () => {
    root = tempDir("gridcast-scan-cut-");
    storeDir = join(root, "store");
    execFileSync(PYTHON, [
      join(import.meta.dirname, "../python/xarray_forecast.py"),
      storeDir,
      "2.5",
      "1",
      "9",
      "16",
      "3",
    ]);
    // Slabs of one lead: leads 3–5 (the second lead chunk) are read after the first slab is sent.
    srv = await testServer(storeDir, { read_slab_mb: 0 });
  });
  after(async () => {
    await srv.close();
    cleanup(root);
  });

  test("the body is cut short of Content-Length and the log names the store and the damaged chunk", async () => {
    const key = await srv.key(["weather"]);
    const q = globeQuery();
    const url = `${srv.url}/api/export/forecast~global/npy?${q}`;
    const whole = await getToEnd(url, { "X-API-Key": key });
    assert.equal(whole.ended, "complete");
    const chunk = join(storeDir, "forecast", "global", "t2m", "0.1.2.3");
    const good = readFileSync(chunk);
    writeFileSync(chunk, Buffer.alloc(good.length, 0xa5));
    const before = srv.logs.length;
    try {
      const r = await getToEnd(url, { "X-API-Key": key });
      assert.equal(r.status, 200, "headers went out with the first lead");
      assert.equal(r.ended, "cut");
      assert.ok(r.got.length < r.declared, `${r.got.length} of ${r.declared} bytes and no sign of a cut`);
      // What did arrive is the export's start, byte for byte.
      assert.ok(r.got.equals(whole.got.subarray(0, r.got.length)));
      const line = srv.logs.slice(before).find((e) => e.level === "error" && typeof e.key === "string");
      assert.ok(line, "no error log line naming the key");
      assert.match(String(line.key), /t2m\/0\.1\.2\.3$/);
      assert.match(String(line.store), /directory store/);
    } finally {
      writeFileSync(chunk, good);
    }
    await reservationsBack();
  });

  test("a client that leaves mid-body gives its scan's reservation back", async () => {
    const key = await srv.key(["weather"]);
    const q = globeQuery();
    for (let i = 0; i < 5; i++) {
      const ac = new AbortController();
      const r = await fetch(`${srv.url}/api/export/forecast~global/npy?${q}`, {
        headers: { "X-API-Key": key },
        signal: ac.signal,
      });
      const reader = r.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.read().catch(() => {});
    }
    await reservationsBack();
  });

  test("past the budget the export reads through the chunk cache, with the same values", async () => {
    const settings = srv.running.ctx.settings;
    const key = await srv.key(["weather"]);
    const q = globeQuery();
    const url = `${srv.url}/api/export/forecast~global/npy?${q}`;
    const cache = srv.running.ctx.store.cache;
    cache.invalidate();
    const misses = cache.stats().misses;
    const asScan = await getToEnd(url, { "X-API-Key": key });
    assert.equal(cache.stats().misses, misses);
    settings.scan_hold_mb = 0.01;
    try {
      const cached = await getToEnd(url, { "X-API-Key": key });
      assert.ok(cache.stats().misses > misses, "the export did not go through the chunk cache");
      assert.ok(cached.got.equals(asScan.got));
    } finally {
      settings.scan_hold_mb = DEFAULTS.scan_hold_mb;
    }
  });
});

/** Every scan's reservation is given back once its response has ended, whichever way it ended. */
async function reservationsBack(): Promise<void> {
  for (let i = 0; i < 200 && ChunkScan.reservedBytes !== 0; i++) await new Promise((ok) => setTimeout(ok, 10));
  assert.equal(ChunkScan.reservedBytes, 0, "a scan's reservation was never given back");
}

/** The query of an export of every lead of run 0 over the whole globe. */
function globeQuery(): URLSearchParams {
  const q = new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: "8" });
  for (const [k, v] of Object.entries(GLOBE)) q.set(k, String(v));
  return q;
}
