// GET /api/embeddings/item/{name}: metadata equal to what zarrita reads directly, only metadata,
// coordinates and the preview read from the store, and names checked before any store access.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { ItemMetadata } from "../../src/http/schemas/embeddings.ts";
import { cleanup, get, rawGet, sampleStore, type TestServer } from "../helpers/harness.ts";
import { conforms, expectedItems, latentChunksRead, publishedServer, resetReads } from "./fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const expected = expectedItems();
const MAP_ITEM = expected.find((n) => n.includes("~map~"))!;
const VECTOR_ITEM = expected.find((n) => n.includes("~vector~"))!;

before(async () => {
  storeDir = await sampleStore();
  srv = await publishedServer(storeDir);
  key = await srv.key(["embeddings"]);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const item = (name: string, k = key) => get(`${srv.url}/api/embeddings/item/${name}`, { "X-API-Key": k });

async function direct(path: string, name: string) {
  const arr = await zarr.open(zarr.root(new FileSystemStore(storeDir)).resolve(`embeddings/${path}/${name}`), {
    kind: "array",
  });
  return { arr, data: (await zarr.get(arr)).data as Float32Array | Float64Array };
}

describe("GET /api/embeddings/item/{name}", () => {
  for (const name of [MAP_ITEM, VECTOR_ITEM]) {
    test(`${name.split("~")[4]} item: shape, chunking, coordinates, CRS and preview as stored`, async () => {
      const path = name.replaceAll("~", "/");
      const r = await item(name);
      assert.equal(r.status, 200, r.body.toString());
      const m = r.json();
      assert.ok(conforms(ItemMetadata, m), "matches the documented schema");
      const latent = (await direct(path, "latent")).arr;
      assert.deepEqual(m.latent.shape, latent.shape);
      assert.deepEqual(m.latent.chunks, latent.chunks);
      assert.equal(m.latent.dtype, latent.dtype);
      assert.deepEqual(m.latent.dims, ["y", "x", "feature"]);
      assert.equal(m.feature_count, latent.shape[2]);

      const attrs = JSON.parse(readFileSync(join(storeDir, "embeddings", path, "zarr.json"), "utf8")).attributes;
      assert.equal(m.crs, attrs.crs);
      assert.deepEqual(m.transform, attrs.transform);
      // The lon/lat bbox is the item's extent projected (the sample's items fill their square, which
      // the sample also writes as bbox): the same to far below a metre.
      for (const [i, v] of m.bbox.entries()) assert.ok(Math.abs(v - attrs.bbox[i]) < 1e-9, `bbox[${i}]`);
      assert.equal(m.resolution_m, attrs.resolution_m);
      assert.deepEqual(
        [m.family, m.product, m.period.id, m.tile],
        [attrs.family, attrs.product, attrs.period, attrs.mgrs_tile],
      );
      assert.equal(m.model_version, attrs.model_version);

      for (const axis of ["x", "y"] as const) {
        const c = (await direct(path, axis)).data;
        const got = m.coordinates[axis];
        assert.deepEqual([got.min, got.max, got.count], [Math.min(...c), Math.max(...c), c.length]);
        if (c.length > 1) assert.equal(Math.abs(got.step), m.resolution_m);
      }

      const pv = await direct(path, "preview");
      assert.deepEqual(m.preview.shape, pv.arr.shape);
      const flat = m.preview.data.flat(2) as number[];
      assert.equal(flat.length, pv.data.length);
      for (const [i, v] of flat.entries()) {
        assert.ok(Math.abs(v - pv.data[i]) <= 1e-6 * Math.max(1, Math.abs(pv.data[i])), `preview[${i}]`);
      }
      assert.equal(m.npy, `/api/embeddings/npy/${name}`);
    });
  }

  test("reads the group metadata, x, y and the preview; no latent chunk", async () => {
    const name = expected.find((n) => n.includes("~tokens~"))!;
    resetReads(srv);
    assert.equal((await item(name)).status, 200);
    const base = `embeddings/${name.replaceAll("~", "/")}`;
    assert.deepEqual(latentChunksRead(srv), []);
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), [
      `${base}/preview/c/0/0/0`,
      `${base}/x/c/0`,
      `${base}/y/c/0`,
      `${base}/zarr.json`,
    ]);
  });

  test("unknown items are 404 and malformed names 400, before any store access", async () => {
    const missing = "geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32VKA"; // well formed, not in the catalogue
    assert.ok(!expected.includes(missing));
    resetReads(srv);
    const r404 = await item(missing);
    assert.equal(r404.status, 404);
    assert.equal(r404.json().item, missing);
    for (const bad of [
      "geofm",
      "geofm~rf~v1.2~base~map",
      `${MAP_ITEM}~x`,
      "...",
      encodeURIComponent("../../zarr.json"),
    ]) {
      const r = await item(bad);
      assert.equal(r.status, 400, bad);
      assert.equal(r.json().param, "name", bad);
    }
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), []);
    assert.equal(srv.running.ctx.store.backend.lists, 0);
  });

  test("traversal attempts over a raw socket never reach a store file", async () => {
    const h = { "X-API-Key": key };
    for (const raw of [
      "/api/embeddings/item/..%2f..%2fzarr.json",
      "/api/embeddings/item/..%2F..%2F..%2Fzarr.json",
      `/api/embeddings/item/${MAP_ITEM}%00`,
      `/api/embeddings/item/${MAP_ITEM.replaceAll("~", "%2f")}`,
      "/api/embeddings/item/../../../zarr.json",
    ]) {
      const r = await rawGet(srv.url, raw, h);
      assert.ok(r.status === 400 || r.status === 404, `${raw}: ${r.status}`);
      assert.doesNotMatch(r.body.toString(), /zarr_format|node_type/, raw);
    }
  });

  test("item and listing links: paths without a base URL, absolute on public_url or a trusted proxy's host", async () => {
    const settings = srv.running.ctx.settings;
    const list = () =>
      get(`${srv.url}/api/embeddings?limit=1`, { "X-API-Key": key, "X-Forwarded-Host": "eo.example.net" });
    const plain = (await item(MAP_ITEM)).json();
    assert.equal(plain.item, `/api/embeddings/item/${MAP_ITEM}`);
    assert.equal(plain.npy, `/api/embeddings/npy/${MAP_ITEM}`);
    // A forged host is not taken while trust_proxy is 0.
    assert.match((await list()).json().items[0].item, /^\/api\/embeddings\/item\//);
    try {
      settings.public_url = "https://eo.example.org/gc";
      const m = (await item(MAP_ITEM)).json();
      assert.equal(m.item, `https://eo.example.org/gc/api/embeddings/item/${MAP_ITEM}`);
      assert.equal(m.npy, `https://eo.example.org/gc/api/embeddings/npy/${MAP_ITEM}`);
      settings.public_url = "";
      settings.trust_proxy = 1;
      const r = await list();
      assert.match(r.json().items[0].npy, /^http:\/\/eo\.example\.net\/api\/embeddings\/npy\//);
      assert.match(r.headers.get("vary") ?? "", /X-Forwarded-Host/);
    } finally {
      settings.public_url = "";
      settings.trust_proxy = 0;
    }
  });
});
