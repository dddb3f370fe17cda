// The /data token waiter over the real in-process buckets: FIFO pacing, the wait bound, and a
// client that leaves while waiting.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TokenWaiter } from "../../src/http/rate-wait.ts";
import { MemoryBuckets } from "../../src/ledger/bucket.ts";

const ledger = () => {
  const b = new MemoryBuckets();
  return { checkRate: async (id: string, rate: number, burst: number) => b.take(id, rate, burst) };
};

test("a burst beyond the bucket is paced, first come first served, none refused", async () => {
  const w = new TokenWaiter(ledger(), 5000);
  const order: number[] = [];
  const all = await Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      w.take("k", 40, 1).then((d) => {
        order.push(i);
        return d;
      }),
    ),
  );
  assert.ok(all.every((d) => d.ok));
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
  assert.equal(w.waiting("k"), 0);
});

test("past the wait bound the refusal stands (429 upstream), and other keys are not held up", async () => {
  const w = new TokenWaiter(ledger(), 200);
  assert.ok((await w.take("slow", 1, 1)).ok);
  const refused = await w.take("slow", 1, 1);
  assert.equal(refused.ok, false);
  assert.ok(refused.retryAfterSeconds > 0.2);
  assert.ok((await w.take("other", 1, 1)).ok);
});

test("a client that leaves stops waiting and leaves no waiter behind", async () => {
  const w = new TokenWaiter(ledger(), 30_000);
  assert.ok((await w.take("k", 0.2, 1)).ok);
  const gone = new AbortController();
  const pending = w.take("k", 0.2, 1, gone.signal);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(w.waiting("k"), 1);
  gone.abort();
  const d = await pending;
  assert.equal(d.ok, false);
  assert.equal(w.waiting("k"), 0);
});

test("with wait 0 nothing waits (the refuse behaviour)", async () => {
  const w = new TokenWaiter(ledger(), 0);
  assert.ok((await w.take("k", 1, 1)).ok);
  assert.equal((await w.take("k", 1, 1)).ok, false);
  assert.equal(w.waiting("k"), 0);
});
