// The metering race over real HTTP, on the sqlite ledger and on PostgreSQL (two servers sharing
// one database): balance 10, 50 concurrent metered requests, 20 rounds.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { PG_ADMIN, pgAdmin } from "../helpers/prereqs.ts";
import { build } from "../pipeline/build-fixture.ts";

const ROUNDS = 20;
const AT_ONCE = 50;
// Every request of a round may be in flight at once on one server; the concurrency cap
// (max_heavy_requests, 32 by default) must not turn some of them into 503 busy under load.
const CAPACITY = { max_heavy_requests: AT_ONCE * 2 };
let storeDir: string;

before(async () => {
  storeDir = await sampleStore();
});
after(() => cleanup(storeDir));

async function race(servers: TestServer[]): Promise<void> {
  const ledger = servers[0].running.ctx.ledger;
  const created = await ledger.createKey({ name: "race", scopes: ["embeddings"], credits: 10, rate: 0 });
  const H = { "X-API-Key": created.key };
  const listing = (await get(`${servers[0].url}/api/embeddings?limit=1`, H)).json();
  const item = JSON.stringify(listing).match(/"name":"([^"]+)"/)![1];
  for (let round = 0; round < ROUNDS; round++) {
    if (round > 0) await ledger.addCredits(created.record.id, 10);
    const results = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        get(`${servers[i % servers.length].url}/api/embeddings/item/${item}`, H),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    const short = results.filter((r) => r.status === 402).length;
    assert.equal(ok, 10, `round ${round}: ${results.map((r) => r.status).join(",")}`);
    assert.equal(short, AT_ONCE - 10, `round ${round}`);
    assert.equal(await ledger.balance(created.record.id), 0);
    for (const r of results.filter((x) => x.status === 200)) assert.equal(r.headers.get("x-credits-charged"), "1");
  }
  const usage = await ledger.usage(created.record.id);
  assert.equal(usage.length, 10 * ROUNDS);
}

async function withBuild(srv: TestServer): Promise<void> {
  await build({
    store: storeDir,
    out: join(srv.dir, "output"),
    maxZoom: 0,
    groups: ["forecast/global"],
    vars: ["t2m"],
  });
}

describe("metering race over HTTP", () => {
  test("sqlite ledger: exactly the balance succeeds, never negative", async () => {
    const srv = await testServer(storeDir, CAPACITY);
    try {
      await withBuild(srv);
      await race([srv]);
    } finally {
      await srv.close();
    }
  });

  test("PostgreSQL ledger shared by two servers: the same totals", async () => {
    const admin = await pgAdmin();
    const db = `gridcast_race_${process.pid}`;
    await admin.query(`CREATE DATABASE ${db}`);
    const url = new URL(PG_ADMIN);
    url.pathname = `/${db}`;
    const a = await testServer(storeDir, { ...CAPACITY, db: url.toString() });
    const b = await testServer(storeDir, { ...CAPACITY, db: url.toString(), out: join(a.dir, "output") });
    try {
      await withBuild(a);
      await race([a, b]);
    } finally {
      await a.close();
      await b.close();
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    }
  });
});
