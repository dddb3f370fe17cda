// The shared ledger suite on PostgreSQL, in a throwaway database. Without a server it fails with
// one line saying how to get one (test/helpers/prereqs.ts), locally as in CI.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { LedgerUnavailableError } from "../../src/errors.ts";
import { openLedger } from "../../src/ledger/open.ts";
import type { Ledger } from "../../src/ledger/types.ts";
import { PG_ADMIN, pgAdmin } from "../helpers/prereqs.ts";
import { type Backend, ledgerSuite } from "./suite.ts";

/** Creates a database with a random name. */
async function scratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = await pgAdmin();
  const name = `gridcast_test_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

ledgerSuite("postgres", async (): Promise<Backend | null> => {
  const db = await scratchDatabase();
  return {
    open: () => openLedger(db.url),
    second: () => openLedger(db.url),
    keyRows: async () => {
      const c = new pg.Client(db.url);
      await c.connect();
      try {
        return (await c.query("SELECT * FROM keys")).rows;
      } finally {
        await c.end();
      }
    },
    cleanup: db.drop,
  };
});

describe("postgres ledger across servers", () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let a: Ledger;
  let b: Ledger;
  before(async () => {
    db = await scratchDatabase();
    if (!db) return;
    // Two ledgers opening one empty database at once must not trip over schema creation.
    [a, b] = await Promise.all([openLedger(db.url), openLedger(db.url)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.drop();
  });

  test("two servers share one token bucket", async () => {
    const { record } = await a.createKey({ name: "shared", scopes: ["weather"], credits: 0, rate: 0.01, burst: 5 });
    const calls = Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).checkRate(record.id, 0.01, 5));
    const decisions = await Promise.all(calls);
    assert.equal(decisions.filter((d) => d.ok).length, 5, JSON.stringify(decisions));
    const refused = decisions.find((d) => !d.ok)!;
    assert.ok(refused.retryAfterSeconds > 0 && refused.retryAfterSeconds <= 100);
    assert.equal(refused.remaining, 0);
  });

  test("an unreachable server gives LedgerUnavailableError without connection details", async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    await assert.rejects(openLedger("postgres://postgres@127.0.0.1:1/nowhere"), (e) => {
      assert.ok(e instanceof LedgerUnavailableError, String(e));
      assert.doesNotMatch(e.message, /127\.0\.0\.1|nowhere|ECONNREFUSED/);
      return true;
    });
  });
});
