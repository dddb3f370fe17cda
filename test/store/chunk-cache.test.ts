// The decoded-chunk cache evicts least recently used first, counting get() and peek() hits alike;
// a hit on the entry already most recent skips the reordering without changing the order.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChunkCache } from "../../src/store/chunk-cache.ts";

const entry = (name: string) => ({ name, byteLength: 10 });

test("least recently used goes first, whichever way the hits come", async () => {
  const cache = new ChunkCache<{ name: string; byteLength: number }>(30);
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
