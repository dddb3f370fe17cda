// GET /api/embeddings/npy/{name}: numpy loads the body, values equal a direct zarrita read, ranges
// behave like Python slices, and the size limit holds to the element before any chunk is read.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MIB } from "../../src/config.ts";
import { parseKeyId } from "../../src/ledger/keyformat.ts";
import { cleanup, get, sampleStore, type TestServer } from "../helpers/harness.ts";
import {
  bytesOf,
  expectedItems,
  latentChunksRead,
  numpyLoad,
  publishedServer,
  resetReads,
  sha256,
  writeBigItem,
  zarritaSlice,
} from "./fixtures.ts";

// 512 × 512 × 33 float32: 33 MiB in all, so 32 features are exactly the 32 MiB default limit.
const BIG_SHAPE: [number, number, number] = [512, 512, 33];
/** A limit of 63 float32 values, exact in binary, to test the boundary to one element. */
const TINY_LIMIT_MB = (63 * 4) / MIB;

let storeDir: string;
let srv: TestServer;
let tinyLimit: TestServer;
let key: string;
let big: { name: string; path: string };
const TOKENS = expectedItems().find((n) => n.includes("~tokens~"))!; // 16 × 16 × 64 in 8 × 8 × 64 chunks

before(async () => {
  storeDir = await sampleStore();
  big = await writeBigItem(storeDir, BIG_SHAPE);
  srv = await publishedServer(storeDir);
  tinyLimit = await publishedServer(storeDir, { embeddings_api_max_mb: TINY_LIMIT_MB });
  key = await srv.key(["embeddings"], 100_000);
});
after(async () => {
  await srv.close();
  await tinyLimit.close();
  cleanup(storeDir);
});

const npy = (name: string, q = "", s = srv, k = key) =>
  get(`${s.url}/api/embeddings/npy/${name}${q ? `?${q}` : ""}`, { "X-API-Key": k });

const dataOf = (body: Buffer, values: number) => body.subarray(body.length - values * 4);

describe("GET /api/embeddings/npy/{name}", () => {
  test("a slice across chunk edges: numpy loads it, values equal zarrita's, X-SVC-Field describes it", async () => {
    const r = await npy(TOKENS, "y_start=5&y_stop=13&x_start=3&x_stop=11&feature_start=10&feature_stop=50");
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.headers.get("content-type"), "application/octet-stream");
    assert.match(r.headers.get("content-disposition") ?? "", /attachment; filename=".+\.npy"/);
    const path = TOKENS.replaceAll("~", "/");
    const want = await zarritaSlice(storeDir, path, [
      [5, 13],
      [3, 11],
      [10, 50],
    ]);
    assert.equal(want.length, 8 * 8 * 40);
    const np = numpyLoad(r.body);
    assert.deepEqual(np, { shape: [8, 8, 40], dtype: "float32", c_contiguous: true, sha256: sha256(bytesOf(want)) });
    assert.ok(dataOf(r.body, want.length).equals(bytesOf(want)));

    const field = JSON.parse(r.headers.get("x-svc-field")!);
    const attrs = JSON.parse(readFileSync(join(storeDir, "embeddings", path, "zarr.json"), "utf8")).attributes;
    const [a, b, c, d, e, f] = attrs.transform;
    assert.deepEqual(field, {
      name: TOKENS,
      path: `embeddings/${path}/latent`,
      dims: ["y", "x", "feature"],
      shape: [8, 8, 40],
      dtype: "float32",
      values: "physical",
      quantization: { scheme: "raw", rule: "stored values are the physical values" },
      stored_dtype: "float32",
      stored_dims: ["y", "x", "feature"],
      offsets: { y: 5, x: 3, feature: 10 },
      source_shape: [16, 16, 64],
      crs: attrs.crs,
      transform: [a, b, c + 3 * a, d, e, f + 5 * e],
      missing: { served_as: "NaN", stored_values: [], rule: "declared by the latent's _FillValue" },
    });
  });

  test("the body is the same whatever the band size the slice is sent in", async () => {
    // 16 × 16 × 64 in 8 × 8 × 64 chunks; a row of this slice is 14 × 58 float32 (3.2 KiB): 0 sends
    // one row per band, 0.01 MiB three rows (bands across the chunk edge at row 8), the default
    // all 15 rows at once.
    const q = "y_start=1&y_stop=16&x_start=1&x_stop=15&feature_start=2&feature_stop=60";
    const settings = srv.running.ctx.settings;
    const saved = settings.read_slab_mb;
    const bodies: Buffer[] = [];
    try {
      for (const mb of [0, 0.01, saved]) {
        settings.read_slab_mb = mb;
        const r = await npy(TOKENS, q);
        assert.equal(r.status, 200, r.body.toString());
        bodies.push(r.body);
      }
    } finally {
      settings.read_slab_mb = saved;
    }
    const want = await zarritaSlice(storeDir, TOKENS.replaceAll("~", "/"), [
      [1, 16],
      [1, 15],
      [2, 60],
    ]);
    for (const [i, body] of bodies.entries()) {
      assert.ok(dataOf(body, want.length).equals(bytesOf(want)), `band setting ${i} differs from zarrita`);
    }
  });

  test("concurrent slices sent in many bands each get their own values (slab buffers are reused)", async () => {
    const settings = srv.running.ctx.settings;
    const saved = settings.read_slab_mb;
    settings.read_slab_mb = 0.05; // 3 rows of 512 × 8 features per band of the big item
    try {
      const cases = Array.from({ length: 8 }, (_, i) => ({ y: [i * 16, i * 16 + 40], f: [i, i + 8] }));
      const got = await Promise.all(
        cases.map((c) =>
          npy(big.name, `y_start=${c.y[0]}&y_stop=${c.y[1]}&feature_start=${c.f[0]}&feature_stop=${c.f[1]}`),
        ),
      );
      for (const [i, c] of cases.entries()) {
        assert.equal(got[i].status, 200);
        const want = await zarritaSlice(storeDir, big.path, [
          c.y as [number, number],
          [0, 512],
          c.f as [number, number],
        ]);
        assert.ok(dataOf(got[i].body, want.length).equals(bytesOf(want)), `slice ${i} differs from zarrita`);
      }
    } finally {
      settings.read_slab_mb = saved;
    }
  });

  test("omitted bounds default to the full extent", async () => {
    const path = TOKENS.replaceAll("~", "/");
    const whole = await npy(TOKENS);
    assert.equal(whole.status, 200);
    const all = await zarritaSlice(storeDir, path, [
      [0, 16],
      [0, 16],
      [0, 64],
    ]);
    assert.equal(numpyLoad(whole.body).sha256, sha256(bytesOf(all)));
    const tail = await npy(TOKENS, "y_start=12&feature_stop=1");
    const want = await zarritaSlice(storeDir, path, [
      [12, 16],
      [0, 16],
      [0, 1],
    ]);
    assert.deepEqual(numpyLoad(tail.body).shape, [4, 16, 1]);
    assert.ok(dataOf(tail.body, want.length).equals(bytesOf(want)));
  });

  test("bad ranges are 400 naming the parameter, with no chunk read", async () => {
    resetReads(srv);
    for (const [q, param] of [
      ["y_start=-1", "y_start"],
      ["x_start=5&x_stop=5", "x_stop"],
      ["x_start=6&x_stop=5", "x_stop"],
      ["feature_stop=65", "feature_stop"],
      ["y_start=16", "y_start"],
      ["y_stop=17", "y_stop"],
      ["y_stop=1.5", "y_stop"],
      ["x_start=abc", "x_start"],
      ["feature_start=1&feature_start=2", "feature_start"],
    ]) {
      const r = await npy(TOKENS, q);
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, param, q);
    }
    assert.deepEqual(latentChunksRead(srv), []);
    assert.equal((await npy(TOKENS, "y_start=15&y_stop=16&x_start=15&x_stop=16&feature_start=63")).status, 200);
  });

  test("32 MiB default limit: exactly 32 MiB of data is served, 33 MiB is 413 before any chunk or credit", async () => {
    const keyId = parseKeyId(key)!;
    const at = await npy(big.name, "feature_stop=32");
    assert.equal(at.status, 200, at.body.toString().slice(0, 300));
    assert.equal(at.body.length - 32 * MIB, 128, "header + exactly 32 MiB of float32 data");
    const want = await zarritaSlice(storeDir, big.path, [
      [0, 512],
      [0, 512],
      [0, 32],
    ]);
    assert.deepEqual(numpyLoad(at.body), {
      shape: [512, 512, 32],
      dtype: "float32",
      c_contiguous: true,
      sha256: sha256(bytesOf(want)),
    });
    assert.equal(at.headers.get("x-credits-charged"), String(1 + 32), "base + one per started MiB");

    const before = await srv.running.ctx.ledger.balance(keyId);
    resetReads(srv);
    const over = await npy(big.name, "feature_stop=33");
    assert.equal(over.status, 413);
    const p = over.json();
    assert.deepEqual([p.requested_bytes, p.requested_mb, p.limit_mb], [33 * MIB, 33, 32]);
    assert.equal(over.headers.get("x-credits-charged"), null);
    assert.deepEqual(latentChunksRead(srv), []);
    assert.equal(await srv.running.ctx.ledger.balance(keyId), before);
  });

  test("the limit counts float32 data bytes, to the element (limit set to 63 values)", async () => {
    const k = await tinyLimit.key(["embeddings"]);
    const at = await npy(TOKENS, "y_stop=1&x_stop=1&feature_stop=63", tinyLimit, k);
    assert.equal(at.status, 200);
    assert.deepEqual(numpyLoad(at.body).shape, [1, 1, 63]);
    assert.equal((await npy(TOKENS, "y_stop=1&x_stop=1&feature_start=1", tinyLimit, k)).status, 200);
    resetReads(tinyLimit);
    const over = await npy(TOKENS, "y_stop=1&x_stop=1&feature_stop=64", tinyLimit, k);
    assert.equal(over.status, 413);
    assert.equal(over.json().requested_bytes, 64 * 4);
    assert.deepEqual(latentChunksRead(tinyLimit), []);
  });
});
