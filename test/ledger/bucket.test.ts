// Token bucket arithmetic on a fake clock: the cases real time makes slow or flaky.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryBuckets } from "../../src/ledger/bucket.ts";

test("a long idle spell refills to the burst, not beyond", () => {
  let now = 0;
  const b = new MemoryBuckets(() => now);
  for (let i = 0; i < 3; i++) assert.equal(b.take("k", 2, 3).ok, true);
  assert.equal(b.take("k", 2, 3).ok, false);
  now += 60_000;
  const admitted = Array.from({ length: 10 }, () => b.take("k", 2, 3).ok).filter(Boolean).length;
  assert.equal(admitted, 3);
});

test("retryAfter is the time to the next whole token, and waiting it is enough", () => {
  let now = 0;
  const b = new MemoryBuckets(() => now);
  assert.equal(b.take("k", 0.5, 1).ok, true);
  const refused = b.take("k", 0.5, 1);
  assert.deepEqual(refused, { ok: false, retryAfterSeconds: 2.001, remaining: 0, limit: 1 });
  now += 1_990;
  assert.equal(b.take("k", 0.5, 1).ok, false);
  now += 11;
  assert.equal(b.take("k", 0.5, 1).ok, true);
});

test("a clock that steps back does not mint tokens", () => {
  let now = 10_000;
  const b = new MemoryBuckets(() => now);
  assert.equal(b.take("k", 1, 1).ok, true);
  now = 0;
  assert.equal(b.take("k", 1, 1).ok, false);
});
