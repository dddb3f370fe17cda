// Dropped chunk-cache entries hand their memory back to the buffer pool, so cold reads decode into
// memory that is already paged in. What makes that safe: an entry is recycled only on a later
// macrotask (a reader that awaited it has read it by then), a leased entry only after its last
// release. On a store written by xarray, with a cache of two chunks and every returned buffer
// poisoned, hundreds of concurrent reads still give xarray's values; a leased chunk keeps its
// values while the cache drops it, and is recycled once released.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ChunkCache } from "../../src/store/chunk-cache.ts";
import { poisonReturned, pooledBytes } from "../../src/store/scan-buffers.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";
import { xarrayT2m } from "../helpers/xarray-t2m.ts";

poisonReturned(true);

const turn = () => new Promise((ok) => setImmediate(ok));

describe("recycling in the cache", () => {
  type E = { name: string; byteLength: number };
  // The order entries leave in is chunk-cache.test.ts's; these use the plain LRU for a known order.
  const make = () => {
    const recycled: string[] = [];
    const cache = new ChunkCache<E>(30, (v) => recycled.push(v.name), { policy: "lru" });
    const load =
      (k: string, byteLength = 10) =>
      async () => ({ name: k, byteLength });
    return { cache, recycled, load };
  };

  test("evicted, invalidated and replaced entries are recycled on a later macrotask, never at once", async () => {
    const { cache, recycled, load } = make();
    for (const k of ["a", "b", "c", "d"]) await cache.get(k, load(k)); // d evicts a
    assert.deepEqual([...recycled], [], "recycled before the readers' continuations ran");
    await turn();
    assert.deepEqual(recycled, ["a"]);
    cache.invalidate("b");
    await turn();
    assert.deepEqual(recycled, ["a", "b"]);
    // A value too large to cache is recycled once its takers had it.
    const big = await cache.get("big", load("big", 31));
    assert.equal(big.name, "big");
    await turn();
    assert.deepEqual(recycled, ["a", "b", "big"]);
    // A load that ran across an invalidate sets its key again: the value it replaces is dropped.
    let finish: (v: E) => void = () => {};
    const slow = cache.get("c", async () => new Promise<E>((ok) => (finish = ok)));
    cache.invalidate("c");
    await cache.get("c", load("c"));
    const c2 = cache.peek("c");
    finish({ name: "c-late", byteLength: 10 });
    await slow;
    await turn();
    assert.ok(recycled.includes("c"), "the invalidated c");
    assert.equal(recycled.filter((n) => n === "c").length, 1, "c recycled once");
    assert.ok(c2 && recycled.includes(c2.name));
    assert.equal(cache.stats().bytes, 10 * cache.stats().entries, "bytes counted once per entry");
  });

  test("a leased entry waits for its last release; a release without a lease throws", async () => {
    const { cache, recycled, load } = make();
    const a = await cache.lease("a", load("a"));
    const again = await cache.lease("a", load("a"));
    assert.equal(a, again);
    assert.equal(cache.leased, 2);
    for (const k of ["b", "c", "d"]) await cache.get(k, load(k)); // evicts a
    await turn();
    assert.deepEqual([...recycled], []);
    cache.release(a);
    await turn();
    assert.deepEqual([...recycled], [], "one lease still held");
    cache.release(a);
    await turn();
    assert.deepEqual(recycled, ["a"]);
    assert.equal(cache.leased, 0);
    assert.throws(() => cache.release(a), /release without a lease/);
    // Leased and still cached: releasing does not recycle it.
    const b = await cache.lease("b", load("b"));
    cache.release(b);
    await turn();
    assert.deepEqual(recycled, ["a"]);
    assert.equal(cache.peek("b"), b);
  });
});

describe("recycled chunk memory on an xarray v2 Blosc-lz4 store", () => {
  let root: string;
  let storeDir: string;
  let truth: Float32Array;
  // 2.5° grid (73 × 144), 2 runs, 9 leads, chunks 1 × 9 × 16 × 16 (9,216 bytes decoded).
  before(() => {
    root = tempDir("gridcast-recycle-");
    ({ storeDir, truth } = xarrayT2m(root));
  });
  after(() => cleanup(root));

  /** A store whose chunk cache holds two chunks: nearly every read evicts one. */
  const tinyCache = async () => {
    const store = new Store(storeDir, { cacheMb: (2.5 * 9216) / (1024 * 1024) });
    const g = await store.forecastGroup("forecast/global");
    return { store, array: g.variables.get("t2m")!.array };
  };
  const at = (r: number, k: number, i: number, j: number) => truth[((r * 9 + k) * 73 + i) * 144 + j];

  test("hundreds of concurrent cold point series read xarray's values while chunks are recycled", async () => {
    const { store, array } = await tinyCache();
    assert.ok(array.direct, "decoded directly into pooled buffers (what is recycled)");
    const pooledBefore = pooledBytes();
    for (let round = 0; round < 3; round++) {
      const points: [number, number, number][] = [];
      for (let n = 0; n < 300; n++) points.push([n % 2, (n * 7 + round * 13) % 73, (n * 31 + round * 5) % 144]);
      const got = await Promise.all(
        points.map(([r, i, j]) =>
          array.read([
            [r, r + 1],
            [0, 9],
            [i, i + 1],
            [j, j + 1],
          ]),
        ),
      );
      for (const [n, [r, i, j]] of points.entries()) {
        for (let k = 0; k < 9; k++) {
          if (!Object.is(got[n][k], at(r, k, i, j))) {
            assert.fail(`run ${r} lead ${k} (${i}, ${j}): ${got[n][k]}, xarray ${at(r, k, i, j)} (round ${round})`);
          }
        }
      }
      await turn();
    }
    assert.ok(store.cache.stats().misses > 100, "the cache was cold");
    assert.ok(pooledBytes() > pooledBefore, "no dropped chunk came back to the pool");
  });

  test("a leased chunk keeps its values while the cache drops it, and is recycled after release", async () => {
    const { store, array } = await tinyCache();
    const ch = await array.leaseChunk([0, 0, 1, 2]);
    const expect = (k: number, i: number, j: number) => at(0, k, 16 + i, 32 + j);
    const values = () => ch.data as Float32Array;
    assert.equal(values()[0], expect(0, 0, 0));
    // Every other chunk of run 0 passes through the cache: the leased one is dropped early on.
    for (let i = 0; i < 73; i += 16)
      for (let j = 0; j < 144; j += 16)
        await array.read([
          [0, 1],
          [0, 9],
          [i, i + 1],
          [j, j + 1],
        ]);
    await turn();
    await turn();
    for (let k = 0; k < 9; k++) {
      for (let i = 0; i < 16; i++) {
        for (let j = 0; j < 16; j++)
          assert.equal(values()[(k * 16 + i) * 16 + j], expect(k, i, j), `lead ${k} (${i}, ${j})`);
      }
    }
    assert.equal(store.cache.leased, 1);
    array.releaseChunk(ch);
    await turn();
    assert.equal(store.cache.leased, 0);
    // Recycled: the pool poisons what comes back.
    assert.equal(values()[0], new Float32Array(new Uint8Array(4).fill(0x7f).buffer)[0]);
  });
});
