// The public map routes over real HTTP: catalog, pre-rendered tiles (route and static path) and
// the click value, their caching headers, their errors, and responses true to the OpenAPI schemas.
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Value from "typebox/value";
import type { Catalog } from "../../src/published/layout.ts";
import { runPart } from "../../src/published/layout.ts";
import { lonLatToTile, pixelLat, pixelLon, TILE_SIZE } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, type Got, get, rawGet, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { build, expectedPixels, layerField } from "../pipeline/build-fixture.ts";
import { decodeRgba, pixel } from "../render/decode.ts";

let storeDir: string;
let srv: TestServer;
let out: string;
let dir: string;
let catalog: Catalog;
const OLD = "20261120T0000";
const NEW = "20261120T1200";

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  out = srv.running.ctx.settings.out;
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

const api = (path: string, headers: Record<string, string> = {}) => get(`${srv.url}/api/forecast/${path}`, headers);

function problem(r: Got, status: number, param?: string): void {
  assert.equal(r.status, status, r.body.toString());
  assert.equal(r.headers.get("content-type"), "application/problem+json");
  if (param) assert.equal(r.json().param, param);
}

async function waitForBuild(id: string): Promise<void> {
  await until(`build ${id} visible`, async () => {
    const r = await api("catalog");
    return r.status === 200 && r.json().build_id === id;
  });
}

describe("map routes", () => {
  test("before any build: catalog and tiles answer 503, values still come from the store", async () => {
    problem(await api("catalog"), 503);
    problem(await api("tile/0/0/0?layer=global.t2m"), 503);
    const v = await api("value?layer=global.t2m&lat=10&lon=20");
    assert.equal(v.status, 200);
    assert.equal(v.json().run, "2026-11-20T12:00:00");

    const r = await build({
      store: storeDir,
      out,
      maxZoom: 2,
      runs: "all",
      groups: ["global", "europe"],
      vars: ["t2m", "tp_1h", "t"],
      leads: [0, 3],
    });
    await waitForBuild(r.build_id);
    dir = realpathSync(join(out, "current"));
    catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  });

  test("without public_url the build's documents hold paths and say the setting is missing", () => {
    assert.equal(catalog.public_url, null);
    assert.match(String(catalog.public_url_missing), /public_url is not set/);
    const lead = catalog.layers[0].runs[0].leads[0];
    // Paths from the build root, nothing made up for a host.
    for (const url of [
      lead.tiles,
      lead.route,
      lead.tilejson,
      catalog.layers[0].legend!.png,
      catalog.tile_url_template,
    ]) {
      assert.match(url, /^\/(tiles|api|tilejson|legends)\//);
    }
    const tj = JSON.parse(readFileSync(join(dir, lead.tilejson), "utf8"));
    assert.deepEqual(tj.tiles, [lead.tiles]);
    assert.equal(tj.legend, catalog.layers[0].legend!.json);
    assert.match(tj.public_url_missing, /public_url is not set/);
    const wmts = readFileSync(join(dir, "wmts/1.0.0/WMTSCapabilities.xml"), "utf8");
    assert.match(wmts, /<!-- public_url is not set/);
  });

  test("catalog: the published catalog, cacheable for a minute, with an ETag", async () => {
    const r = await api("catalog");
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), catalog);
    assert.equal(r.headers.get("cache-control"), "public, max-age=60");
    assert.equal(r.headers.get("access-control-allow-origin"), "*");
    const etag = r.headers.get("etag")!;
    assert.match(etag, /^"[\w-]+"$/);
    assert.equal((await api("catalog", { "If-None-Match": etag })).status, 304);
  });

  /** The run segment of a layer's tile paths: the run token and the layer's drawing. */
  const runDir = (layer: string, token: string) => {
    const drawing = catalog.layers.find((l) => l.id === layer)?.drawing;
    assert.match(String(drawing), /^r\d+-[0-9a-f]{8}$/, `${layer} has a drawing`);
    return runPart(token, drawing);
  };

  test("tile: the build's PNG through the route and the static path; pinned runs under their drawing are immutable", async () => {
    const drawing = catalog.layers.find((l) => l.id === "global.t2m")!.drawing!;
    const file = readFileSync(join(dir, "tiles", "global.t2m", runDir("global.t2m", OLD), "3", "2", "1", "1.png"));
    const pinned = await api(`tile/2/1/1?layer=global.t2m&run=${OLD}&lead=3&drawing=${drawing}`);
    assert.equal(pinned.status, 200);
    assert.equal(pinned.headers.get("content-type"), "image/png");
    assert.ok(pinned.body.equals(file));
    assert.equal(pinned.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.ok(pinned.headers.get("etag"));
    assert.equal(pinned.headers.get("access-control-allow-origin"), "*");
    // The catalog's route URL of the lead is that very URL.
    const lead = catalog.layers.find((l) => l.id === "global.t2m")!.runs.find((r) => r.token === OLD)!.leads[1];
    assert.equal(lead.route, `/api/forecast/tile/{z}/{x}/{y}?layer=global.t2m&run=${OLD}&lead=3&drawing=${drawing}`);
    const stat = await get(`${srv.url}/tiles/global.t2m/${runDir("global.t2m", OLD)}/3/2/1/1.png`);
    assert.ok(stat.body.equals(file));
    assert.equal(stat.headers.get("cache-control"), "public, max-age=31536000, immutable");
    // A URL pinned without the drawing, or under another renderer's, is answered with the tile as
    // drawn now, cached for a minute only: a year-long cache never holds it under an old URL.
    for (const q of ["", "&drawing=r5-0123abcd"]) {
      const other = await api(`tile/2/1/1?layer=global.t2m&run=${OLD}&lead=3${q}`);
      assert.equal(other.status, 200);
      assert.ok(other.body.equals(file));
      assert.equal(other.headers.get("cache-control"), "public, max-age=60", q);
    }
    // A static path of another drawing (or of a build that had none) is redirected to this one.
    for (const old of [OLD, `${OLD}.r5-0123abcd`]) {
      const moved = await fetch(`${srv.url}/tiles/global.t2m/${old}/3/2/1/1.png`, { redirect: "manual" });
      assert.equal(moved.status, 307, old);
      assert.equal(moved.headers.get("location"), `/tiles/global.t2m/${runDir("global.t2m", OLD)}/3/2/1/1.png`);
      assert.equal(moved.headers.get("cache-control"), "public, max-age=60");
      const followed = await fetch(`${srv.url}/tiles/global.t2m/${old}/3/2/1/1.png`);
      assert.ok(Buffer.from(await followed.arrayBuffer()).equals(file), old);
    }
    // The same run named by ISO time, with and without seconds.
    for (const run of ["2026-11-20T00:00:00", "2026-11-20T00:00", "2026-11-20T00:00Z"]) {
      assert.ok((await api(`tile/2/1/1?layer=global.t2m&run=${run}&lead=3`)).body.equals(file), run);
    }
    // Defaults: the latest run and its first lead, cached briefly since "latest" moves.
    const latest = await api("tile/2/1/1?layer=global.t2m");
    assert.ok(
      latest.body.equals(
        readFileSync(join(dir, "tiles", "global.t2m", runDir("global.t2m", NEW), "0", "2", "1", "1.png")),
      ),
    );
    assert.equal(latest.headers.get("cache-control"), "public, max-age=60");
    assert.ok(!latest.body.equals(file));
  });

  test("tile: outside a regional patch the answer is a transparent PNG, and no file was written", async () => {
    assert.equal(
      existsSync(join(dir, "tiles", "europe.t2m", runDir("europe.t2m", NEW), "0", "2", "0", "3.png")),
      false,
    );
    const r = await api(`tile/2/0/3?layer=europe.t2m&run=${NEW}&lead=0`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "image/png");
    const img = await decodeRgba(r.body);
    assert.equal(img.width, TILE_SIZE);
    for (let i = 0; i < TILE_SIZE * TILE_SIZE; i++) assert.equal(img.data[i * 4 + 3], 0);
    const inside = await api(`tile/2/2/1?layer=europe.t2m&run=${NEW}&lead=0`);
    assert.ok(
      inside.body.equals(
        readFileSync(join(dir, "tiles", "europe.t2m", runDir("europe.t2m", NEW), "0", "2", "2", "1.png")),
      ),
    );
  });

  test("tile errors: off-pyramid addresses 400, unknown layer, run or lead 404", async () => {
    for (const path of [
      "8/0/0",
      "1/2/0",
      "1/0/2",
      "1/-1/0",
      "1.5/0/0",
      "1/0/0.5",
      "2/x/1",
      "1/0/0.png",
      "99999999999999999999/0/0",
    ]) {
      problem(await api(`tile/${path}?layer=global.t2m`), 400);
    }
    problem(await api("tile/8/0/0?layer=global.t2m"), 400, "z");
    problem(await api("tile/1/2/0?layer=global.t2m"), 400, "x");
    problem(await api("tile/0/0/0"), 400, "layer");
    problem(await api("tile/0/0/0?layer=global.t2m&run=yesterday"), 400, "run");
    problem(await api("tile/0/0/0?layer=global.d2m"), 404, "layer");
    problem(await api("tile/0/0/0?layer=global.t2m&run=2026-11-19T12:00"), 404, "run");
    problem(await api("tile/0/0/0?layer=global.t2m&lead=1"), 404, "lead");
    problem(await api("tile/3/0/0?layer=global.t2m"), 404, "z"); // this build stops at zoom 2
    assert.equal((await rawGet(srv.url, "/api/forecast/tile/0/0/..%2f..?layer=global.t2m")).status, 400);
  });

  test("value: the store's value at the nearest node, the colour the tile shows there", async () => {
    const store = new Store(storeDir);
    const [lat, lon] = [47.3, 8.6];
    const r = await api(`value?layer=europe.t2m&run=${NEW}&lead=3&lat=${lat}&lon=${lon}`);
    assert.equal(r.status, 200);
    const v = r.json();
    const f = await layerField(store, "forecast/europe", "t2m", 1, 3);
    const nearest = (c: Float64Array, x: number) =>
      c.reduce((b, _, i) => (Math.abs(c[i] - x) < Math.abs(c[b] - x) ? i : b), 0);
    const iy = nearest(f.group.grid.lat, v.grid_lat);
    const ix = nearest(f.group.grid.lon, v.grid_lon);
    assert.ok(Math.abs(f.group.grid.lat[iy] - v.grid_lat) < 1e-6 && Math.abs(f.group.grid.lon[ix] - v.grid_lon) < 1e-6);
    assert.ok(Math.abs(v.grid_lat - lat) <= 0.25 && Math.abs(v.grid_lon - lon) <= 0.25);
    assert.equal(v.value, f.field[iy * f.group.grid.lon.length + ix]);
    assert.deepEqual(
      { ...v, value: 0 },
      {
        layer: "europe.t2m",
        group: "forecast/europe",
        variable: "t2m",
        units: "K",
        value: 0,
        valid_time: "2026-11-20T15:00:00",
        run: "2026-11-20T12:00:00",
        lead_hours: 3,
        level: null,
        grid_lat: v.grid_lat,
        grid_lon: v.grid_lon,
        member: null,
        temporal: { kind: "instantaneous", source: "registry", description: "instantaneous" },
        display: { value: v.display.value, units: "°C" },
      },
    );
    assert.ok(Math.abs(v.display.value - (v.value - 273.15)) < 1e-6, "°C from K");
    assert.equal(r.headers.get("cache-control"), "public, max-age=86400");
    // The pixel under the click, fetched through the tile route, has that value's colour.
    const z = 2;
    const { x, y } = lonLatToTile(lon, lat, z);
    const img = await decodeRgba((await api(`tile/${z}/${x}/${y}?layer=europe.t2m&run=${NEW}&lead=3`)).body);
    let col = 0;
    let row = 0;
    while (col < TILE_SIZE - 1 && pixelLon(z, x, col + 1) <= lon) col++;
    while (row < TILE_SIZE - 1 && pixelLat(z, y, row + 1) >= lat) row++;
    // Smooth tiles: the colour of the value between the nodes, which the click's node value is near.
    const got = pixel(img.data, row * TILE_SIZE + col).join();
    assert.ok(
      expectedPixels(f, z, x, y, col, row).some((w) => w.join() === got),
      `pixel ${got}`,
    );
  });

  test("value: derived layers (wind speed, arrows, isobars) and display units", async () => {
    const store = new Store(storeDir);
    const at = `run=${NEW}&lead=3&lat=50&lon=10`;
    const u = (await api(`value?layer=europe.u10&${at}`)).json();
    const v = (await api(`value?layer=europe.v10&${at}`)).json();
    const speed = (await api(`value?layer=europe.wind_speed&${at}`)).json();
    assert.equal(speed.variable, "wind_speed");
    assert.ok(Math.abs(speed.value - Math.hypot(u.value, v.value)) < 1e-9);
    assert.equal(speed.display.units, "m/s");
    assert.ok(Math.abs(speed.display.value - speed.value) < 1e-6);
    // Where the wind comes from: a westerly (u > 0) comes from 270°.
    const from = (((Math.atan2(-u.value, -v.value) * 180) / Math.PI + 360) % 360).toFixed(0);
    assert.equal(speed.direction_deg, Number(from) % 360);
    const arrows = (await api(`value?layer=europe.wind_arrows&${at}`)).json();
    assert.equal(arrows.value, speed.value);
    const iso = (await api(`value?layer=europe.isobars&${at}`)).json();
    const msl = (await api(`value?layer=europe.msl&${at}`)).json();
    assert.equal(iso.value, msl.value);
    assert.equal(msl.display.units, "hPa");
    assert.ok(Math.abs(msl.display.value - msl.value / 100) < 1e-6);
    const tp = (await api(`value?layer=europe.tp_1h&${at}`)).json();
    assert.deepEqual([tp.units, tp.display.units], ["m", "mm"]);
    assert.ok(Math.abs(tp.display.value - tp.value * 1000) < 1e-9);
    // The same node as the stored layers read.
    const f = await layerField(store, "forecast/europe", "msl", 1, 3);
    assert.ok(f.field.includes(msl.value));
  });

  test("value: levels, accumulations, outside the grid, defaults and errors", async () => {
    const t = (await api("value?layer=global.t.500&lat=0&lon=0&lead=3")).json();
    assert.equal(t.level, 500);
    assert.equal(t.run, "2026-11-20T12:00:00", "defaults to the latest published run");
    const tp = (await api(`value?layer=global.tp_1h&run=${OLD}&lead=3&lat=10&lon=200`)).json();
    assert.deepEqual(tp.interval, { start: "2026-11-20T02:00:00", end: "2026-11-20T03:00:00" });
    assert.equal(tp.grid_lon, -160, "0..360 input, -180..180 node");
    const outside = await api("value?layer=europe.t2m&lat=-30&lon=8");
    assert.equal(outside.status, 200);
    assert.equal(outside.json().value, null);
    assert.equal(outside.json().grid_lat, null);
    problem(await api("value?layer=nope.t2m&lat=0&lon=0"), 404, "layer");
    problem(await api("value?layer=global.t2m&lat=0&lon=0&run=2026-01-01T00:00"), 404, "run");
    problem(await api("value?layer=global.t2m&lat=0&lon=0&lead=7.5"), 404, "lead");
    problem(await api("value?layer=global.t2m&lat=91&lon=0"), 400, "lat");
    problem(await api("value?layer=global.t2m&lon=0"), 400, "lat");
  });

  test("the OpenAPI document describes every parameter, and real responses match its schemas", async () => {
    const doc = (await get(`${srv.url}/openapi.json`)).json();
    const params = (p: string) =>
      Object.fromEntries(
        doc.paths[p].get.parameters.map((x: { name: string; description?: string }) => [x.name, x.description]),
      );
    for (const [path, names] of [
      ["/api/forecast/tile/{z}/{x}/{y}", ["z", "x", "y", "layer", "run", "lead"]],
      ["/api/forecast/value", ["layer", "run", "lead", "lat", "lon"]],
    ] as const) {
      const documented = params(path);
      for (const n of names) assert.ok(documented[n], `${path}: ${n} is not described`);
    }
    for (const [path, url] of [
      ["/api/forecast/catalog", "catalog"],
      ["/api/forecast/value", "value?layer=global.tp_1h&lat=1&lon=2"],
      ["/api/forecast/value", "value?layer=europe.t2m&lat=-30&lon=8"],
    ]) {
      const r = await api(url);
      const schema = doc.paths[path].get.responses[String(r.status)].content["application/json"].schema;
      assert.ok(Value.Check(schema, r.json()), `${url} does not match its schema`);
    }
  });
});
