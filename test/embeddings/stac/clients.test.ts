// Real STAC clients against /stac: ogc-client's StacEndpoint opens the landing page, lists the
// collections, pages through every item and runs bbox, datetime and ids searches whose answers
// equal gridcast's own listing and locate; stac-node-validator checks every collection and item
// against the STAC JSON Schemas kept in ../shared/standards (no network).
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { resetFetchOptions, StacEndpoint, setFetchOptions } from "@camptocamp/ogc-client";
import { PROJECTION_EXTENSION } from "../../../src/embeddings/stac/ids.ts";
import { PERIODS } from "../../../src/sample/embeddings.ts";
import { cleanup, get, sampleStore, type TestServer, tempDir } from "../../helpers/harness.ts";
import { expectedItems, publishedServer } from "../fixtures.ts";

const require = createRequire(import.meta.url);
const STANDARDS = join(import.meta.dirname, "../../../../shared/standards/stac-spec");

let storeDir: string;
let srv: TestServer;
let key: string;
let schemaDir: string;
const expected = expectedItems();

before(async () => {
  storeDir = await sampleStore();
  // Links on the request's host (trust_proxy): absolute, as a client following them needs.
  srv = await publishedServer(storeDir, { trust_proxy: 1 });
  key = await srv.key(["embeddings"], 100_000);
  setFetchOptions({ headers: { "X-API-Key": key } });
  schemaDir = tempDir("stac-schemas-");
});
after(async () => {
  resetFetchOptions();
  await srv.close();
  cleanup(storeDir, schemaDir);
});

const collectionOf = (name: string) => {
  const p = name.split("~");
  return `${p[0]}.${p[4]}`;
};
const sorted = (a: string[]) => [...a].sort();

describe("STAC clients", () => {
  test("ogc-client StacEndpoint: landing, collections, every item, bbox/datetime/ids searches", async () => {
    const endpoint = new StacEndpoint(`${srv.url}/stac`);
    assert.equal(await endpoint.isStacApi, true);
    assert.equal(await endpoint.supportsOgcFeatures, true);
    const collections = await endpoint.allCollections;
    assert.deepEqual(sorted(collections), sorted([...new Set(expected.map(collectionOf))]));
    // Every item, page by page through the next links.
    const seen: string[] = [];
    for (const id of collections) {
      const collection = await endpoint.getCollection(id);
      let doc = await StacEndpoint.getItemsFromCollection(collection, { limit: 3 });
      for (let n = 0; ; n++) {
        seen.push(...doc.features.map((f) => f.id));
        const next = doc.links?.find((l) => l.rel === "next");
        if (!next) break;
        doc = await StacEndpoint.getItemsFromUrl(next.href);
        assert.ok(n < 200);
      }
    }
    const listing = await get(`${srv.url}/api/embeddings?limit=1000`, { "X-API-Key": key });
    assert.deepEqual(
      sorted(seen),
      listing.json().items.map((i: { name: string }) => i.name),
    );
    const one = await endpoint.getCollectionItem(collectionOf(expected[5]), expected[5]);
    assert.equal(one.id, expected[5]);

    // bbox around Munich: holds every item locate names there, and only items whose footprint meets it.
    const loc = (await get(`${srv.url}/api/embeddings/locate?lon=11.58&lat=48.14`, { "X-API-Key": key })).json();
    const search = `${srv.url}/stac/search`;
    const byBbox = await StacEndpoint.getItemsFromUrl(search, { bbox: [11.5, 48.1, 11.6, 48.2], limit: 1000 });
    const got = byBbox.features.map((f) => f.id);
    for (const n of loc.available_items) assert.ok(got.includes(n), n);
    for (const f of byBbox.features) {
      const [w, s, e, n] = f.bbox!;
      assert.ok(w <= 11.6 && e >= 11.5 && s <= 48.2 && n >= 48.1, f.id);
    }
    // datetime: the first period's items, as the listing names them.
    const byTime = await StacEndpoint.getItemsFromUrl(search, {
      datetime: { start: new Date("2026-06-15T00:00:00Z"), end: new Date("2026-07-15T00:00:00Z") },
      limit: 1000,
    });
    assert.deepEqual(
      sorted(byTime.features.map((f) => f.id)),
      expected.filter((n) => n.includes(PERIODS[0])),
    );
    // ids, as a query the client passes through.
    const some = [expected[1], expected[60], expected[99]];
    const byIds = await StacEndpoint.getItemsFromUrl(search, { query: `ids=${some.join(",")}` });
    assert.deepEqual(
      byIds.features.map((f) => f.id),
      sorted(some),
    );
  });

  test("stac-node-validator: every collection and item is valid STAC against the local schemas", async () => {
    const validate = require("stac-node-validator");
    const nodeLoader = require("stac-node-validator/src/loader/node");
    // The projection extension's schema is not among the kept standards: a schema of its fields
    // (proj:code EPSG:n or null, proj:shape two integers, proj:transform 6 or 9 numbers, proj:bbox
    // 4 or 6 numbers) stands in for it, so they are still checked.
    const proj = join(schemaDir, "projection.json");
    mkdirSync(schemaDir, { recursive: true });
    const fields = {
      "proj:code": { type: ["string", "null"], pattern: "^[A-Z]+:[0-9]+$" },
      "proj:shape": { type: "array", minItems: 2, maxItems: 2, items: { type: "integer", minimum: 1 } },
      "proj:transform": {
        type: "array",
        oneOf: [
          { minItems: 6, maxItems: 6 },
          { minItems: 9, maxItems: 9 },
        ],
        items: { type: "number" },
      },
      "proj:bbox": {
        type: "array",
        oneOf: [
          { minItems: 4, maxItems: 4 },
          { minItems: 6, maxItems: 6 },
        ],
        items: { type: "number" },
      },
    };
    writeFileSync(
      proj,
      JSON.stringify({
        $schema: "http://json-schema.org/draft-07/schema#",
        $id: PROJECTION_EXTENSION,
        oneOf: [
          {
            type: "object",
            required: ["type", "properties"],
            properties: {
              type: { const: "Feature" },
              properties: { type: "object", required: ["proj:code", "proj:shape", "proj:bbox"], properties: fields },
            },
          },
          {
            type: "object",
            required: ["type"],
            properties: { type: { const: "Collection" }, summaries: { type: "object" } },
          },
        ],
      }),
    );
    // Nor are GeoJSON's: stand-ins for the two the STAC item schema refers to state a Feature's
    // members and a geometry's type and coordinates.
    const geometry = join(schemaDir, "Geometry.json");
    const feature = join(schemaDir, "Feature.json");
    const geometryTypes = ["Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon"];
    writeFileSync(
      geometry,
      JSON.stringify({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        required: ["type", "coordinates"],
        properties: { type: { enum: geometryTypes }, coordinates: { type: "array", minItems: 1 } },
      }),
    );
    writeFileSync(
      feature,
      JSON.stringify({
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        required: ["type", "geometry", "properties"],
        properties: {
          type: { const: "Feature" },
          geometry: { oneOf: [{ type: "null" }, { $ref: "https://geojson.org/schema/Geometry.json" }] },
          properties: { type: ["object", "null"] },
          bbox: { type: "array", minItems: 4 },
        },
      }),
    );
    // The kept schemas are STAC 1.1.0-beta.1, which pins stac_version to that string; a copy whose
    // version is 1.1.0 (the release gridcast states) checks the documents as they are served.
    const spec = join(schemaDir, "stac-spec");
    for (const f of ["catalog-spec/json-schema/catalog.json", "collection-spec/json-schema/collection.json"].concat(
      readdirSync(join(STANDARDS, "item-spec/json-schema")).map((n) => `item-spec/json-schema/${n}`),
    )) {
      mkdirSync(dirname(join(spec, f)), { recursive: true });
      writeFileSync(join(spec, f), readFileSync(join(STANDARDS, f), "utf8").replaceAll("1.1.0-beta.1", "1.1.0"));
    }
    const config = {
      loader: nodeLoader,
      schemaMap: {
        "https://schemas.stacspec.org/v1.1.0/": `${spec}/`,
        "https://geojson.org/schema/Feature.json": feature,
        "https://geojson.org/schema/Geometry.json": geometry,
        [PROJECTION_EXTENSION]: proj,
      },
    };
    const h = { "X-API-Key": key };
    const check = async (doc: unknown, what: string) => {
      const report = await validate(doc, config);
      const errors = [report, ...(report.children ?? [])].flatMap(
        (r: { results: { core: unknown[]; extensions: Record<string, unknown[]> } }) => [
          ...r.results.core,
          ...Object.values(r.results.extensions).flat(),
        ],
      );
      assert.equal(report.valid, true, `${what}: ${JSON.stringify(errors).slice(0, 2000)}`);
      return report;
    };
    await check((await get(`${srv.url}/stac`, h)).json(), "landing page");
    const collections = (await get(`${srv.url}/stac/collections`, h)).json();
    const r = await check(collections, "collections");
    assert.equal(r.children.length, collections.collections.length);
    let items = 0;
    for (const c of collections.collections) {
      const page = (await get(`${srv.url}/stac/collections/${c.id}/items?limit=1000`, h)).json();
      assert.equal(
        page.links.some((l: { rel: string }) => l.rel === "next"),
        false,
      );
      const rep = await check(page, `items of ${c.id}`);
      assert.equal(rep.children.length, page.features.length);
      items += page.features.length;
    }
    assert.equal(items, expected.length);
    // The check itself fails on a broken item: one without its start_datetime is refused.
    const bad = (await get(`${srv.url}/stac/collections/${collectionOf(expected[0])}/items/${expected[0]}`, h)).json();
    const shape = bad.properties["proj:shape"];
    bad.properties["proj:shape"] = [7];
    assert.equal((await validate(bad, config)).valid, false, "a projection field is checked");
    bad.properties["proj:shape"] = shape;
    assert.equal((await validate(bad, config)).valid, true);
    delete bad.properties.start_datetime;
    assert.equal((await validate(bad, config)).valid, false, "a core field is checked");
  });
});
