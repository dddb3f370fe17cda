// GET /api/embeddings/locate over real HTTP: MGRS zone rules (boundaries, Norway, Svalbard, both
// hemispheres), bounds that hold the point, pixel, availability against the generator's own list,
// and that the answer comes from the published index without touching the store.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FileSystemStore } from "@zarrita/storage";
import proj4 from "proj4";
import * as zarr from "zarrita";
import { LocateResult } from "../../src/http/schemas/embeddings.ts";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { conforms, expectedItems, publish, publishedServer, resetReads } from "./fixtures.ts";

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

const locate = (q: string, k: string | null = key, s = srv) =>
  get(`${s.url}/api/embeddings/locate?${q}`, k ? { "X-API-Key": k } : {});

// Zones follow the MGRS rules, not the plain 6° grid: Norway's 32V spans 3..12°E, Svalbard's
// band X has only 31X (0..9°E), 33X (9..21°E), 35X (21..33°E) and 37X (33..42°E).
const POINTS: { what: string; lon: number; lat: number; zone: number; south: boolean; tile?: string }[] = [
  { what: "west of the 6°E zone boundary", lon: 5.99, lat: 47.0, zone: 31, south: false, tile: "31TGN" },
  { what: "east of the 6°E zone boundary", lon: 6.01, lat: 47.0, zone: 32, south: false, tile: "32TKT" },
  { what: "Norway 32V exception (plain grid: 31)", lon: 5.3, lat: 60.4, zone: 32, south: false, tile: "32VKN" },
  { what: "Norway 32V west edge (plain grid: 31)", lon: 3.5, lat: 60.4, zone: 32, south: false },
  { what: "Svalbard 31X (plain grid: 32)", lon: 8.0, lat: 78.0, zone: 31, south: false },
  { what: "Svalbard 33X (plain grid: 32)", lon: 10.0, lat: 78.0, zone: 33, south: false },
  { what: "Svalbard 33X, a generated tile", lon: 15.6, lat: 78.2, zone: 33, south: false, tile: "33XWG" },
  { what: "Svalbard 35X (plain grid: 34)", lon: 22.0, lat: 78.0, zone: 35, south: false },
  { what: "southern hemisphere, Sydney", lon: 151.2, lat: -33.9, zone: 56, south: true, tile: "56HLH" },
  { what: "southern hemisphere, Cape Town", lon: 18.4, lat: -33.9, zone: 34, south: true, tile: "34HBH" },
  { what: "on the equator", lon: 37.0, lat: 0.0, zone: 37, south: false, tile: "37NBA" },
  { what: "just south of the equator", lon: 37.0, lat: -0.0001, zone: 37, south: true },
  { what: "longitude given as 0..360", lon: 313.4, lat: -23.5, zone: 23, south: true, tile: "23KLQ" },
];

async function pixelCentres(path: string): Promise<{ x: Float64Array; y: Float64Array }> {
  const root = zarr.root(new FileSystemStore(storeDir));
  const read = async (n: string) =>
    (await zarr.get(await zarr.open(root.resolve(`embeddings/${path}/${n}`), { kind: "array" }))).data as Float64Array;
  return { x: await read("x"), y: await read("y") };
}

describe("GET /api/embeddings/locate", () => {
  const seen = { available: 0, missing: 0 };
  for (const p of POINTS) {
    test(`${p.what}: zone, CRS, bounds holding the point, availability, pixel`, async () => {
      const r = await locate(`lon=${p.lon}&lat=${p.lat}`);
      assert.equal(r.status, 200, r.body.toString());
      const b = r.json();
      assert.ok(conforms(LocateResult, b), "matches the documented schema");
      assert.equal(b.utm_zone, p.zone);
      assert.equal(b.hemisphere, p.south ? "S" : "N");
      assert.equal(b.crs, `EPSG:${(p.south ? 32700 : 32600) + p.zone}`);
      assert.match(b.tile, new RegExp(`^${p.zone}[C-X][A-Z]{2}$`));
      if (p.tile) assert.equal(b.tile, p.tile);

      const lon = p.lon > 180 ? p.lon - 360 : p.lon;
      const [w, s, e, n] = b.bbox;
      assert.ok(lon >= w && lon <= e && p.lat >= s && p.lat <= n, `${lon},${p.lat} outside ${b.bbox}`);
      const proj = `+proj=utm +zone=${p.zone}${p.south ? " +south" : ""} +datum=WGS84 +units=m +no_defs`;
      const [x, y] = proj4("WGS84", proj).forward([lon, p.lat]);
      assert.ok(Math.abs(b.point_utm[0] - x) < 0.01 && Math.abs(b.point_utm[1] - y) < 0.01);
      const [x0, y0, x1, y1] = b.bbox_utm;
      assert.ok(x >= x0 && x <= x1 && y >= y0 && y <= y1, `${x},${y} outside ${b.bbox_utm}`);

      // Defaults: first family, map, the latest period published for them.
      assert.equal(b.item, `geofm~rf~v1.2~base~map~2026_09_01_2026_11_30~${b.tile}`);
      assert.equal(b.available, expected.includes(b.item));
      assert.deepEqual(
        b.available_items,
        expected.filter((name) => name.endsWith(`~${b.tile}`)),
      );
      if (!b.available) {
        seen.missing++;
        assert.equal(b.pixel, null);
        return;
      }
      seen.available++;
      // The pixel is the one whose centre is nearest the point, by the stored coordinates.
      const c = await pixelCentres(b.item.replaceAll("~", "/"));
      const res = Math.abs(c.x[1] - c.x[0]);
      assert.ok(Math.abs(c.x[b.pixel.col] - x) <= res / 2 + 1e-6);
      assert.ok(Math.abs(c.y[b.pixel.row] - y) <= res / 2 + 1e-6);
    });
  }

  test("the points above met both available and missing items", () => {
    assert.ok(seen.available >= 4 && seen.missing >= 4, JSON.stringify(seen));
  });

  test("availability matches the generator across all sample tiles", async () => {
    // terramind tokens has items and holes across the sample's tiles; both must come out right.
    const names = expected.filter((n) => n.startsWith("terramind~rf~v1.2~base~tokens~2026_06_01_2026_08_31~"));
    const r = await locate("lon=11.5&lat=48.1&family=terramind&product=tokens&period=2026_06_01_2026_08_31");
    const b = r.json();
    assert.equal(b.item, `terramind~rf~v1.2~base~tokens~2026_06_01_2026_08_31~${b.tile}`);
    assert.equal(b.available, names.includes(b.item));
    for (const [lon, lat] of [
      [5.99, 47.0],
      [6.01, 47.0],
      [5.3, 60.4],
      [15.6, 78.2],
      [37.0, 0.0],
      [36.8, -1.3],
      [151.2, -33.9],
      [18.4, -33.9],
      [-46.6, -23.5],
      [-74.0, 40.7],
      [139.7, 35.7],
    ]) {
      const got = (
        await locate(`lon=${lon}&lat=${lat}&family=terramind&product=tokens&period=2026_06_01_2026_08_31`)
      ).json();
      assert.equal(got.available, names.includes(got.item), got.item);
    }
    assert.ok(names.length > 0 && names.length < 12, "the sample keeps some tiles and drops others");
  });

  test("answers from memory: no store listing, no store read", async () => {
    await locate("lon=5.3&lat=60.4"); // load the index once
    resetReads(srv);
    for (const p of POINTS) assert.equal((await locate(`lon=${p.lon}&lat=${p.lat}`)).status, 200);
    assert.equal(
      (await locate("lon=10&lat=78&family=terramind&product=vector&period=2026_06_01_2026_08_31")).status,
      200,
    );
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), []);
    assert.equal(srv.running.ctx.store.backend.lists, 0);
  });

  test("polar latitudes and malformed selectors are 400 naming the parameter", async () => {
    for (const [q, param] of [
      ["lon=10&lat=84.01", "lat"],
      ["lon=10&lat=-80.01", "lat"],
      ["lon=361&lat=10", "lon"],
      ["lat=10", "lon"],
      ["lon=10&lat=10&product=MAP", "product"],
      ["lon=10&lat=10&period=2026", "period"],
      ["lon=10&lat=10&family=../x", "family"],
    ]) {
      const r = await locate(q);
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, param, q);
    }
    assert.equal((await locate("lon=10&lat=84")).status, 200);
    assert.equal((await locate("lon=10&lat=-80")).status, 200);
  });

  test("a well-formed combination that is not published is simply not available", async () => {
    const b = (await locate("lon=5.3&lat=60.4&family=nosuch&product=map&period=2026_06_01_2026_08_31")).json();
    assert.equal(b.item, "nosuch~rf~v1.2~base~map~2026_06_01_2026_08_31~32VKN");
    assert.equal(b.available, false);
    assert.equal(b.tile, "32VKN");
  });

  test("needs a key with the embeddings scope", async () => {
    assert.equal((await locate("lon=5.3&lat=60.4", null)).status, 401);
    assert.equal((await locate("lon=5.3&lat=60.4", await srv.key(["weather"]))).status, 403);
  });

  test("503 before any build is published, then the published index once it is", async () => {
    const bare = await testServer(storeDir);
    try {
      const k = await bare.key(["embeddings"]);
      const r = await locate("lon=5.3&lat=60.4", k, bare);
      assert.equal(r.status, 503);
      assert.match(r.json().detail, /no build is published/);
      await publish(bare, storeDir);
      // The server re-checks the published link every 250 ms; poll rather than guess how long that takes.
      await until(
        "the published index is used",
        async () => (await locate("lon=5.3&lat=60.4", k, bare)).status === 200,
      );
      assert.equal((await locate("lon=5.3&lat=60.4", k, bare)).json().available, true);
    } finally {
      await bare.close();
    }
  });
});
