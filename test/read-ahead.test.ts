// Slab buffers: a recycled buffer comes back for a slab that fits, always all NaN, never for one
// it would be too large or too small for, nor while a later part of it is still out; reading ahead
// keeps order and surfaces errors in turn.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readAhead, recycleSlab, slab, slabParts } from "../src/read-ahead.ts";

describe("slab buffers", () => {
  test("a recycled buffer is reused for a slab that fits, and comes back all NaN", () => {
    const a = slab(1000);
    assert.ok(a.every(Number.isNaN));
    a.fill(7);
    recycleSlab(a);
    const b = slab(900);
    assert.equal(b.buffer, a.buffer, "the recycled buffer was not reused");
    assert.equal(b.length, 900);
    assert.ok(b.every(Number.isNaN), "a reused slab kept old values");
    // Taken: the next slab is a new buffer.
    assert.notEqual(slab(900).buffer, a.buffer);
  });

  test("buffers more than twice the size asked for, or too small, are not handed out", () => {
    const big = slab(10_000);
    recycleSlab(big);
    assert.notEqual(slab(100).buffer, big.buffer);
    assert.notEqual(slab(20_000).buffer, big.buffer);
    assert.equal(slab(6_000).buffer, big.buffer);
  });

  test("views into a larger buffer are never recycled", () => {
    const whole = new Float32Array(4096);
    recycleSlab(whole.subarray(1024));
    assert.notEqual(slab(3072).buffer, whole.buffer);
  });
});

describe("a slab sent in two parts", () => {
  test("the first part hands nothing back (the second may still be being written), the second the whole slab", () => {
    const whole = slab(4096);
    const [head, tail] = slabParts(whole, 1024);
    assert.equal(head.length + tail.length, 4096);
    recycleSlab(head);
    assert.notEqual(slab(4096).buffer, whole.buffer, "the first part gave the slab back while the second was out");
    recycleSlab(tail);
    assert.equal(slab(4096).buffer, whole.buffer, "the last part did not give the slab back");
  });
});

describe("readAhead", () => {
  test("yields in order and starts each read one part early", async () => {
    const started: number[] = [];
    const seen: number[] = [];
    for await (const v of readAhead([1, 2, 3, 4], async (p) => {
      started.push(p);
      return p * 10;
    })) {
      seen.push(v);
      // While part i is handled, part i+1 has been started, and nothing further.
      assert.deepEqual(started, [1, 2, 3, 4].slice(0, Math.min(4, seen.length + 1)));
    }
    assert.deepEqual(seen, [10, 20, 30, 40]);
  });

  test("warming runs two parts ahead of the consumer; a failed warm-up is left for the read to report", async () => {
    const warmed: number[] = [];
    const seen: number[] = [];
    const parts = readAhead(
      [0, 1, 2, 3, 4],
      async (p) => p,
      async (p) => {
        warmed.push(p);
        if (p === 3) throw new Error("warming failed");
      },
    );
    for await (const v of parts) {
      seen.push(v);
      // Handling part i: part i+1 is being read and part i+2 warmed.
      assert.deepEqual(warmed, [2, 3, 4].slice(0, Math.max(0, Math.min(3, v + 1))));
    }
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  });

  test("a failing read surfaces when its turn comes; a consumer that stops leaves no unhandled rejection", async () => {
    const parts = readAhead([1, 2, 3], async (p) => {
      if (p === 2) throw new Error("part 2 failed");
      return p;
    });
    assert.deepEqual(await parts.next(), { value: 1, done: false });
    await assert.rejects(parts.next(), /part 2 failed/);
    // Stopping right after the first part, with the failing second one already started.
    const stopped = readAhead([1, 2], async (p) => {
      if (p === 2) throw new Error("nobody waits for this");
      return p;
    });
    await stopped.next();
    await stopped.return(undefined);
    await new Promise((ok) => setTimeout(ok, 20));
  });
});
