// StampMemo.peek answers without a promise exactly what get() would resolve with at once, and
// asks for a fresh version in the background on the same schedule; NOT_YET before the first one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { NOT_YET, StampMemo } from "../../src/store/stamp-memo.ts";

test("peek: NOT_YET until a version is in hand, then get()'s answer, refreshed after the TTL", async () => {
  const memo = new StampMemo(50);
  let version = "v1";
  let asked = 0;
  const ask = async () => {
    asked++;
    return version;
  };
  assert.equal(memo.peek("k", ask), NOT_YET);
  assert.equal(asked, 0, "peek never starts the first read; get() does");
  assert.equal(await memo.get("k", ask), "v1");
  assert.equal(memo.peek("k", ask), "v1");
  assert.equal(asked, 1, "fresh: nothing asked");
  version = "v2";
  await sleep(80);
  assert.equal(memo.peek("k", ask), "v1", "stale: the version in hand, as get() answers");
  assert.equal(asked, 2, "and a fresh one asked for in the background");
  assert.equal(memo.peek("k", ask), "v1");
  assert.equal(asked, 2, "one background ask at a time");
  await sleep(0);
  assert.equal(memo.peek("k", ask), "v2");
  assert.equal(await memo.get("k", ask), "v2");
});

test("peek: an absent object (undefined) is an answer, not NOT_YET", async () => {
  const memo = new StampMemo(1000);
  const ask = async () => undefined;
  await memo.get("gone", ask);
  assert.equal(memo.peek("gone", ask), undefined);
});

test("the first get() asks even in a process younger than the TTL", async () => {
  const memo = new StampMemo(1e12); // longer than performance.now() has run
  assert.equal(await memo.get("k", async () => "v1"), "v1");
  assert.equal(
    memo.peek("k", async () => "v2"),
    "v1",
  );
});
