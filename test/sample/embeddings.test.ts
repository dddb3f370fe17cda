import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";
import { tileGeometry } from "../../src/embeddings/mgrs.ts";
import type { Summary } from "../../src/sample/index.ts";
import { Store } from "../../src/store/store.ts";
import { tinyStore } from "./fixture.ts";

let dir: string;
let summary: Summary;
before(async () => {
  ({ dir, summary } = await tinyStore());
});

const json = (rel: string) => JSON.parse(readFileSync(join(dir, rel), "utf8"));

async function get(path: string) {
  const arr = await zarr.open.v3(zarr.root(new FileSystemStore(dir)).resolve(path), { kind: "array" });
  return { arr, chunk: await zarr.get(arr) };
}

describe("embedding catalogue", () => {
  test("tiles cover several zones, both hemispheres, the equator, Norway 32V and Svalbard", () => {
    const tiles = summary.embeddings.tiles;
    assert.equal(tiles.length, 12);
    for (const t of tiles) assert.match(t, /^\d{1,2}[C-HJ-NP-X][A-HJ-NP-Z]{2}$/);
    const zones = new Set(tiles.map((t) => tileGeometry(t).zone));
    assert.ok(zones.size >= 8, `${zones.size} zones`);
    assert.ok(tiles.some((t) => t.startsWith("32V")));
    assert.ok(tiles.some((t) => /^(31|33|35|37)X/.test(t)));
    assert.ok(tiles.some((t) => tileGeometry(t).origin.northing === 0 && tileGeometry(t).hemisphere === "N"));
    assert.ok(tiles.filter((t) => tileGeometry(t).hemisphere === "S").length >= 3);
  });

  test("some combinations are left out, the rest are written", async () => {
    const { items, missing, families, products, periods, tiles } = summary.embeddings;
    assert.equal(items.length + missing.length, families.length * products.length * periods.length * tiles.length);
    assert.ok(missing.length > 0 && items.length > missing.length);
    for (const p of items) {
      assert.match(
        p,
        /^(geofm|terramind)\/rf\/v1\.2\/base\/(tokens|map|vector)\/\d{4}_\d{2}_\d{2}_\d{4}_\d{2}_\d{2}\/\w+$/,
      );
      assert.ok(existsSync(join(dir, "embeddings", p, "zarr.json")), p);
    }
    for (const p of missing) assert.equal(existsSync(join(dir, "embeddings", p)), false, p);
    assert.deepEqual(await new Store(dir).embeddingItemPaths(), items);
  });

  test("every level of an item path is a group with its own zarr.json", () => {
    const parts = summary.embeddings.items[0].split("/");
    for (let k = 0; k <= parts.length; k++) {
      const rel = join("embeddings", ...parts.slice(0, k), "zarr.json");
      assert.equal(json(rel).node_type, "group", rel);
    }
  });
});

describe("an item", () => {
  const pick = (product: string) => summary.embeddings.items.find((p) => p.includes(`/${product}/`))!;

  test("tokens: latent (y, x, feature) in UTM pixel centres with a matching transform and CRS", async () => {
    const path = pick("tokens");
    const attrs = json(`embeddings/${path}/zarr.json`).attributes;
    const tile = path.split("/").at(-1)!;
    const geom = tileGeometry(tile);
    assert.equal(attrs.crs, geom.crs);
    assert.equal(attrs.mgrs_tile, tile);
    assert.equal(attrs.model_version, "v1.2");
    assert.equal(attrs.product, "tokens");
    assert.equal(attrs.family, path.split("/")[0]);
    assert.equal(attrs.period, path.split("/")[5]);
    assert.equal(attrs.feature_count, 64);
    assert.equal(attrs.resolution_m, 100_000 / 16);

    const { arr, chunk } = await get(`embeddings/${path}/latent`);
    assert.deepEqual(arr.shape, [16, 16, 64]);
    assert.deepEqual(arr.chunks, [8, 8, 64]);
    assert.deepEqual(json(`embeddings/${path}/latent/zarr.json`).dimension_names, ["y", "x", "feature"]);
    const values = chunk.data as Float32Array;
    assert.ok(values.every((v) => v >= -1 && v <= 1));
    assert.ok(new Set(values).size > 1000, "values vary");

    const y = (await get(`embeddings/${path}/y`)).chunk.data as Float64Array;
    const x = (await get(`embeddings/${path}/x`)).chunk.data as Float64Array;
    const [a, , c, , e, f] = attrs.transform;
    assert.equal(a, attrs.resolution_m);
    assert.equal(e, -attrs.resolution_m);
    assert.equal(x[0], c + a / 2);
    assert.equal(y[0], f + e / 2);
    assert.ok(y[1] < y[0], "y runs north to south");
    assert.equal(c, geom.origin.easting);
    assert.equal(f, geom.origin.northing + 100_000);
  });

  test("the preview is the mean-pooled first three features, and small", async () => {
    for (const product of ["tokens", "map", "vector"]) {
      const path = pick(product);
      const latent = await get(`embeddings/${path}/latent`);
      const [ny, nx, nf] = latent.arr.shape;
      const pv = await get(`embeddings/${path}/preview`);
      const [py, px, bands] = pv.arr.shape;
      assert.ok(py <= 16 && px <= 16 && bands === 3, `${product} preview ${pv.arr.shape}`);
      const pool = Math.ceil(ny / py);
      const lv = latent.chunk.data as Float32Array;
      const pd = pv.chunk.data as Float32Array;
      for (let pi = 0; pi < py; pi++) {
        for (let pj = 0; pj < px; pj++) {
          for (let b = 0; b < 3; b++) {
            let sum = 0;
            for (let i = pi * pool; i < (pi + 1) * pool; i++) {
              for (let j = pj * pool; j < (pj + 1) * pool; j++) sum += lv[(i * nx + j) * nf + b];
            }
            const want = sum / (pool * pool);
            assert.ok(Math.abs(pd[(pi * px + pj) * 3 + b] - want) < 1e-5, `${product} preview ${pi},${pj},${b}`);
          }
        }
      }
    }
  });

  test("vector items hold one vector per tile", async () => {
    const { arr, chunk } = await get(`embeddings/${pick("vector")}/latent`);
    assert.deepEqual(arr.shape, [1, 1, 64]);
    assert.ok((chunk.data as Float32Array).some((v) => v !== 0));
  });
});
