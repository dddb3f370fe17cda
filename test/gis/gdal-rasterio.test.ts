// GIS clients from Debian on what gridcast publishes, against gridcast's own answers.
// /data: GDAL 3.6 (Zarr driver over /vsicurl/) must find a CRS, a north-up geotransform and, at
// every pixel, the value xarray reads at that place: a global group stored north-to-south, a
// regional group stored south-to-north (published north-up), and a Lambert conformal group written
// by xarray + zarr 3 (its y ascending); `gdal_translate -projwin` must cut the south-to-north one.
// GeoTIFF export: rasterio and GDAL must read every band equal to the .npy of the same box, north-up,
// with the CRS, no-data, descriptions and metadata; and it shares the .npy's 413.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/gis_data.py");
const TIFF_SCRIPT = resolve(import.meta.dirname, "../python/gis_tiff.py");
/** Export limit of the sample server: a few leads of a regional box fit, the whole globe does not. */
const EXPORT_LIMIT_MB = 0.1;
const WRITE = resolve(import.meta.dirname, "../forecast/projected/write_stores.py");

interface Row {
  id: string;
  srs: string;
  geographic: boolean;
  projected: boolean;
  geotransform: number[];
  compared: number;
  projwin?: { size: number[]; compared: number };
}

let storeDir: string;
let lccDir: string;
const servers: TestServer[] = [];
const found: Record<string, Row> = {};
// biome-ignore lint/suspicious/noExplicitAny: rasterio's report, checked field by field
const tiffs: Record<string, any> = {};
let sampleSrv: TestServer;
let sampleKey: string;

before(async () => {
  storeDir = await sampleStore();
  lccDir = tempDir("gridcast-gis-lcc-");
  execFileSync(requireZarr3Python("GDAL on a projected group"), [WRITE, "lcc", join(lccDir, "hrrr.zarr")], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const sample = await testServer(storeDir, { field_export_max_mb: EXPORT_LIMIT_MB });
  sampleSrv = sample;
  sampleKey = await sample.key(["weather"]);
  const lcc = await testServer(join(lccDir, "hrrr.zarr"));
  servers.push(sample, lcc);
  const ask = async (srv: TestServer, datasets: unknown[]) => {
    const rows = await pythonJson<Row[]>(PYTHON, SCRIPT, [], {
      base: srv.url,
      key: await srv.key(["weather"]),
      datasets,
    });
    for (const r of rows) found[r.id] = r;
  };
  const latlon = { var: "t2m", x: "lon", y: "lat", index: "0:0" };
  await ask(sample, [
    { id: "forecast~global", ...latlon },
    // Europe is stored south to north; the window lies well inside it.
    { id: "forecast~europe", ...latlon, projwin: [0, 60, 20, 40] },
  ]);
  const lccKey = await lcc.key(["weather"]);
  const listing = await (await fetch(`${lcc.url}/data/datasets`, { headers: { "X-API-Key": lccKey } })).json();
  await ask(lcc, [{ id: listing.datasets[0].id, var: "t2m", x: "x", y: "y", index: "0:0" }]);
  const box = { var: "t2m", time_index: 0, lead_start: 0, lead_stop: 2 };
  for (const [srv, key, exports] of [
    [
      sample,
      sampleKey,
      [{ id: "forecast~europe", query: { ...box, lat_min: 40, lat_max: 55, lon_min: -5, lon_max: 15 } }],
    ],
    [
      lcc,
      lccKey,
      [{ id: listing.datasets[0].id, query: { ...box, lat_min: 32, lat_max: 44, lon_min: -105, lon_max: -88 } }],
    ],
  ] as const) {
    const rows = await pythonJson<{ id: string }[]>(PYTHON, TIFF_SCRIPT, [], { base: srv.url, key, exports });
    for (const r of rows) tiffs[r.id] = r;
  }
});
after(async () => {
  for (const s of servers) await s.close();
  cleanup(storeDir);
  cleanup(lccDir);
});

test("GDAL finds WGS 84 on every latitude/longitude group and reads north-up values equal to xarray's", () => {
  for (const id of ["forecast~global", "forecast~europe"]) {
    const r = found[id];
    assert.ok(r.geographic, `${id}: GDAL sees no geographic CRS (${r.srs || "none"})`);
    assert.match(r.srs, /WGS 84/);
    assert.ok(r.geotransform[1] > 0 && r.geotransform[5] < 0, `${id}: not north-up: ${r.geotransform}`);
    assert.ok(r.compared > 1000, `${id}: only ${r.compared} pixels compared`);
  }
  // The corner GDAL reports is the grid's north-west edge (half a cell outside the first node).
  assert.deepEqual(found["forecast~europe"].geotransform, [-12.25, 0.5, 0, 72.25, 0, -0.5]);
});

test("gdal_translate -projwin cuts a south-to-north group, values equal to xarray's at each pixel", () => {
  const w = found["forecast~europe"].projwin!;
  assert.deepEqual(w.size, [40, 40]);
  assert.equal(w.compared, 1600);
});

test("GDAL finds a projected group's own CRS (Lambert conformal), north-up, values equal to xarray's", () => {
  const r = Object.values(found).find((x) => !x.id.startsWith("forecast~global") && x.projected);
  assert.ok(
    r,
    `no projected CRS found: ${JSON.stringify(Object.values(found).map((x) => [x.id, x.srs.slice(0, 40)]))}`,
  );
  assert.match(r.srs, /Lambert_Conformal_Conic/);
  assert.ok(r.geotransform[1] > 0 && r.geotransform[5] < 0, `not north-up: ${r.geotransform}`);
  assert.ok(r.compared > 1000, `only ${r.compared} pixels compared`);
});

test("rasterio and GDAL read the GeoTIFF export equal to the .npy of the same box: north-up, WGS 84, NaN no-data, described bands", () => {
  const t = tiffs["forecast~europe"];
  assert.equal(t.content_type, "image/tiff; application=geotiff");
  assert.equal(t.epsg, 4326);
  assert.equal(t.count, 3);
  assert.deepEqual(t.dtypes, ["float32"]);
  assert.ok(t.nodata_is_nan);
  // Streamed: uncompressed strips, so the file is the .npy's values and a directory of every strip.
  assert.equal(t.compression, null);
  assert.ok(t.tiff_bytes > t.npy_bytes - 128 && t.tiff_bytes < t.npy_bytes + 4096, `${t.tiff_bytes} bytes`);
  // Pixel edges half a cell outside the box's first and last nodes; rows counted from the north.
  const [a, b, c, d, e, f] = t.transform;
  assert.deepEqual([a, b, d, e], [0.5, 0, 0, -0.5]);
  assert.equal(c, -5.25);
  assert.equal(f, 55.25);
  assert.deepEqual(t.gdal_geotransform, [c, a, 0, f, 0, e]);
  assert.equal(t.compared, 3 * 31 * 41);
  assert.equal(t.gdal_compared, t.compared);
  assert.equal(t.tags.variable, "t2m");
  assert.equal(t.tags.units, "K");
  assert.match(t.tags.forecast_reference_time, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(t.units, ["K", "K", "K"]);
  for (let i = 0; i < 3; i++) {
    assert.match(t.band_tags[i].valid_time, /^\d{4}-\d\d-\d\dT\d\d:/);
    assert.equal(t.descriptions[i], `t2m valid ${t.band_tags[i].valid_time}`);
  }
  assert.notEqual(t.band_tags[0].valid_time, t.band_tags[1].valid_time);
});

test("a projected group's GeoTIFF is in its own CRS (Lambert conformal), north-up, equal to the .npy", () => {
  const t = Object.values(tiffs).find((x) => x.id !== "forecast~europe");
  assert.match(t.proj4, /\+proj=lcc/);
  assert.match(t.proj4, /\+lat_1=38\.5/);
  assert.match(t.proj4, /\+lon_0=-97\.5/);
  assert.ok(t.transform[0] > 0 && t.transform[4] < 0, `not north-up: ${t.transform}`);
  assert.ok(t.compared > 100);
});

test("the GeoTIFF export answers 413 exactly where the .npy export does", async () => {
  const q = "var=t2m&time_index=0&lead_start=0&lead_stop=6&lat_min=-90&lat_max=90&lon_min=0&lon_max=359";
  for (const format of ["npy", "tiff"]) {
    const r = await get(`${sampleSrv.url}/api/export/forecast~global/${format}?${q}`, { "X-API-Key": sampleKey });
    assert.equal(r.status, 413, format);
    assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
  }
  const none = await get(`${sampleSrv.url}/api/export/forecast~global/tiff?${q}`);
  assert.equal(none.status, 401);
});
