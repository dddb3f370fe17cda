// The decoded-chunk cache: under its default segmented policy a chunk used once sits in probation
// and is the first to go, one used again is protected (up to PROTECTED_SHARE of the budget), so a
// read that sweeps more chunks than the cache holds cannot evict what other reads keep coming
// back to, and a load asked with admit false is handed over and not kept. The former policy
// ("lru") evicts least recently used first, counting get() and peek() hits alike; a hit on the
// entry already most recent skips the reordering without changing the order.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChunkCache, PROTECTED_SHARE } from "../../src/store/chunk-cache.ts";

const entry = (name: string) => ({ name, byteLength: 10 });

test("lru: least recently used goes first, whichever way the hits come", async () => {
  const cache = new ChunkCache<{ name: string; byteLength: number }>(30, undefined, { policy: "lru" });
  const load = (k: string) => async () => entry(k);
  for (const k of ["a", "b", "c"]) await cache.get(k, load(k));
  assert.equal(cache.peek("c")?.name, "c"); // already the newest
  assert.equal((await cache.get("a", load("a"))).name, "a"); // a moves to the end: b, c, a
  assert.equal(cache.peek("a")?.name, "a");
  await cache.get("d", load("d")); // evicts b
  assert.equal(cache.peek("b"), undefined);
  assert.deepEqual(
    ["c", "a", "d"].map((k) => cache.peek(k)?.name),
    ["c", "a", "d"],
  ); // order now c, a, d
  cache.peek("c"); // a, d, c
  cache.peek("c");
  await cache.get("e", load("e")); // evicts a
  assert.equal(cache.peek("a"), undefined);
  assert.equal(cache.peek("d")?.name, "d");
  cache.invalidate("d"); // the newest entry goes: order c, e
  await cache.get("f", load("f")); // c, e, f
  cache.peek("c"); // e, f, c
  await cache.get("g", load("g")); // evicts e
  assert.equal(cache.peek("e"), undefined);
  assert.deepEqual(
    ["f", "c", "g"].map((k) => cache.peek(k)?.name),
    ["f", "c", "g"],
  );
  const s = cache.stats();
  assert.equal(s.entries, 3);
  assert.equal(s.bytes, 30);
});

test("peek counts a hit like get() and leaves a miss uncounted", async () => {
  const cache = new ChunkCache<{ name: string; byteLength: number }>(100);
  assert.equal(cache.peek("x"), undefined);
  assert.deepEqual([cache.hits, cache.misses], [0, 0]);
  await cache.get("x", async () => entry("x"));
  assert.deepEqual([cache.hits, cache.misses], [0, 1]);
  cache.peek("x");
  await cache.get("x", async () => entry("x"));
  assert.deepEqual([cache.hits, cache.misses], [2, 1]);
});

type E = { name: string; byteLength: number };
const turn = () => new Promise((ok) => setImmediate(ok));

/** Two chunks used twice (a repeated small request), then a sweep of 25 chunks through a cache of 10. */
async function sweepAfterWorkingSet(policy: "slru" | "lru"): Promise<ChunkCache<E>> {
  const cache = new ChunkCache<E>(100, undefined, { policy });
  const load = (k: string) => async () => entry(k);
  for (let i = 0; i < 2; i++) for (const k of ["w1", "w2"]) await cache.get(k, load(k));
  for (let n = 0; n < 25; n++) await cache.get(`scan${n}`, load(`scan${n}`));
  return cache;
}

test("slru: chunks used twice outlive a sweep of more chunks than the cache holds; lru loses them", async () => {
  const slru = await sweepAfterWorkingSet("slru");
  assert.equal(slru.peek("w1")?.name, "w1");
  assert.equal(slru.peek("w2")?.name, "w2");
  const s = slru.stats();
  assert.equal(s.bytes, 100);
  assert.equal(s.protectedBytes, 20);
  // The sweep kept only its own most recent chunks, in probation.
  assert.equal(slru.peek("scan24")?.name, "scan24");
  assert.equal(slru.peek("scan10"), undefined);
  const lru = await sweepAfterWorkingSet("lru");
  assert.equal(lru.peek("w1"), undefined);
  assert.equal(lru.peek("w2"), undefined);
});

test("slru: protected holds at most its share; its least recent go back to probation, then out first", async () => {
  const cache = new ChunkCache<E>(100);
  const load = (k: string) => async () => entry(k);
  for (let n = 0; n < 10; n++) await cache.get(`k${n}`, load(`k${n}`));
  for (let n = 0; n < 10; n++) cache.peek(`k${n}`); // every one used twice: k0, k1 no longer fit
  assert.equal(cache.stats().protectedBytes, 100 * PROTECTED_SHARE);
  assert.equal(cache.stats().bytes, 100);
  await cache.get("new", load("new")); // room made from probation: k0 (demoted first) goes
  assert.equal(cache.peek("k0"), undefined);
  assert.equal(cache.peek("k1")?.name, "k1"); // used a third time: protected again, k2 demoted
  await cache.get("new2", load("new2"));
  await cache.get("new3", load("new3"));
  assert.equal(cache.peek("k9")?.name, "k9");
  assert.equal(cache.stats().entries, 10);
});

test("slru: a load shared by two requests is a second use; admit false hands the value over and keeps nothing", async () => {
  const recycled: string[] = [];
  const cache = new ChunkCache<E>(100, (v) => recycled.push(v.name));
  let finish: (v: E) => void = () => {};
  const first = cache.get("s", () => new Promise<E>((ok) => (finish = ok)));
  const second = cache.get("s", async () => entry("never"));
  finish(entry("s"));
  assert.equal((await first).name, "s");
  assert.equal((await second).name, "s");
  assert.equal(cache.stats().protectedBytes, 10, "shared load protected");
  // Not admitted: both takers get it, nothing is kept, it is recycled only on a later macrotask.
  let done: (v: E) => void = () => {};
  const a = cache.get("x", () => new Promise<E>((ok) => (done = ok)), false);
  const b = cache.get("x", async () => entry("never"));
  done(entry("x"));
  assert.equal((await a).name, "x");
  assert.equal((await b).name, "x");
  assert.equal(cache.peek("x"), undefined);
  assert.equal(cache.stats().bypassed, 1);
  assert.deepEqual(recycled, []);
  await turn();
  assert.deepEqual(recycled, ["x"]);
  // A leased value that is not kept waits for its release before it is recycled.
  const leased = await cache.lease("y", async () => entry("y"), false);
  await turn();
  assert.deepEqual(recycled, ["x"]);
  cache.release(leased);
  await turn();
  assert.deepEqual(recycled, ["x", "y"]);
  // The former policy keeps what it loads whatever it is asked.
  const lru = new ChunkCache<E>(100, undefined, { policy: "lru" });
  await lru.get("z", async () => entry("z"), false);
  assert.equal(lru.peek("z")?.name, "z");
});
