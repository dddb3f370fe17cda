// GET /api/embeddings (catalogue listing) and the embeddings part of /api/models, over real HTTP
// against the published indexes of a generated store.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ItemList } from "../../src/http/schemas/embeddings.ts";
import { cleanup, get, sampleStore, type TestServer } from "../helpers/harness.ts";
import { conforms, expectedItems, publishedServer, resetReads } from "./fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const expected = expectedItems();

before(async () => {
  storeDir = await sampleStore();
  srv = await publishedServer(storeDir);
  key = await srv.key(["embeddings"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const list = (q = "", k: string | null = key) => get(`${srv.url}/api/embeddings?${q}`, k ? { "X-API-Key": k } : {});

/** Every page of a listing, following next_cursor. */
async function pages(q: string): Promise<{ names: string[]; pages: number; totals: Set<number> }> {
  const names: string[] = [];
  const totals = new Set<number>();
  let cursor: string | null = null;
  let n = 0;
  do {
    const r = await list(`${q}${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(r.status, 200, r.body.toString());
    const b = r.json();
    names.push(...b.items.map((i: { name: string }) => i.name));
    totals.add(b.total);
    cursor = b.next_cursor;
    n++;
    assert.ok(n < 1000, "paging does not end");
  } while (cursor);
  return { names, pages: n, totals };
}

describe("GET /api/embeddings", () => {
  test("without a prefix or limit: sorted pages of 100", async () => {
    assert.ok(expected.length > 100 && expected.length < 200, "the tiny sample spans two default pages");
    const b = (await list()).json();
    assert.ok(conforms(ItemList, b), "matches the documented schema");
    assert.deepEqual(
      b.items.map((i: { name: string }) => i.name),
      expected.slice(0, 100),
    );
    assert.equal(b.total, expected.length);
    assert.equal(b.limit, 100);
    const rest = (await list(`cursor=${b.next_cursor}`)).json();
    assert.deepEqual(
      rest.items.map((i: { name: string }) => i.name),
      expected.slice(100),
    );
    assert.equal(rest.next_cursor, null);
    const first = b.items[0];
    assert.equal(first.item, `/api/embeddings/item/${first.name}`);
    assert.equal(first.npy, `/api/embeddings/npy/${first.name}`);
    assert.deepEqual(first.name.split("~"), [
      first.family,
      "rf",
      first.version,
      "base",
      first.product,
      first.period,
      first.tile,
    ]);
  });

  for (const limit of [1, 7, 50]) {
    test(`cursor paging with limit ${limit}: all items, no duplicates, no gaps`, async () => {
      const got = await pages(`limit=${limit}`);
      assert.deepEqual(got.names, expected);
      assert.equal(got.pages, Math.ceil(expected.length / limit));
      assert.deepEqual([...got.totals], [expected.length]);
    });
  }

  test("prefix filtering: product, product and period, family; paging within a prefix", async () => {
    for (const prefix of [
      "geofm/rf/v1.2/base/map",
      "terramind/rf/v1.2/base/vector/",
      "geofm/rf/v1.2/base/tokens/2026_09_01_2026_11_30",
      "terramind",
    ]) {
      const want = expected.filter((n) => `${n.replaceAll("~", "/")}`.startsWith(`${prefix.replace(/\/$/, "")}/`));
      assert.ok(want.length > 0 && want.length < expected.length, prefix);
      const got = await pages(`prefix=${encodeURIComponent(prefix)}&limit=4`);
      assert.deepEqual(got.names, want, prefix);
      assert.deepEqual([...got.totals], [want.length]);
    }
    const none = (await list("prefix=geofm/rf/v9.9/base/map")).json();
    assert.deepEqual([none.items, none.total, none.next_cursor], [[], 0, null]);
  });

  test("bad prefix, limit or cursor: 400 naming the parameter", async () => {
    for (const [q, param] of [
      ["prefix=geofm/rf", "prefix"],
      ["prefix=geofm/rf/v1.2/base", "prefix"],
      ["prefix=geofm/xx/v1.2/base/map", "prefix"],
      ["prefix=..%2F..%2Fetc", "prefix"],
      ["prefix=geofm~rf~v1.2~base~map", "prefix"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=ten", "limit"],
      ["cursor=%%%", "cursor"],
      [`cursor=${Buffer.from("geofm/rf").toString("base64url")}`, "cursor"],
    ]) {
      const r = await list(q);
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, param, q);
    }
    assert.equal((await list("limit=1000")).status, 200);
  });

  test("answers from the published catalogue without touching the store; needs the embeddings scope", async () => {
    await list();
    resetReads(srv);
    await pages("limit=9&prefix=geofm");
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), []);
    assert.equal(srv.running.ctx.store.backend.lists, 0);
    assert.equal((await list("", null)).status, 401);
    assert.equal((await list("", await srv.key(["weather"]))).status, 403);
  });
});

describe("GET /api/models: embeddings", () => {
  test("families with versions, products, periods and tile counts of the published items", async () => {
    const r = await get(`${srv.url}/api/models`);
    assert.equal(r.status, 200);
    const m = r.json();
    assert.ok(Array.isArray(m.forecast) && m.forecast.length > 0, "forecast models are still listed");
    assert.deepEqual(
      m.embeddings.map((f: { family: string }) => f.family),
      ["geofm", "terramind"],
    );
    for (const f of m.embeddings) {
      const mine = expected.filter((n) => n.startsWith(`${f.family}~`)).map((n) => n.split("~"));
      assert.equal(f.items, mine.length);
      assert.equal(f.tiles, new Set(mine.map((s) => s[6])).size);
      assert.deepEqual(f.versions, ["v1.2"]);
      assert.deepEqual(
        f.products.map((p: { product: string }) => p.product),
        ["map", "tokens", "vector"],
      );
      for (const p of f.products) {
        const of = mine.filter((s) => s[4] === p.product);
        assert.equal(p.items, of.length);
        assert.equal(p.tiles, new Set(of.map((s) => s[6])).size);
      }
    }
  });
});
