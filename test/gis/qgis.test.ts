// QGIS 3 headless (Debian's python3-qgis, offscreen) as GIS users add gridcast: a WMTS layer
// from the live capabilities and an XYZ layer from the absolute `tiles` URL of a TileJSON (a
// build with public_url set to the server). Each is rendered over one tile of the pyramid at its
// native resolution and must equal that tile pixel for pixel. And /data groups as GIS users add
// them (GDAL's Zarr driver over /vsicurl/): a global group, a group stored south to north and a
// Lambert conformal group must each come with a valid CRS, the extent of their grid's outer cell
// edges, and values equal to xarray's at every pixel. QGIS starts once for all of it (it is heavy).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/gis_qgis.py");
const WRITE = resolve(import.meta.dirname, "../forecast/projected/write_stores.py");
const MAX_ZOOM = 3;
/** A zoom-3 tile inside the europe patch (10° E, 50° N). */
const TILE = [MAX_ZOOM, 4, 2] as const;

interface Rendered {
  valid: boolean;
  crs: string;
  error: string;
  differ?: number;
  opaque?: number;
}

interface DataLayer {
  valid: boolean;
  error: string;
  crs_valid?: boolean;
  authid?: string;
  proj4?: string;
  extent?: number[];
  xarray_extent?: number[];
  compared?: number;
  differ?: number;
}

let storeDir: string;
let lccDir: string;
let srv: TestServer;
let lccSrv: TestServer;
let lccId: string;
let found: {
  wmts: Rendered;
  xyz: Rendered;
  time_steps_differ: number;
  data: Record<string, DataLayer>;
};

before(async () => {
  assert.ok(existsSync("/usr/bin/qgis"), "QGIS is not installed (bin/test-prereqs.sh installs qgis and python3-qgis)");
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  // The server's own address as public_url: live documents and the build's TileJSON agree on it.
  srv.running.ctx.settings.public_url = srv.url;
  const r = await build({
    store: storeDir,
    out: srv.running.ctx.settings.out,
    maxZoom: MAX_ZOOM,
    groups: ["europe"],
    vars: ["t2m"],
    leads: [0, 3],
    publicUrl: srv.url,
  });
  await until(
    "build visible",
    async () => (await get(`${srv.url}/api/forecast/catalog`)).json().build_id === r.build_id,
  );
  // A Lambert conformal group written by xarray + zarr 3 (HRRR's layout), on a server of its own.
  lccDir = tempDir("gridcast-qgis-lcc-");
  execFileSync(requireZarr3Python("QGIS on a projected group"), [WRITE, "lcc", join(lccDir, "hrrr.zarr")], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  lccSrv = await testServer(join(lccDir, "hrrr.zarr"));
  const lccKey = await lccSrv.key(["weather"]);
  lccId = (await get(`${lccSrv.url}/data/datasets`, { "X-API-Key": lccKey })).json().datasets[0].id;
  const key = await srv.key(["weather"]);
  const catalog = (await get(`${srv.url}/api/forecast/catalog`)).json();
  const lead = catalog.layers.find((l: { id: string }) => l.id === "europe.t2m").runs.at(-1).leads[1];
  const [z, x, y] = TILE;
  found = await pythonJson(PYTHON, SCRIPT, [], {
    wmts: `${srv.url}/wmts/1.0.0/WMTSCapabilities.xml`,
    layer: "europe.t2m",
    time: `${lead.valid_time}Z`,
    tilejson: lead.tilejson,
    tile: TILE,
    png: `${srv.url}/api/forecast/tile/${z}/${x}/${y}?layer=europe.t2m&lead=${lead.hours}`,
    png_first: `${srv.url}/api/forecast/tile/${z}/${x}/${y}?layer=europe.t2m&lead=0`,
    data: [
      { id: "forecast~global", base: srv.url, key, var: "t2m", x: "lon", y: "lat" },
      { id: "forecast~europe", base: srv.url, key, var: "t2m", x: "lon", y: "lat" },
      { id: lccId, base: lccSrv.url, key: lccKey, var: "t2m", x: "x", y: "y" },
    ],
  });
});
after(async () => {
  await srv?.close();
  await lccSrv?.close();
  if (storeDir) cleanup(storeDir);
  if (lccDir) cleanup(lccDir);
});

test("QGIS renders the WMTS layer (second time step) equal to the XYZ tile of that lead", () => {
  assert.ok(found.wmts.valid, found.wmts.error);
  assert.equal(found.wmts.crs, "EPSG:3857");
  assert.ok((found.wmts.opaque ?? 0) > 1000, `only ${found.wmts.opaque} opaque pixels`);
  assert.equal(found.wmts.differ, 0);
  // The first time step's tile differs: QGIS drew the step it was asked for, through {Time}.
  assert.ok(found.time_steps_differ > 1000, `the two time steps' tiles differ in ${found.time_steps_differ} pixels`);
});

test("QGIS renders an XYZ layer from the TileJSON's absolute tiles URL equal to the tile", () => {
  assert.ok(found.xyz.valid, found.xyz.error);
  assert.ok((found.xyz.opaque ?? 0) > 1000, `only ${found.xyz.opaque} opaque pixels`);
  assert.equal(found.xyz.differ, 0);
});

/** QGIS's extent of a /data layer equals the outer cell edges of xarray's coordinates. */
function sameExtent(d: DataLayer, what: string): void {
  const [got, want] = [d.extent!, d.xarray_extent!];
  const cell = Math.abs(want[2] - want[0]) / 1e6;
  for (let i = 0; i < 4; i++) assert.ok(Math.abs(got[i] - want[i]) <= cell, `${what}: extent ${got} != ${want}`);
}

function readsLikeXarray(d: DataLayer, what: string): void {
  assert.ok(d.valid, `${what}: ${d.error}`);
  assert.ok(d.crs_valid, `${what}: QGIS finds no CRS (it would ask the user for one)`);
  assert.ok((d.compared ?? 0) > 1000, `${what}: only ${d.compared} values compared`);
  assert.equal(d.differ, 0, `${what}: values differ from xarray's`);
  sameExtent(d, what);
}

test("QGIS opens a global /data group with WGS 84 (EPSG:4326), its extent and xarray's values", () => {
  const d = found.data["forecast~global"];
  readsLikeXarray(d, "global");
  assert.equal(d.authid, "EPSG:4326");
});

test("QGIS opens a south-to-north /data group north-up with EPSG:4326 and the patch's extent", () => {
  const d = found.data["forecast~europe"];
  readsLikeXarray(d, "europe");
  assert.equal(d.authid, "EPSG:4326");
  assert.deepEqual(d.extent, [-12.25, 33.75, 40.25, 72.25]);
});

test("QGIS opens a Lambert conformal /data group in its own CRS with its extent in metres", () => {
  const d = found.data[lccId];
  readsLikeXarray(d, "lcc");
  assert.match(d.proj4 ?? "", /\+proj=lcc/);
  assert.match(d.proj4 ?? "", /\+lat_1=38\.5/);
  assert.match(d.proj4 ?? "", /\+lon_0=-97\.5/);
  // write_stores.py: 48 × 30 nodes 60 km apart from (-1440 km, -840 km).
  assert.deepEqual(d.xarray_extent, [-1470000, -870000, 1410000, 930000]);
});
