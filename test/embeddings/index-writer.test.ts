// writeEmbeddingIndexes, the build step `gridcast build` calls: what it writes and what it reads.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { writeEmbeddingIndexes } from "../../src/embeddings/index-writer.ts";
import { tileGeometry } from "../../src/embeddings/mgrs.ts";
import { PRESETS } from "../../src/sample/presets.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { expectedItems } from "./fixtures.ts";

let storeDir: string;
let out: string;
let store: Store;
let result: { items: number; indexes: number };
const expected = expectedItems();

before(async () => {
  storeDir = await sampleStore();
  out = tempDir();
  store = new Store(storeDir);
  result = await writeEmbeddingIndexes(store, out);
});
after(() => cleanup(storeDir, out));

const readJson = (rel: string) => JSON.parse(readFileSync(join(out, rel), "utf8"));

describe("writeEmbeddingIndexes", () => {
  test("items.json holds exactly the generated items, sorted", () => {
    assert.deepEqual(readJson("embeddings/items.json").items, expected);
    assert.equal(result.items, expected.length);
  });

  test("one locate index per family, product and period, each tile with its item's geometry", () => {
    const combos = new Set(expected.map((n) => n.split("~")).map((s) => `${s[0]}~${s[4]}~${s[5]}.json`));
    const files = readdirSync(join(out, "embeddings/locate")).sort();
    assert.deepEqual(files, [...combos].sort());
    assert.equal(result.indexes, combos.size);
    let entries = 0;
    for (const file of files) {
      const idx = readJson(`embeddings/locate/${file}`);
      const [family, product, period] = file.replace(/\.json$/, "").split("~");
      assert.deepEqual([idx.family, idx.product, idx.period], [family, product, period]);
      for (const [tile, e] of Object.entries<Record<string, unknown>>(idx.tiles)) {
        entries++;
        assert.equal(e.item, `${family}~rf~v1.2~base~${product}~${period}~${tile}`);
        assert.ok(expected.includes(e.item as string));
        const g = tileGeometry(tile);
        assert.equal(e.crs, g.crs);
        assert.deepEqual(e.shape, PRESETS.tiny.products[product as "map"]);
        // The sample's items fill their 100 km square exactly.
        assert.deepEqual(e.bbox_utm, [
          g.origin.easting,
          g.origin.northing,
          g.origin.easting + g.size_m,
          g.origin.northing + g.size_m,
        ]);
      }
    }
    assert.equal(entries, expected.length);
  });

  test("reads metadata and the x/y coordinates only, never a latent or preview chunk", () => {
    const chunks = store.backend.keysRead().filter((k) => /\/c\//.test(k));
    assert.ok(chunks.length > 0, "the coordinates are read to check the geometry");
    assert.deepEqual(
      chunks.filter((k) => !/\/(x|y)\/c\//.test(k)),
      [],
    );
  });
});
