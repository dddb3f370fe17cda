// The behaviour every Ledger must show, run once per implementation (sqlite.test.ts, postgres.test.ts).
// Not a test file itself: it only exports ledgerSuite().
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ForbiddenError,
  InsufficientCreditsError,
  InvalidParameterError,
  LedgerUnavailableError,
  NotFoundError,
  UnauthorizedError,
} from "../../src/errors.ts";
import type { Ledger } from "../../src/ledger/types.ts";

export interface Backend {
  /** A fresh ledger instance on the backend's one store. */
  open(): Promise<Ledger>;
  /** Another independent writer on the same store, as another server process would be. */
  second(): Promise<Pick<Ledger, "charge" | "close">>;
  /** Every row of the keys table, raw, as the database holds it. */
  keyRows(): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

const KEY_RE = /^gck_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** Fires `n` charges of cost 1 at once, alternating between the given ledgers; counts the outcomes. */
async function race(ledgers: Pick<Ledger, "charge">[], keyId: string, n: number, round: number) {
  const outcomes = await Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      ledgers[i % ledgers.length].charge({ keyId, cost: 1, route: "/race", item: `r${round}`, requestId: `${i}` }),
    ),
  );
  let ok = 0;
  let refused = 0;
  for (const o of outcomes) {
    if (o.status === "fulfilled") {
      ok++;
      assert.ok(o.value.remaining >= 0, "balance went negative");
    } else {
      assert.ok(o.reason instanceof InsufficientCreditsError, `unexpected ${o.reason}`);
      assert.equal(o.reason.extensions.cost, 1);
      assert.ok((o.reason.extensions.balance as number) >= 0);
      refused++;
    }
  }
  return { ok, refused };
}

export function ledgerSuite(name: string, makeBackend: () => Promise<Backend | null>): void {
  describe(`${name} ledger`, () => {
    let backend: Backend;
    let ledger: Ledger;
    let skip = false;

    before(async () => {
      const b = await makeBackend();
      if (!b) {
        skip = true;
        return;
      }
      backend = b;
      ledger = await backend.open();
    });
    after(async () => {
      await ledger?.close();
      await backend?.cleanup();
    });

    // Returns true when the test should stop because the backend is not available here.
    const skipped = (t: { skip: (msg: string) => void }) => {
      if (skip) t.skip(`${name} not reachable`);
      return skip;
    };

    test("creates a key, shows it once, and authenticates it", async (t) => {
      if (skipped(t)) return;
      const { key, record } = await ledger.createKey({ name: "alice", scopes: ["weather"], credits: 3, rate: 2 });
      const m = KEY_RE.exec(key);
      assert.ok(m, `key format: ${key}`);
      assert.equal(m[1], record.id);
      assert.deepEqual(
        { name: record.name, scopes: record.scopes, credits: record.credits, rate: record.rate, burst: record.burst },
        { name: "alice", scopes: ["weather"], credits: 3, rate: 2, burst: 2 },
      );
      assert.equal(record.revokedAt, null);
      assert.equal(record.expiresAt, null);
      assert.ok(Number.isFinite(Date.parse(record.createdAt)));
      assert.deepEqual(await ledger.authenticate(key, "weather"), record);
      assert.deepEqual(await ledger.getKey(record.id), record);
      assert.equal(await ledger.getKey("000000000000"), null);
      assert.ok((await ledger.listKeys()).some((k) => k.id === record.id));
      assert.ok(!JSON.stringify(await ledger.listKeys()).includes(m[2]), "listing leaks the secret");
    });

    test("stores only a hash: the plaintext is nowhere in the keys table", async (t) => {
      if (skipped(t)) return;
      const { key } = await ledger.createKey({ name: "hash", scopes: ["weather"], credits: 0, rate: 0 });
      const secret = KEY_RE.exec(key)![2];
      const dump = (await backend.keyRows())
        .flatMap((row) => Object.values(row))
        .map((v) => (v instanceof Uint8Array ? `${Buffer.from(v).toString("hex")} ${Buffer.from(v).toString()}` : v))
        .join(" | ");
      assert.ok(dump.length > 0);
      for (const needle of [key, secret, Buffer.from(secret).toString("hex"), Buffer.from(key).toString("base64")]) {
        assert.ok(!dump.includes(needle), "plaintext key material found in the keys table");
      }
    });

    test("refuses missing, malformed, unknown and wrong keys with UnauthorizedError", async (t) => {
      if (skipped(t)) return;
      const { key, record } = await ledger.createKey({ name: "bob", scopes: ["weather"], credits: 0, rate: 0 });
      const wrongSecret = `gck_${record.id}_${"A".repeat(43)}`;
      const unknownId = key.replace(record.id, record.id === "ffffffffffff" ? "eeeeeeeeeeee" : "ffffffffffff");
      for (const bad of [undefined, null, "", "nope", `${key}x`, key.slice(0, -1), wrongSecret, unknownId]) {
        await assert.rejects(ledger.authenticate(bad, "weather"), UnauthorizedError, `accepted ${bad}`);
      }
      await assert.rejects(ledger.authenticate(undefined, "weather"), /missing/);
      await assert.rejects(ledger.authenticate(wrongSecret, "weather"), /invalid/);
    });

    test("refuses revoked and expired keys, and keys without the scope", async (t) => {
      if (skipped(t)) return;
      const a = await ledger.createKey({ name: "rev", scopes: ["weather", "embeddings"], credits: 0, rate: 0 });
      await ledger.authenticate(a.key, "embeddings");
      const revoked = await ledger.revokeKey(a.record.id);
      assert.ok(revoked.revokedAt);
      await assert.rejects(
        ledger.authenticate(a.key, "weather"),
        (e) => e instanceof UnauthorizedError && /revoked/.test(e.message),
      );
      assert.equal((await ledger.revokeKey(a.record.id)).revokedAt, revoked.revokedAt, "revoking twice moved the time");
      await assert.rejects(ledger.revokeKey("000000000000"), NotFoundError);

      const past = new Date(Date.now() - 60_000);
      const e = await ledger.createKey({ name: "old", scopes: ["weather"], credits: 0, rate: 0, expiresAt: past });
      assert.equal(e.record.expiresAt, past.toISOString());
      await assert.rejects(
        ledger.authenticate(e.key, "weather"),
        (x) => x instanceof UnauthorizedError && /expired/.test(x.message),
      );
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const f = await ledger.createKey({ name: "new", scopes: ["weather"], credits: 0, rate: 0, expiresAt: future });
      assert.equal((await ledger.authenticate(f.key, "weather")).id, f.record.id);

      await assert.rejects(ledger.authenticate(f.key, "embeddings"), (x) => {
        assert.ok(x instanceof ForbiddenError);
        assert.equal(x.extensions.required_scope, "embeddings");
        return true;
      });
    });

    test("validates createKey input", async (t) => {
      if (skipped(t)) return;
      const base = { name: "v", scopes: ["weather" as const], credits: 0, rate: 0 };
      await assert.rejects(ledger.createKey({ ...base, scopes: ["maps" as "weather"] }), InvalidParameterError);
      await assert.rejects(ledger.createKey({ ...base, scopes: [] }), InvalidParameterError);
      await assert.rejects(ledger.createKey({ ...base, credits: -1 }), InvalidParameterError);
      await assert.rejects(ledger.createKey({ ...base, credits: 1.5 }), InvalidParameterError);
      await assert.rejects(ledger.createKey({ ...base, rate: 5, burst: 0 }), InvalidParameterError);
      await assert.rejects(ledger.createKey({ ...base, expiresAt: "not a date" }), InvalidParameterError);
    });

    test("charges credits, logs usage and refuses what the balance does not cover", async (t) => {
      if (skipped(t)) return;
      const { record } = await ledger.createKey({ name: "meter", scopes: ["embeddings"], credits: 5, rate: 0 });
      const id = record.id;
      assert.deepEqual(
        await ledger.charge({
          keyId: id,
          cost: 3,
          route: "/api/embeddings/npy",
          item: "x",
          bytes: 99,
          requestId: "q1",
        }),
        { charged: 3, remaining: 2 },
      );
      await assert.rejects(ledger.charge({ keyId: id, cost: 3, route: "/api/embeddings/npy" }), (e) => {
        assert.ok(e instanceof InsufficientCreditsError);
        assert.deepEqual(e.extensions, { balance: 2, cost: 3 });
        return true;
      });
      assert.equal(await ledger.balance(id), 2);
      assert.equal(await ledger.addCredits(id, 10), 12);
      assert.deepEqual(await ledger.charge({ keyId: id, cost: 12, route: "/api/embeddings/item" }), {
        charged: 12,
        remaining: 0,
      });
      const rows = await ledger.usage(id);
      assert.equal(rows.length, 2, "a refused charge must not log usage");
      assert.deepEqual(
        { ...rows[0], at: undefined },
        { keyId: id, route: "/api/embeddings/npy", item: "x", cost: 3, bytes: 99, at: undefined, requestId: "q1" },
      );
      assert.ok(Number.isFinite(Date.parse(rows[0].at)));
      assert.deepEqual([rows[1].item, rows[1].bytes, rows[1].requestId, rows[1].cost], [null, 0, null, 12]);
      assert.ok((await ledger.usage()).length >= 2);

      await assert.rejects(ledger.charge({ keyId: id, cost: -1, route: "/x" }), InvalidParameterError);
      await assert.rejects(ledger.addCredits(id, 0), InvalidParameterError);
      await assert.rejects(ledger.addCredits("000000000000", 5), NotFoundError);
      await assert.rejects(ledger.balance("000000000000"), NotFoundError);
      await assert.rejects(ledger.charge({ keyId: "000000000000", cost: 1, route: "/x" }), NotFoundError);
    });

    test("settle lowers one request's charge to what was delivered, never raises it, and repeats safely", async (t) => {
      if (skipped(t)) return;
      const { record } = await ledger.createKey({ name: "settle", scopes: ["embeddings"], credits: 20, rate: 0 });
      const id = record.id;
      const npy = { keyId: id, route: "/api/embeddings/npy/{name}", item: "i" };
      await ledger.charge({ ...npy, cost: 9, bytes: 8_388_736, requestId: "cut" });
      await ledger.charge({ ...npy, cost: 4, bytes: 100, requestId: "gone" });
      await ledger.charge({ ...npy, cost: 2, bytes: 50, requestId: "kept" });
      assert.equal(await ledger.balance(id), 5);
      // Cut after 3 MiB and a bit: 1 + 4 credits stay, 4 come back; the row records the bytes sent.
      assert.equal(await ledger.settle(id, "cut", 5, 3_200_000), 4);
      assert.equal(await ledger.settle(id, "cut", 5, 3_200_000), 0, "a repeat gives nothing back");
      assert.equal(await ledger.settle(id, "cut", 9, 8_388_736), 0, "a settle never raises a charge");
      // Cut before its first body byte: nothing stays, the row goes.
      assert.equal(await ledger.settle(id, "gone", 0, 0), 4);
      assert.equal(await ledger.settle(id, "gone", 0, 0), 0);
      assert.equal(await ledger.settle(id, "unknown", 0, 0), 0);
      assert.equal(await ledger.settle("000000000000", "kept", 0, 0), 0, "another key's request is untouched");
      assert.equal(await ledger.balance(id), 13);
      const rows = (await ledger.usage(id)).map((u) => [u.requestId, u.cost, u.bytes]);
      assert.deepEqual(rows, [
        ["cut", 5, 3_200_000],
        ["kept", 2, 50],
      ]);
      await assert.rejects(ledger.settle(id, "kept", -1, 0), InvalidParameterError);
      await assert.rejects(ledger.settle(id, "kept", 1.5, 0), InvalidParameterError);
      assert.equal(await ledger.balance(id), 13);
    });

    for (const mode of ["one instance", "two instances"] as const) {
      test(`metering race (${mode}): 50 concurrent charges against 10 credits, 20 rounds`, async (t) => {
        if (skipped(t)) return;
        const { record } = await ledger.createKey({
          name: `race ${mode}`,
          scopes: ["embeddings"],
          credits: 10,
          rate: 0,
        });
        // Two writers that are both separate from `ledger`, so neither gets an edge by sharing its thread.
        const others = mode === "two instances" ? [await backend.second(), await backend.second()] : [];
        const writers = others.length ? others : [ledger];
        const started = performance.now();
        try {
          for (let round = 0; round < 20; round++) {
            if (round > 0) assert.equal(await ledger.addCredits(record.id, 10), 10);
            const { ok, refused } = await race(writers, record.id, 50, round);
            assert.deepEqual({ round, ok, refused }, { round, ok: 10, refused: 40 });
            assert.equal(await ledger.balance(record.id), 0);
            assert.equal((await ledger.usage(record.id)).length, 10 * (round + 1));
          }
        } finally {
          await Promise.all(others.map((o) => o.close()));
        }
        t.diagnostic(`20 rounds in ${Math.round(performance.now() - started)} ms`);
      });
    }

    test("token bucket: rate 1/s burst 5 refuses the 6th call, admits it after retryAfter", async (t) => {
      if (skipped(t)) return;
      // One token a second: the checks below hold as long as five calls take under a second,
      // which a loaded machine still does with a wide margin (5/s left only 200 ms).
      const { record } = await ledger.createKey({ name: "rl", scopes: ["weather"], credits: 0, rate: 1, burst: 5 });
      const first = [];
      for (let i = 0; i < 5; i++) first.push(await ledger.checkRate(record.id, 1, 5));
      assert.ok(
        first.every((d) => d.ok && d.limit === 5),
        JSON.stringify(first),
      );
      assert.equal(first[4].remaining, 0);
      const sixth = await ledger.checkRate(record.id, 1, 5);
      assert.equal(sixth.ok, false);
      assert.ok(
        sixth.retryAfterSeconds > 0 && sixth.retryAfterSeconds <= 1.001,
        `retryAfter ${sixth.retryAfterSeconds}`,
      );
      await sleep(sixth.retryAfterSeconds * 1000 + 50);
      const later = await ledger.checkRate(record.id, 1, 5);
      assert.equal(later.ok, true, JSON.stringify(later));
      assert.equal((await ledger.checkRate(record.id, 1, 5)).ok, false, "refill must not exceed the rate");
      // Buckets are per key, and rate 0 means unlimited.
      assert.equal((await ledger.checkRate("other-key", 1, 5)).ok, true);
      for (let i = 0; i < 20; i++) assert.equal((await ledger.checkRate(record.id, 0, 0)).ok, true);
      await assert.rejects(ledger.checkRate(record.id, -1, 5), InvalidParameterError);
    });

    test("ping answers; a closed ledger fails with LedgerUnavailableError and no internals", async (t) => {
      if (skipped(t)) return;
      await ledger.ping();
      const extra = await backend.open();
      await extra.ping();
      await extra.close();
      for (const call of [() => extra.ping(), () => extra.balance("x"), () => extra.listKeys()]) {
        await assert.rejects(call(), (e) => {
          assert.ok(e instanceof LedgerUnavailableError, String(e));
          assert.doesNotMatch(e.message, /select|from|\/|\\/i);
          return true;
        });
      }
    });
  });
}
