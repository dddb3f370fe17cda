// Credit metering of item metadata and .npy slices over real HTTP and a real ledger: exact costs,
// headers, 402 once the balance runs out, and failed or refused requests never charged.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DEFAULTS } from "../../src/config.ts";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { cleanup, get, getToEnd, sampleStore, type TestServer } from "../helpers/harness.ts";
import { expectedItems, latentChunksRead, publishedServer, resetReads } from "./fixtures.ts";

let storeDir: string;
let srv: TestServer;
const TOKENS = expectedItems().find((n) => n.includes("~tokens~"))!; // 16 × 16 × 64 float32 = 64 KiB
const MAP = expectedItems().find((n) => n.includes("~map~"))!;
const NPY_BASE = 2;

before(async () => {
  storeDir = await sampleStore();
  // 48 KiB limit, so a whole tokens item (64 KiB) is a 413; a non-default base cost shows it is used.
  srv = await publishedServer(storeDir, { embeddings_api_max_mb: 48 / 1024, credit_cost_npy_base: NPY_BASE });
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const call = (path: string, k: string) => get(`${srv.url}${path}`, { "X-API-Key": k });
const ledger = () => srv.running.ctx.ledger;

async function keyWith(credits: number, scopes = ["embeddings"]) {
  const k = await srv.key(scopes, credits);
  return { k, id: parseKeyId(k)! };
}

describe("credit metering of /api/embeddings item and npy", () => {
  test("balance 3: three item requests succeed, the fourth is 402", async () => {
    const { k, id } = await keyWith(3);
    for (const remaining of [2, 1, 0]) {
      const r = await call(`/api/embeddings/item/${MAP}`, k);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("x-credits-charged"), "1");
      assert.equal(r.headers.get("x-credits-remaining"), String(remaining));
    }
    const refused = await call(`/api/embeddings/item/${MAP}`, k);
    assert.equal(refused.status, 402);
    assert.equal(refused.headers.get("x-credits-charged"), null);
    assert.equal(await ledger().balance(id), 0);
    const usage = await ledger().usage(id);
    assert.equal(usage.length, 3);
    assert.deepEqual(
      usage.map((u) => [u.route, u.item, u.cost]),
      Array(3).fill(["/api/embeddings/item/{name}", MAP, 1]),
    );
  });

  test("npy costs the base plus one credit per started MiB, with headers", async () => {
    const { k, id } = await keyWith(10);
    const r = await call(`/api/embeddings/npy/${TOKENS}?y_stop=1`, k);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-credits-charged"), String(NPY_BASE + 1));
    assert.equal(r.headers.get("x-credits-remaining"), String(10 - NPY_BASE - 1));
    assert.equal(await ledger().balance(id), 10 - NPY_BASE - 1);
    const [u] = await ledger().usage(id);
    assert.equal(u.bytes, r.body.length);
  });

  test("400, 404 and 413 leave the balance and usage untouched", async () => {
    const { k, id } = await keyWith(50);
    for (const [path, status] of [
      ["/api/embeddings/item/not-an-item", 400],
      ["/api/embeddings/npy/not-an-item", 400],
      ["/api/embeddings/item/geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32VKA", 404],
      ["/api/embeddings/npy/geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32VKA", 404],
      [`/api/embeddings/npy/${TOKENS}?y_start=3&y_stop=2`, 400],
      [`/api/embeddings/npy/${TOKENS}?feature_stop=99`, 400],
      [`/api/embeddings/npy/${TOKENS}`, 413],
    ] as const) {
      const r = await call(path, k);
      assert.equal(r.status, status, path);
      assert.equal(r.headers.get("x-credits-charged"), null, path);
    }
    assert.equal(await ledger().balance(id), 50);
    assert.deepEqual(await ledger().usage(id), []);
  });

  test("an npy slice costing more than the balance is 402 before any chunk is read", async () => {
    const { k, id } = await keyWith(NPY_BASE); // the slice costs NPY_BASE + 1
    resetReads(srv);
    const r = await call(`/api/embeddings/npy/${TOKENS}?y_start=15&y_stop=16`, k);
    assert.equal(r.status, 402);
    assert.deepEqual([r.json().balance, r.json().cost], [NPY_BASE, NPY_BASE + 1]);
    assert.deepEqual(latentChunksRead(srv), []);
    assert.equal(await ledger().balance(id), NPY_BASE);
  });

  test("a read that fails after the first band went out: body cut, credits refunded, store and key logged", async () => {
    const { k, id } = await keyWith(10);
    // Rows 4..11 one band each: rows 4–7 come from chunk row 0, rows 8–11 from chunk row 1, whose
    // first chunk is damaged (the same length of garbage) for this test only.
    const chunk = join(storeDir, "embeddings", TOKENS.replaceAll("~", "/"), "latent", "c", "1", "0", "0");
    const good = readFileSync(chunk);
    const settings = srv.running.ctx.settings;
    writeFileSync(chunk, Buffer.alloc(good.length, 0xa5));
    settings.read_slab_mb = 0;
    resetReads(srv);
    const logsBefore = srv.logs.length;
    try {
      const r = await getToEnd(`${srv.url}/api/embeddings/npy/${TOKENS}?y_start=4&y_stop=12`, { "X-API-Key": k });
      assert.equal(r.status, 200, "headers went out with the first band");
      assert.equal(r.ended, "cut");
      assert.ok(r.got.length < r.declared, `${r.got.length} of ${r.declared} bytes and no sign of a cut`);
    } finally {
      writeFileSync(chunk, good);
      settings.read_slab_mb = DEFAULTS.read_slab_mb;
      resetReads(srv);
    }
    // The refund runs when the connection closes; wait for it rather than for a fixed time.
    for (let i = 0; i < 200 && (await ledger().balance(id)) !== 10; i++) await new Promise((ok) => setTimeout(ok, 10));
    assert.equal(await ledger().balance(id), 10);
    assert.deepEqual(await ledger().usage(id), []);
    const logged = srv.logs.slice(logsBefore).find((e) => e.level === "error" && typeof e.key === "string");
    assert.ok(logged, "no error log line for the failed read");
    assert.match(String(logged.key), /latent\/c\/1\/0\/0$/);
    assert.match(String(logged.store), /store/);
  });

  test("a damaged chunk of a slice decoded on the pool: the cached way names it, a problem before any byte, nothing charged", async () => {
    const { k, id } = await keyWith(10);
    // Default bands: the whole slice is one band of whole chunk rows, each chunk decoded and copied
    // into it by the addon's decodeRuns. The damaged one is refused there and read again the cached
    // way, which reports it: before the headers, so a problem response and no charge.
    const latent = join(storeDir, "embeddings", TOKENS.replaceAll("~", "/"), "latent", "c");
    const chunk = join(latent, "1", "0", "0");
    const good = readFileSync(chunk);
    writeFileSync(chunk, Buffer.alloc(good.length, 0xa5));
    resetReads(srv);
    const logsBefore = srv.logs.length;
    const backend = srv.running.ctx.store.backend as unknown as { reads: Map<string, number> };
    try {
      const r = await call(`/api/embeddings/npy/${TOKENS}?y_start=4&y_stop=12`, k);
      assert.equal(r.status, 500);
      assert.match(String(r.headers.get("content-type")), /problem\+json/);
      assert.equal(r.json().type.split("/").pop(), "corrupt-data");
      const reads = [...backend.reads].filter(([key]) => key.includes("/latent/c/"));
      assert.deepEqual(
        reads.filter(([key]) => key.endsWith("/latent/c/1/0/0")).map(([, n]) => n),
        [2],
        "the damaged chunk is read by the pool job, then once more the cached way",
      );
    } finally {
      writeFileSync(chunk, good);
      resetReads(srv);
    }
    assert.equal(await ledger().balance(id), 10);
    assert.deepEqual(await ledger().usage(id), []);
    const logged = srv.logs.slice(logsBefore).find((e) => e.level === "error" && typeof e.key === "string");
    assert.ok(logged, "no error log line for the failed read");
    assert.match(String(logged.key), /latent\/c\/1\/0\/0$/);
    // The same slice, undamaged, reads each chunk once.
    const ok = await call(`/api/embeddings/npy/${TOKENS}?y_start=4&y_stop=12`, k);
    assert.equal(ok.status, 200);
    const again = [...backend.reads].filter(([key]) => key.includes("/latent/c/"));
    assert.ok(again.length > 0 && again.every(([, n]) => n === 1), JSON.stringify(again));
  });

  test("keys without the embeddings scope are 403 and never metered; no key is 401", async () => {
    const weather = await keyWith(100, ["weather"]);
    for (const path of [
      `/api/embeddings/item/${MAP}`,
      `/api/embeddings/npy/${TOKENS}?y_stop=1`,
      "/api/embeddings",
      "/api/embeddings/locate?lon=5.3&lat=60.4",
    ]) {
      const r = await call(path, weather.k);
      assert.equal(r.status, 403, path);
      assert.equal(r.json().required_scope, "embeddings");
      assert.equal((await get(`${srv.url}${path}`)).status, 401, path);
    }
    assert.equal(await ledger().balance(weather.id), 100);
    assert.deepEqual(await ledger().usage(weather.id), []);
  });

  test("listing and locate are not metered", async () => {
    const { k, id } = await keyWith(1);
    for (let i = 0; i < 3; i++) {
      for (const path of ["/api/embeddings?limit=5", "/api/embeddings/locate?lon=5.3&lat=60.4"]) {
        const r = await call(path, k);
        assert.equal(r.status, 200, path);
        assert.equal(r.headers.get("x-credits-charged"), null);
      }
    }
    assert.equal(await ledger().balance(id), 1);
  });
});
