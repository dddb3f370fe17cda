// The STAC API (/stac) over real HTTP against the published indexes of a generated store: what it
// lists equals /api/embeddings' listing, items equal /api/embeddings/item, assets answer the same
// bytes as the existing routes, searches equal the listing filtered independently here, POST
// equals GET, and bad searches are 400 problem+json naming the parameter.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { FAMILIES, PERIODS, PRODUCTS } from "../../../src/sample/embeddings.ts";
import { docsText } from "../../helpers/docs.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../../helpers/harness.ts";
import { expectedItems, publish, publishedServer } from "../fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const expected = expectedItems();

before(async () => {
  storeDir = await sampleStore();
  srv = await publishedServer(storeDir);
  key = await srv.key(["embeddings"], 100_000);
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

type Feature = {
  id: string;
  collection: string;
  bbox: number[];
  geometry: { type: string; coordinates: unknown };
  properties: Record<string, unknown>;
  assets: Record<string, { href: string }>;
  links: { rel: string; href: string }[];
};
type Page = {
  type: string;
  features: Feature[];
  links: { rel: string; href: string; method?: string; body?: Record<string, unknown>; merge?: boolean }[];
};

const stac = (path: string, k: string | null = key) => get(`${srv.url}${path}`, k ? { "X-API-Key": k } : {});
const post = async (body: unknown, k: string | null = key) => {
  const res = await fetch(`${srv.url}/stac/search`, {
    method: "POST",
    headers: { ...(k ? { "X-API-Key": k } : {}), "Content-Type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: () => JSON.parse(text) };
};

/** Every item of a GET paging, following next links. */
async function allGet(path: string): Promise<{ features: Feature[]; pages: number }> {
  const features: Feature[] = [];
  let url: string | undefined = path;
  let pages = 0;
  while (url) {
    const r = await stac(url);
    assert.equal(r.status, 200, r.body.toString());
    const b = r.json() as Page;
    assert.equal(b.type, "FeatureCollection");
    features.push(...b.features);
    url = b.links.find((l) => l.rel === "next")?.href;
    pages++;
    assert.ok(pages < 500, "paging does not end");
  }
  return { features, pages };
}

/** Every item of a POST paging, merging each next link's body into the request as STAC says. */
async function allPost(body: Record<string, unknown>): Promise<Feature[]> {
  const features: Feature[] = [];
  let req: Record<string, unknown> | undefined = body;
  for (let n = 0; req; n++) {
    const r = await post(req);
    assert.equal(r.status, 200);
    const b = r.json() as Page;
    features.push(...b.features);
    const next = b.links.find((l) => l.rel === "next");
    if (next) {
      assert.equal(next.method, "POST");
      assert.equal(next.merge, true);
      assert.ok(next.href.endsWith("/stac/search"));
    }
    req = next ? { ...req, ...next.body } : undefined;
    assert.ok(n < 500);
  }
  return features;
}

const ids = (fs: Feature[]) => fs.map((f) => f.id);
const sorted = (a: string[]) => [...a].sort();
const collectionOf = (name: string) => {
  const p = name.split("~");
  return `${p[0]}.${p[4]}`;
};

/** All items with their footprints, read once through the collections' items (checked against the item route below). */
let everything: Feature[] = [];

describe("STAC API", () => {
  test("landing page, conformance; 401 without a key, 403 with a weather key", async () => {
    const r = await stac("/stac");
    assert.equal(r.status, 200);
    const b = r.json();
    assert.equal(b.type, "Catalog");
    for (const c of ["core", "item-search", "collections", "ogcapi-features"]) {
      assert.ok(b.conformsTo.includes(`https://api.stacspec.org/v1.0.0/${c}`), c);
    }
    const rel = (name: string) => b.links.filter((l: { rel: string }) => l.rel === name);
    for (const name of ["self", "root", "conformance", "data", "service-desc"]) assert.equal(rel(name).length, 1, name);
    assert.deepEqual(
      rel("search").map((l: { method: string; type: string }) => [l.method, l.type]),
      [
        ["GET", "application/geo+json"],
        ["POST", "application/geo+json"],
      ],
    );
    assert.equal((await stac(rel("service-desc")[0].href)).json().openapi, "3.1.0");
    assert.deepEqual((await stac("/stac/conformance")).json().conformsTo, b.conformsTo);
    for (const path of ["/stac", "/stac/collections", "/stac/search"]) {
      const anon = await stac(path, null);
      assert.equal(anon.status, 401, path);
      assert.equal(anon.headers.get("content-type"), "application/problem+json");
    }
    const weather = await srv.key(["weather"]);
    assert.equal((await stac("/stac", weather)).status, 403);
  });

  test("the OpenAPI document describes every STAC route, the POST search with its body", async () => {
    const doc = (await stac("/openapi.json", null)).json();
    for (const path of [
      "/stac",
      "/stac/conformance",
      "/stac/collections",
      "/stac/collections/{collectionId}",
      "/stac/collections/{collectionId}/items",
      "/stac/collections/{collectionId}/items/{itemId}",
      "/stac/search",
    ]) {
      assert.ok(doc.paths[path]?.get, path);
      assert.deepEqual(doc.paths[path].get.security, [{ ApiKey: [] }], path);
    }
    const postOp = doc.paths["/stac/search"].post;
    const body = postOp.requestBody.content["application/json"].schema.properties;
    assert.deepEqual(Object.keys(body).sort(), [
      "bbox",
      "collections",
      "datetime",
      "ids",
      "intersects",
      "limit",
      "token",
    ]);
    const params = doc.paths["/stac/search"].get.parameters.map((p: { name: string }) => p.name).sort();
    assert.deepEqual(params, ["bbox", "collections", "datetime", "ids", "intersects", "limit", "token"]);
  });

  test("one collection per family and product, with extents and summaries", async () => {
    const b = (await stac("/stac/collections")).json();
    const want = sorted([...new Set(expected.map(collectionOf))]);
    assert.deepEqual(sorted(b.collections.map((c: { id: string }) => c.id)), want);
    assert.equal(want.length, FAMILIES.length * PRODUCTS.length);
    for (const c of b.collections) {
      assert.deepEqual((await stac(`/stac/collections/${c.id}`)).json(), c);
      assert.equal(c.type, "Collection");
      assert.ok(c.license);
      assert.ok(c.providers.length > 0);
      assert.deepEqual(c.extent.temporal.interval, [["2026-06-01T00:00:00Z", "2026-11-30T23:59:59Z"]]);
      assert.equal(c["latent:items"], expected.filter((n) => collectionOf(n) === c.id).length);
      for (const s of ["latent:feature_count", "latent:dtype", "latent:quantization", "latent:utm_zone", "proj:code"]) {
        assert.ok(Array.isArray(c.summaries[s]) && c.summaries[s].length > 0, `${c.id} ${s}`);
      }
      assert.deepEqual(Object.keys(c.item_assets).sort(), ["latent", "metadata", "preview"]);
      const items = c.links.find((l: { rel: string }) => l.rel === "items");
      assert.equal(items.type, "application/geo+json");
    }
    // The documentation states the grouping the server uses: <family>.<product>, one per product.
    const docs = docsText();
    for (const p of PRODUCTS) assert.ok(docs.includes(`| \`<family>.${p}\` | ${p} |`), p);
    for (const id of ["geofm.tokens", "geofm.map", "geofm.vector"]) {
      assert.ok(docs.includes(`\`${id}\``), id);
      assert.ok(want.includes(id), id);
    }
    const missing = await stac("/stac/collections/geofm.nothing");
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get("content-type"), "application/problem+json");
  });

  test("items of each collection, paged with next links, equal the /api/embeddings listing", async () => {
    const listing: string[] = (await stac("/api/embeddings?limit=1000"))
      .json()
      .items.map((i: { name: string }) => i.name);
    assert.deepEqual(listing, expected);
    everything = [];
    for (const f of FAMILIES)
      for (const p of PRODUCTS) {
        const id = `${f}.${p}`;
        const want = listing.filter((n) => n.startsWith(`${f}~rf~v1.2~base~${p}~`));
        const { features, pages } = await allGet(`/stac/collections/${id}/items?limit=4`);
        assert.deepEqual(ids(features), want, id);
        assert.ok(want.length > 4, id);
        assert.equal(pages, Math.ceil(want.length / 4), id);
        for (const ft of features) assert.equal(ft.collection, id);
        everything.push(...features);
      }
    assert.deepEqual(sorted(ids(everything)), expected);
  });

  test("an item: footprint, projection and latent fields equal /api/embeddings/item; links", async () => {
    const picks = [expected[0], expected.find((n) => n.includes("~vector~"))!, expected.at(-1)!];
    for (const name of picks) {
      const cid = collectionOf(name);
      const r = await stac(`/stac/collections/${cid}/items/${name}`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get("content-type") ?? "", /^application\/geo\+json/);
      const it = r.json() as Feature;
      const meta = (await stac(`/api/embeddings/item/${name}`)).json();
      assert.equal(it.id, name);
      const raw = it as unknown as { stac_version: string; stac_extensions: string[] };
      assert.equal(raw.stac_version, "1.1.0");
      assert.deepEqual(raw.stac_extensions, ["https://stac-extensions.github.io/projection/v2.0.0/schema.json"]);
      assert.deepEqual(it.bbox, meta.bbox);
      const [w, s, e, n] = meta.bbox;
      assert.deepEqual(it.geometry, {
        type: "Polygon",
        coordinates: [
          [
            [w, s],
            [e, s],
            [e, n],
            [w, n],
            [w, s],
          ],
        ],
      });
      const p = it.properties;
      assert.equal(p["proj:code"], `EPSG:${meta.epsg}`);
      assert.deepEqual(p["proj:shape"], meta.latent.served_shape.slice(0, 2));
      assert.deepEqual(p["proj:transform"], meta.transform ?? undefined);
      assert.deepEqual(p["proj:bbox"], meta.bbox_utm);
      assert.equal(p["latent:feature_count"], meta.feature_count);
      assert.equal(p["latent:dtype"], meta.latent.dtype);
      assert.equal(p["latent:quantization"], meta.values.quantization.scheme);
      assert.deepEqual(p["latent:stored_dims"], meta.latent.dims);
      assert.equal(p.start_datetime, `${meta.period.start}T00:00:00Z`);
      assert.equal(p.end_datetime, `${meta.period.end}T23:59:59Z`);
      const rels = Object.fromEntries(it.links.map((l) => [l.rel, l.href]));
      assert.equal(rels.self, `/stac/collections/${cid}/items/${name}`);
      assert.equal(rels.parent, `/stac/collections/${cid}`);
      assert.equal(rels.collection, `/stac/collections/${cid}`);
      assert.equal(rels.root, "/stac");
      // The item from the listing is the same document.
      assert.deepEqual(
        everything.find((f) => f.id === name),
        it,
      );
    }
    assert.equal(
      (await stac(`/stac/collections/geofm.map/items/${expected.find((n) => n.includes("~vector~"))}`)).status,
      404,
    );
    assert.equal((await stac("/stac/collections/geofm.map/items/not-an-item")).status, 400);
  });

  test("assets answer the same bytes as the existing routes; the .npy needs the key and is metered", async () => {
    const name = expected.find((n) => n.includes("~map~"))!;
    const it = (await stac(`/stac/collections/${collectionOf(name)}/items/${name}`)).json() as Feature;
    const npy = await stac(it.assets.latent.href);
    assert.equal(npy.status, 200);
    const direct = await stac(`/api/embeddings/npy/${name}`);
    assert.ok(npy.body.equals(direct.body));
    assert.ok(Number(npy.headers.get("x-credits-charged")) >= 1);
    // The whole slice: every feature.
    assert.match(npy.body.subarray(0, 128).toString("latin1"), /'shape': \(32, 32, 16\)/);
    assert.equal((await stac(it.assets.latent.href, null)).status, 401);
    const meta = await stac(it.assets.metadata.href);
    assert.ok(meta.body.equals((await stac(`/api/embeddings/item/${name}`)).body));
    assert.equal(meta.headers.get("x-credits-charged"), "1");
    const preview = await stac(it.assets.preview.href);
    assert.ok(preview.json().preview.data.length > 0);
    assert.ok(it.assets.latent.href.endsWith(`/api/embeddings/npy/${name}`));
  });

  test("search by bbox equals the listing filtered by footprint, and holds what locate finds", async () => {
    const meets = (b: number[], q: number[]) => b[0] <= q[2] && b[2] >= q[0] && b[1] <= q[3] && b[3] >= q[1];
    for (const q of [
      [11, 48, 12, 49],
      [-10, 30, 30, 60],
      [-180, -90, 180, 90],
      [100, -10, 110, 0],
    ]) {
      const want = sorted(everything.filter((f) => meets(f.bbox, q)).map((f) => f.id));
      // Each query but the empty ocean one selects some items and not all but the world.
      if (q[0] === 100) assert.equal(want.length, 0);
      else if (q[0] === -180) assert.equal(want.length, expected.length);
      else assert.ok(want.length > 0 && want.length < expected.length, q.join(","));
      const got = await allGet(`/stac/search?bbox=${q.join(",")}&limit=5`);
      assert.deepEqual(sorted(ids(got.features)), want, q.join(","));
      assert.equal(new Set(ids(got.features)).size, got.features.length, "no duplicates");
      assert.deepEqual(sorted(ids(await allPost({ bbox: q, limit: 5 }))), want, `POST ${q.join(",")}`);
    }
    const loc = (await stac("/api/embeddings/locate?lon=11.58&lat=48.14")).json();
    const point = await allGet(
      `/stac/search?intersects=${encodeURIComponent(JSON.stringify({ type: "Point", coordinates: [11.58, 48.14] }))}`,
    );
    for (const n of loc.available_items) assert.ok(ids(point.features).includes(n), n);
    for (const f of point.features) assert.ok(meets(f.bbox, [11.58, 48.14, 11.58, 48.14]), f.id);
  });

  test("search by datetime, collections and ids; POST equals GET", async () => {
    const [p0, p1] = PERIODS;
    const cases: [string, Record<string, unknown>, (n: string) => boolean][] = [
      ["datetime=2026-07-01T12:00:00Z", { datetime: "2026-07-01T12:00:00Z" }, (n) => n.includes(p0)],
      ["datetime=2026-10-01T00:00:00%2B02:00/..", { datetime: "2026-10-01T00:00:00+02:00/.." }, (n) => n.includes(p1)],
      ["datetime=../2026-05-31T23:59:59Z", { datetime: "../2026-05-31T23:59:59Z" }, () => false],
      [
        "datetime=2026-08-31T23:00:00Z/2026-09-01T00:00:00Z",
        { datetime: "2026-08-31T23:00:00Z/2026-09-01T00:00:00Z" },
        () => true,
      ],
      [
        "collections=terramind.vector,geofm.tokens",
        { collections: ["terramind.vector", "geofm.tokens"] },
        (n) => ["terramind.vector", "geofm.tokens"].includes(collectionOf(n)),
      ],
      [
        `collections=geofm.map&datetime=2026-07-01T00:00:00Z&bbox=-10,30,30,60`,
        { collections: ["geofm.map"], datetime: "2026-07-01T00:00:00Z", bbox: [-10, 30, 30, 60] },
        (n) =>
          collectionOf(n) === "geofm.map" &&
          n.includes(p0) &&
          everything.find((f) => f.id === n)!.bbox[0] <= 30 &&
          everything.find((f) => f.id === n)!.bbox[2] >= -10 &&
          everything.find((f) => f.id === n)!.bbox[1] <= 60 &&
          everything.find((f) => f.id === n)!.bbox[3] >= 30,
      ],
    ];
    for (const [q, body, keep] of cases) {
      const want = expected.filter(keep);
      assert.ok(q.startsWith("datetime=..") || want.length > 0, q);
      const got = await allGet(`/stac/search?${q}&limit=7`);
      assert.deepEqual(sorted(ids(got.features)), want, q);
      assert.deepEqual(sorted(ids(await allPost({ ...body, limit: 7 }))), want, `POST ${q}`);
    }
    const some = [expected[3], expected[40], expected[77], expected.at(-1)!];
    const byIds = await allGet(
      `/stac/search?ids=${some.join(",")},geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~01CCV&limit=2`,
    );
    assert.deepEqual(ids(byIds.features), sorted(some));
    assert.deepEqual(ids(await allPost({ ids: some, limit: 3 })), sorted(some));
    const filtered = await allGet(`/stac/search?ids=${some.join(",")}&collections=${collectionOf(some[0])}`);
    assert.deepEqual(
      ids(filtered.features),
      some.filter((n) => collectionOf(n) === collectionOf(some[0])),
    );
  });

  test("bad searches: 400 problem+json naming the parameter", async () => {
    const point = encodeURIComponent(JSON.stringify({ type: "Point", coordinates: [11, 48] }));
    for (const [q, param] of [
      [`bbox=10,40,12,50&intersects=${point}`, "intersects"],
      ["limit=0", "limit"],
      ["limit=-3", "limit"],
      ["datetime=2026-07-01T00:00:00", "datetime"],
      ["datetime=2026-07-01", "datetime"],
      ["datetime=2026-07-01T00:00:00/..", "datetime"],
      ["datetime=2026-02-30T00:00:00Z", "datetime"],
      [`intersects=${encodeURIComponent('{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1]]]}')}`, "intersects"],
      [`intersects=${encodeURIComponent('{"type":"Point"}')}`, "intersects"],
      ["intersects=not-json", "intersects"],
      ["bbox=10,40,12", "bbox"],
      ["bbox=10,40,12,x", "bbox"],
      ["bbox=10,50,12,40", "bbox"],
      ["collections=nope.map", "collections"],
      ["token=zzz", "token"],
      ["query=%7B%7D", "query"],
    ]) {
      const r = await stac(`/stac/search?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.headers.get("content-type"), "application/problem+json", q);
      assert.equal(r.json().param, param, q);
    }
    for (const [body, param] of [
      [{ bbox: [10, 40, 12, 50], intersects: { type: "Point", coordinates: [11, 48] } }, "intersects"],
      [{ limit: 0 }, "limit"],
      [{ datetime: "2026-07-01T00:00:00" }, "datetime"],
      [
        {
          intersects: {
            type: "Polygon",
            coordinates: [
              [
                [0, 0],
                [1, 1],
              ],
            ],
          },
        },
        "intersects",
      ],
      [{ bbox: [10, 40, 12] }, "bbox"],
      [{ sortby: [{ field: "id", direction: "asc" }] }, "sortby"],
      ["{not json", "body"],
      [[1, 2], "body"],
    ] as [unknown, string][]) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.headers.get("content-type"), "application/problem+json");
      assert.equal(r.json().param, param, JSON.stringify(body));
    }
    assert.equal((await post({}, null)).status, 401);
    // A body past MAX_JSON_BODY is refused before it is parsed; one not sent as JSON is a 400.
    const huge = await post({ ids: Array.from({ length: 30_000 }, (_, i) => `x${i}`.padEnd(12, "x")) });
    assert.equal(huge.status, 413);
    assert.equal(huge.headers.get("content-type"), "application/problem+json");
    const text = await fetch(`${srv.url}/stac/search`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "text/plain" },
      body: "{}",
    });
    assert.equal(text.status, 400);
    assert.equal((await text.json()).param, "body");
    const put = await fetch(`${srv.url}/stac/search`, { method: "PUT", headers: { "X-API-Key": key } });
    assert.equal(put.status, 405);
    assert.match(put.headers.get("allow") ?? "", /GET.*POST/);
  });

  test("a build without the STAC index, and no build at all: 503 problem+json, not an empty catalogue", async () => {
    const other = await testServer(storeDir);
    try {
      const k = await other.key(["embeddings"]);
      const none = await get(`${other.url}/stac/search`, { "X-API-Key": k });
      assert.equal(none.status, 503);
      assert.equal(none.headers.get("content-type"), "application/problem+json");
      await publish(other, storeDir);
      rmSync(join(other.running.ctx.settings.out, "current", "embeddings", "stac"), { recursive: true });
      for (const path of ["/stac", "/stac/collections", "/stac/search?bbox=0,0,1,1"]) {
        const r = await get(`${other.url}${path}`, { "X-API-Key": k });
        assert.equal(r.status, 503, path);
        assert.match(r.json().detail, /rebuild/, path);
      }
      // The rest of the embeddings API is untouched by it.
      assert.equal((await get(`${other.url}/api/embeddings?limit=1`, { "X-API-Key": k })).status, 200);
    } finally {
      await other.close();
    }
  });
});
