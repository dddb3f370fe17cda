// WMTS and TileJSON as GIS clients read them. A build of two layers (global, and the regional
// europe patch) with public_url set: its TileJSON `tiles` are absolute and its static WMTS
// document points at public_url. The live capabilities (base URL from the trusted proxy headers)
// are opened by OWSLib and GDAL's WMTS driver: layers, the Time dimension, limits of the regional
// layer, the legend, and tiles equal to the XYZ tiles. Without public_url and an untrusted proxy
// the live document is refused, and the static files say the setting is missing.
import assert from "node:assert/strict";
import { readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/gis_wmts.py");
const PUBLIC = "https://maps.example.org/gc";
const MAX_ZOOM = 3;

let storeDir: string;
let srv: TestServer;
let dir: string;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir, { trust_proxy: 1 });
  const r = await build({
    store: storeDir,
    out: srv.running.ctx.settings.out,
    maxZoom: MAX_ZOOM,
    groups: ["global", "europe"],
    vars: ["t2m"],
    leads: [0, 3],
    orientation: false,
    publicUrl: PUBLIC,
  });
  await until(
    "build visible",
    async () => (await get(`${srv.url}/api/forecast/catalog`)).json().build_id === r.build_id,
  );
  dir = realpathSync(join(srv.running.ctx.settings.out, "current"));
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

/** A URL the build wrote on PUBLIC, as the path of its file below the build directory. */
function fileOf(url: string): string {
  assert.ok(url.startsWith(`${PUBLIC}/`), `${url} is not on public_url`);
  return join(dir, url.slice(PUBLIC.length + 1));
}

test("TileJSON 3.0.0 with absolute tile URLs on public_url, bounds where the regional layer has tiles", () => {
  const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  assert.equal(catalog.public_url, PUBLIC);
  const europe = catalog.layers.find((l: { id: string }) => l.id === "europe.t2m");
  const lead = europe.runs.at(-1).leads[0];
  const tj = JSON.parse(readFileSync(fileOf(lead.tilejson), "utf8"));
  assert.equal(tj.tilejson, "3.0.0");
  assert.deepEqual(tj.tiles, [
    `${PUBLIC}/tiles/europe.t2m/${europe.runs.at(-1).token}.${europe.drawing}/0/{z}/{x}/{y}.png`,
  ]);
  assert.ok(new URL(tj.tiles[0]).protocol === "https:");
  assert.equal(tj.public_url_missing, undefined);
  assert.equal(tj.legend, `${PUBLIC}/legends/europe.t2m.json`);
  // The patch's own bounds (about 12° W..40° E, 35..72° N), not the globe's.
  assert.deepEqual(tj.bounds, europe.bounds);
  assert.ok(tj.bounds[0] > -20 && tj.bounds[2] < 50 && tj.bounds[1] > 20, `bounds ${tj.bounds}`);
  assert.equal(tj.maxzoom, MAX_ZOOM);
  const wmts = readFileSync(join(dir, "wmts/1.0.0/WMTSCapabilities.xml"), "utf8");
  assert.match(
    wmts,
    new RegExp(
      `template="${PUBLIC}/api/forecast/tile/\\{TileMatrix\\}/\\{TileCol\\}/\\{TileRow\\}\\?layer=europe\\.t2m`,
    ),
  );
  assert.doesNotMatch(wmts, /public_url is not set/);
});

test("every URL in the build's catalog is absolute on public_url and names a file of the build", () => {
  const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  assert.equal(catalog.public_url_missing, undefined);
  assert.ok(catalog.tile_url_template.startsWith(`${PUBLIC}/api/forecast/tile/`), catalog.tile_url_template);
  let leads = 0;
  for (const layer of catalog.layers) {
    assert.ok(readFileSync(fileOf(layer.legend.png)).length > 0);
    assert.ok(JSON.parse(readFileSync(fileOf(layer.legend.json), "utf8")));
    for (const run of layer.runs) {
      for (const lead of run.leads) {
        leads++;
        assert.ok(JSON.parse(readFileSync(fileOf(lead.tilejson), "utf8")).tiles[0] === lead.tiles);
        assert.ok(readFileSync(fileOf(lead.tiles.replace("{z}/{x}/{y}", "0/0/0"))).length > 0, lead.tiles);
        assert.ok(lead.route.startsWith(`${PUBLIC}/api/forecast/tile/{z}/{x}/{y}?layer=`), lead.route);
      }
    }
  }
  assert.equal(leads, 4);
});

test("the live catalog on the server's own base URL: every URL moved from the build's public_url to it", async () => {
  // trust_proxy 1: the base comes from the proxy's headers, and the answer varies with them.
  const r = await get(`${srv.url}/api/forecast/catalog`, {
    "X-Forwarded-Host": "tiles.example.net",
    "X-Forwarded-Proto": "https",
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("vary") ?? "", /X-Forwarded-Host/);
  const live = r.json();
  const built = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  const other = "https://tiles.example.net";
  assert.equal(live.public_url, other);
  assert.equal(live.tile_url_template, built.tile_url_template.replace(PUBLIC, other));
  const [a, b] = [live.layers[0], built.layers[0]];
  assert.equal(a.legend.png, b.legend.png.replace(PUBLIC, other));
  const [la, lb] = [a.runs[0].leads[0], b.runs[0].leads[0]];
  for (const k of ["tiles", "route", "tilejson"]) assert.equal(la[k], lb[k].replace(PUBLIC, other), k);
  assert.doesNotMatch(r.body.toString("utf8"), /maps\.example\.org/);
  // And through the server's own address: the live tile route answers the catalog's route URL.
  const own = (await get(`${srv.url}/api/forecast/catalog`, { "X-Forwarded-Host": new URL(srv.url).host })).json();
  const lead = own.layers.find((l: { id: string }) => l.id === "europe.t2m").runs.at(-1).leads[0];
  const tile = await get(lead.route.replace("{z}/{x}/{y}", "3/4/2"));
  assert.equal(tile.status, 200);
  assert.equal(tile.headers.get("content-type"), "image/png");
});

test("OWSLib and GDAL's WMTS driver open the live capabilities: time steps, limits, legend, tiles equal to the XYZ tiles", async () => {
  const wmtsUrl = `${srv.url}/wmts/1.0.0/WMTSCapabilities.xml`;
  const live = await get(wmtsUrl);
  assert.equal(live.status, 200);
  assert.match(live.headers.get("content-type") ?? "", /application\/xml/);
  // Its URLs came from the request (trust_proxy 1): caches must keep one per host.
  assert.match(live.headers.get("vary") ?? "", /X-Forwarded-Host/);
  // A tile of zoom 3 inside the europe patch (10° E, 50° N).
  const [z, x, y] = [MAX_ZOOM, 4, 2];
  const r = await pythonJson<{
    layers: string[];
    times: string[];
    default_time: string;
    matrices: number[];
    limits: Record<string, number[]>;
    legend: (string | null)[];
    template: string;
    owslib_tile_equal: boolean;
    gdal: { bands: number; srs: string; overlap: number[] };
    gdal_pixels_equal: boolean;
    gdal_opaque_pixels: number;
    global: { size: number[]; geotransform: number[]; pixels_equal: boolean; opaque: number };
  }>(PYTHON, SCRIPT, [], {
    wmts: wmtsUrl,
    base: srv.url,
    layer: "europe.t2m",
    tile: [z, x, y],
    lead: 3,
    global_layer: "global.t2m",
    global_zoom: 2,
  });
  assert.deepEqual(r.layers, ["europe.t2m", "global.t2m"]);
  assert.equal(r.times.length, 2);
  assert.equal(r.default_time, r.times[0]);
  assert.match(r.times[1], /^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
  assert.equal(Date.parse(r.times[1]) - Date.parse(r.times[0]), 3 * 3_600_000);
  assert.deepEqual(r.matrices, [0, 1, 2, 3]);
  // Europe (about 12° W..40° E, 34..72° N) at zoom 3: columns 3..4, rows 1..3.
  assert.deepEqual(r.limits["3"], [1, 3, 3, 4]);
  assert.ok(r.legend[0]?.startsWith(`${srv.url}/legends/europe.t2m.png`), String(r.legend[0]));
  assert.ok(r.template.startsWith(`${srv.url}/api/forecast/tile/`));
  assert.ok(r.owslib_tile_equal, "OWSLib's tile differs from the XYZ tile of the same lead");
  assert.equal(r.gdal.srs, "3857");
  assert.ok(r.gdal_pixels_equal, "GDAL's WMTS pixels differ from the XYZ tile");
  assert.ok(r.gdal.overlap[0] * r.gdal.overlap[1] > 10_000, `overlap ${r.gdal.overlap}`);
  assert.ok(r.gdal_opaque_pixels > 1000);
  // The global layer whole at zoom 2 through gdal_translate: the whole 4 × 4 matrix, pixel for
  // pixel the XYZ tiles (its bounding box stays inside the matrix set's ±85.0511°).
  assert.deepEqual(r.global.size, [1024, 1024]);
  assert.ok(Math.abs(r.global.geotransform[3] - 20037508.3427892) < 1, `top ${r.global.geotransform[3]}`);
  assert.ok(r.global.pixels_equal, "GDAL's copy of the global layer differs from the XYZ tiles");
  assert.ok(r.global.opaque > 500_000, `only ${r.global.opaque} opaque pixels`);
});

test("every layer's bounding boxes stay inside the matrix set, in WGS84 and in EPSG:3857", async () => {
  const xml = (await get(`${srv.url}/wmts/1.0.0/WMTSCapabilities.xml`)).body.toString("utf8");
  const layers = [...xml.matchAll(/<Layer>(.*?)<\/Layer>/gs)].map((m) => m[1]);
  assert.equal(layers.length, 2);
  for (const layer of layers) {
    const wgs = layer.match(
      /<ows:WGS84BoundingBox><ows:LowerCorner>([^<\s]+) ([^<\s]+)<\/ows:LowerCorner><ows:UpperCorner>([^<\s]+) ([^<\s]+)</,
    );
    const merc = layer.match(
      /<ows:BoundingBox crs="urn:ogc:def:crs:EPSG::3857"><ows:LowerCorner>([^<\s]+) ([^<\s]+)<\/ows:LowerCorner><ows:UpperCorner>([^<\s]+) ([^<\s]+)</,
    );
    assert.ok(wgs && merc, "both boxes present");
    const [, , s, , n] = wgs.map(Number);
    assert.ok(s >= -85.0512 && n <= 85.0512, `latitudes ${s}..${n}`);
    const [, x0, y0, x1, y1] = merc.map(Number);
    for (const v of [x0, y0, x1, y1]) assert.ok(Math.abs(v) <= 20037508.35, `${v} outside the square`);
    assert.ok(x0 < x1 && y0 < y1);
  }
});

test("outside the regional patch the tile route answers a transparent tile", async () => {
  const r = await get(`${srv.url}/api/forecast/tile/${MAX_ZOOM}/0/7?layer=europe.t2m`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get("content-type"), "image/png");
  const { width, height, data } = await decodeRgba(r.body);
  assert.equal(width * height, 256 * 256);
  for (let i = 3; i < data.length; i += 4) assert.equal(data[i], 0, `pixel ${(i - 3) / 4} is not transparent`);
  // Inside the patch, the same route draws the field.
  const inside = await decodeRgba((await get(`${srv.url}/api/forecast/tile/${MAX_ZOOM}/4/2?layer=europe.t2m`)).body);
  let opaque = 0;
  for (let i = 3; i < inside.data.length; i += 4) if (inside.data[i] > 0) opaque++;
  assert.ok(opaque > 1000, `only ${opaque} opaque pixels inside the patch`);
});

test("without public_url and with an untrusted proxy the live WMTS is refused; the tile route takes a valid time", async () => {
  const settings = srv.running.ctx.settings;
  settings.trust_proxy = 0;
  try {
    const r = await get(`${srv.url}/wmts/1.0.0/WMTSCapabilities.xml`, { "X-Forwarded-Host": "evil.example" });
    assert.equal(r.status, 404);
    assert.equal(r.headers.get("content-type"), "application/problem+json");
    assert.match(r.json().detail, /public_url is not set/);
    assert.doesNotMatch(r.body.toString("utf8"), /evil\.example/);
  } finally {
    settings.trust_proxy = 1;
  }
  const catalog = (await get(`${srv.url}/api/forecast/catalog`)).json();
  const lead = catalog.layers.find((l: { id: string }) => l.id === "europe.t2m").runs.at(-1).leads[1];
  const byTime = await get(`${srv.url}/api/forecast/tile/2/2/1?layer=europe.t2m&time=${lead.valid_time}Z`);
  const byLead = await get(`${srv.url}/api/forecast/tile/2/2/1?layer=europe.t2m&lead=${lead.hours}`);
  assert.equal(byTime.status, 200);
  assert.deepEqual(byTime.body, byLead.body);
  const none = await get(`${srv.url}/api/forecast/tile/2/2/1?layer=europe.t2m&time=1999-01-01T00:00:00Z`);
  assert.equal(none.status, 404);
});
