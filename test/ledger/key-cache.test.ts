// The in-process key cache in front of a real (threaded sqlite) ledger: one lookup per id per TTL
// for known and unknown ids alike, revocation through the cache at once and from elsewhere within
// the TTL, expiry and scope checked on every request, no stale refill after a revocation.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ForbiddenError, UnauthorizedError } from "../../src/errors.ts";
import { KeyCachingLedger } from "../../src/ledger/key-cache.ts";
import { openLedger } from "../../src/ledger/open.ts";
import type { KeyLookup, Ledger } from "../../src/ledger/types.ts";

const TTL = 400;
let dir: string;
let inner: Ledger;
let other: Ledger;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gridcast-keycache-"));
  inner = await openLedger(join(dir, "l.db"));
  other = await openLedger(join(dir, "l.db")); // another process's view (the CLI, a second server)
});
after(async () => {
  await inner.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

test("known, wrong-secret and unknown ids each reach the ledger once per TTL", async () => {
  const cache = new KeyCachingLedger(inner, 60_000);
  const { key, record } = await cache.createKey({ name: "c", scopes: ["weather"], credits: 0, rate: 0 });
  const wrongSecret = `gck_${record.id}_${"A".repeat(43)}`;
  const unknown = key.replace(record.id, record.id === "0".repeat(12) ? "1".repeat(12) : "0".repeat(12));
  const before = cache.lookups;
  await Promise.all(Array.from({ length: 20 }, () => cache.authenticate(key, "weather")));
  for (let i = 0; i < 20; i++) {
    assert.equal((await cache.authenticate(key, "weather")).id, record.id);
    // Both refusals read the same way: the same class and message, from the same code path.
    for (const bad of [wrongSecret, unknown]) {
      await assert.rejects(cache.authenticate(bad, "weather"), (e) => {
        assert.ok(e instanceof UnauthorizedError);
        assert.equal(e.message, "invalid API key");
        return true;
      });
    }
  }
  assert.equal(cache.lookups - before, 2, "one lookup for the known id, one for the unknown one");
});

test("revoked through the cache: refused at once; revoked elsewhere: refused within the TTL", async () => {
  const cache = new KeyCachingLedger(inner, TTL);
  const a = await cache.createKey({ name: "a", scopes: ["weather"], credits: 0, rate: 0 });
  await cache.authenticate(a.key, "weather");
  await cache.revokeKey(a.record.id);
  await assert.rejects(cache.authenticate(a.key, "weather"), /revoked/);

  const b = await cache.createKey({ name: "b", scopes: ["weather"], credits: 0, rate: 0 });
  await cache.authenticate(b.key, "weather");
  const revokedAt = performance.now();
  await other.revokeKey(b.record.id);
  let refused = false;
  while (!refused && performance.now() - revokedAt < TTL + 1000) {
    refused = await cache.authenticate(b.key, "weather").then(
      () => false,
      (e) => e instanceof UnauthorizedError,
    );
    if (!refused) await sleep(20);
  }
  assert.ok(refused, "a key revoked elsewhere was still accepted after the TTL");
  assert.ok(performance.now() - revokedAt < TTL + 1000);
});

test("expiry and scope are checked on every request, cached or not", async () => {
  const cache = new KeyCachingLedger(inner, 60_000);
  const soon = new Date(Date.now() + 300);
  const k = await cache.createKey({ name: "e", scopes: ["weather"], credits: 0, rate: 0, expiresAt: soon });
  assert.equal((await cache.authenticate(k.key, "weather")).id, k.record.id);
  await assert.rejects(cache.authenticate(k.key, "embeddings"), ForbiddenError);
  await sleep(Math.max(0, soon.getTime() - Date.now()) + 20);
  await assert.rejects(cache.authenticate(k.key, "weather"), /expired/);
});

test("a lookup in flight when the key is revoked does not refill the cache with the old record", async () => {
  let release!: () => void;
  const gate = new Promise<void>((ok) => (release = ok));
  let readRow!: () => void;
  const rowRead = new Promise<void>((ok) => (readRow = ok));
  // A ledger whose lookups wait for the test to let them through, so the revocation lands mid-lookup.
  const slow: Ledger = Object.create(inner);
  slow.lookupKey = async (id: string): Promise<KeyLookup | null> => {
    const found = await inner.lookupKey(id);
    readRow();
    await gate;
    return found;
  };
  slow.revokeKey = (id: string) => inner.revokeKey(id);
  const cache = new KeyCachingLedger(slow, 60_000);
  const k = await inner.createKey({ name: "r", scopes: ["weather"], credits: 0, rate: 0 });
  const pending = cache.authenticate(k.key, "weather");
  await rowRead; // the lookup has read the row (before the revocation) and waits
  await cache.revokeKey(k.record.id);
  release();
  await pending; // it read the key before the revocation: that request may pass
  await assert.rejects(cache.authenticate(k.key, "weather"), /revoked/);
});

test("a wrong secret for a known id and an unknown id do the same work: one hash, one comparison", async () => {
  const cache = new KeyCachingLedger(inner, 60_000);
  const { key, record } = await cache.createKey({ name: "ct", scopes: ["weather"], credits: 0, rate: 0 });
  const wrongSecret = `gck_${record.id}_${"A".repeat(43)}`;
  const unknown = key.replace(record.id, record.id === "0".repeat(12) ? "1".repeat(12) : "0".repeat(12));
  for (const k of [wrongSecret, unknown]) await cache.authenticate(k, "weather").catch(() => {}); // cache both ids
  // Count the crypto calls the key check makes, through node's own export table.
  const calls = { hash: 0, compare: 0, compared: [] as number[] };
  const { hash, timingSafeEqual } = crypto;
  crypto.hash = ((...a: Parameters<typeof hash>) => {
    calls.hash++;
    return hash(...a);
  }) as typeof hash;
  crypto.timingSafeEqual = (a, b) => {
    calls.compare++;
    calls.compared.push(a.byteLength, b.byteLength);
    return timingSafeEqual(a, b);
  };
  syncBuiltinESMExports();
  const work: (typeof calls)[] = [];
  try {
    for (const k of [wrongSecret, unknown]) {
      Object.assign(calls, { hash: 0, compare: 0, compared: [] });
      await assert.rejects(cache.authenticate(k, "weather"), /invalid API key/);
      work.push(structuredClone(calls));
    }
  } finally {
    crypto.hash = hash;
    crypto.timingSafeEqual = timingSafeEqual;
    syncBuiltinESMExports();
  }
  assert.deepEqual(work[0], { hash: 1, compare: 1, compared: [32, 32] });
  assert.deepEqual(work[1], work[0]);
});
