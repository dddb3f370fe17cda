// A north polar stereographic grid laid out as NSIDC publishes theirs (EPSG:3413: WGS 84
// ellipsoid, true scale at 70° N, 45° W straight down from the pole; x/y in metres with y running
// from the top down; 2-D latitude/longitude; the pole inside the grid), written by the real writer
// (xarray + zarr 3). /point's node, export windows (one holding the pole, one across the
// antimeridian), map pixels at known points and the wind turned to true north are compared with
// what xarray + pyproj compute from the same store (projected/reference.py).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { registry } from "../../src/registry/registry.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { cleanup, get, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";
import { bilinearAt, pyprojReference, type Reference } from "./projected/reference.ts";

const HERE = join(import.meta.dirname, "projected");
const K = 273.15;
const NX = 51;
const NY = 75;
let dir: string;
let venv: string;
let store: string;
let srv: TestServer;
let key: string;

function reference(req: Record<string, unknown>): Reference {
  return pyprojReference(venv, { store, var: "temperature_2m", axes: ["x", "y", "latitude", "longitude"], ...req });
}

before(async () => {
  venv = requireZarr3Python("polar stereographic grids");
  dir = tempDir("gridcast-polar-");
  store = join(dir, "nsidc.zarr");
  execFileSync(venv, [join(HERE, "write_stores.py"), "stere", store], { stdio: ["ignore", "pipe", "ignore"] });
  srv = await testServer(store);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

const H = () => ({ "X-API-Key": key });

describe("a north polar stereographic grid (NSIDC layout)", () => {
  test("the catalogue describes it: polar_stereographic, every longitude up to the pole", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    assert.equal(models.forecast.length, 1, JSON.stringify(models.unavailable ?? []));
    const g = models.forecast[0];
    assert.equal(g.grid.kind, "projected");
    assert.equal(g.grid.grid_mapping_name, "polar_stereographic");
    assert.deepEqual([g.grid.x.first, g.grid.x.step, g.grid.x.count], [-3775000, 150000, NX]);
    const want = reference({ bounds: true }).bounds;
    assert.deepEqual([g.bbox[0], g.bbox[2], g.bbox[3]], [-180, 180, 90]);
    assert.ok(Math.abs(g.bbox[1] - want[1]) < 0.01, `south ${g.bbox[1]} vs pyproj ${want[1]}`);
  });

  test("/point answers the node nearest by distance, near the pole, across the antimeridian and far south", async () => {
    const points = [
      [89.6, 20],
      [88.7, -140],
      [75.5, 100],
      [60.2, -170],
      [66.1, 179.9],
      [72.3, -179.6],
      [45, -45],
      [40.4, 135],
    ];
    const ref = reference({ points });
    const seen = new Set<string>();
    for (const [k, [lat, lon]] of points.entries()) {
      const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, H());
      assert.equal(r.status, 200, r.body.toString());
      const p = r.json();
      const want = ref.points[k];
      assert.ok(
        Math.abs(p.grid_lat - want.lat) < 1e-6 && Math.abs(p.grid_lon - want.lon) < 1e-6,
        `${lat},${lon}: node ${p.grid_lat},${p.grid_lon} vs xarray's nearest ${want.lat},${want.lon}`,
      );
      p.values.forEach((v: number, i: number) => {
        assert.ok(Math.abs(v - Math.fround(want.values[i] + K)) < 1e-3, `${lat},${lon} lead ${i}: ${v}`);
      });
      seen.add(`${want.iy},${want.ix}`);
    }
    assert.equal(seen.size, points.length, "every point has its own node");
  });

  test("a point inside the bounding box but off the grid's cells is refused (400)", async () => {
    // 45° E lies along the grid's +x axis: at 35° N it is past the last column.
    const pos = reference({ positions: [[35, 45]] }).positions[0];
    assert.ok(pos[0] > NX - 0.5, `pyproj puts it at column ${pos[0]}`);
    const r = await get(`${srv.url}/point?lat=35&lon=45&var=t2m`, H());
    assert.equal(r.status, 400);
    assert.match(r.json().detail, /outside the coverage/);
  });

  test("export windows: a box holding the pole, one across the antimeridian, one far south; rows ascending in y", async () => {
    const boxes = [
      [80, 90, -180, 180],
      [65, 72, 170, -170],
      [50, 60, -60, -30],
    ];
    const ref = reference({ boxes });
    for (const [k, [la0, la1, lo0, lo1]] of boxes.entries()) {
      const want = ref.boxes[k];
      const url =
        `${srv.url}/api/export/forecast~nsidc/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2` +
        `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
      const r = await get(url, H());
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.deepEqual(field.dims, ["lead_time", "y", "x"]);
      assert.deepEqual(field.window, { y: want.rows, x: want.cols }, `box ${boxes[k]}`);
      assert.ok(want.rows[0] <= want.inside_rows[0] && want.inside_rows[1] < want.rows[1]);
      assert.ok(want.cols[0] <= want.inside_cols[0] && want.inside_cols[1] < want.cols[1]);
      assert.equal(field.crs.grid_mapping_name, "polar_stereographic");
      const ny = want.rows[1] - want.rows[0];
      const nx = want.cols[1] - want.cols[0];
      assert.deepEqual(field.shape, [3, ny, nx]);
      // Storage runs y from the top down; the export's rows run up (south to north, as for lat/lon).
      assert.equal(field.y.count, ny);
      assert.ok(Math.abs(field.y.first - want.y[ny - 1]) < 1e-6, `y.first ${field.y.first} vs ${want.y[ny - 1]}`);
      assert.ok(Math.abs(field.x.first - want.x[0]) < 1e-6 && Math.abs(field.x.step - 150000) < 1e-6);
      const npy = r.body;
      const hlen = npy.readUInt16LE(8);
      const data = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + hlen, npy.byteOffset + npy.length));
      assert.equal(data.length, want.field.length);
      for (let l = 0; l < 3; l++) {
        for (let j = 0; j < ny; j++) {
          for (let i = 0; i < nx; i++) {
            const got = data[(l * ny + j) * nx + i];
            const v = Math.fround(want.field[(l * ny + (ny - 1 - j)) * nx + i] + K);
            assert.ok(Math.abs(got - v) < 1e-3, `box ${k} lead ${l} row ${j} col ${i}: ${got} vs ${v}`);
          }
        }
      }
    }
    // The pole box reaches the pole's cell and the columns around it.
    const pole = reference({ positions: [[90, 0]] }).positions[0];
    const w = ref.boxes[0];
    assert.ok(w.cols[0] < pole[0] && pole[0] < w.cols[1] - 1 && w.rows[0] < pole[1] && pole[1] < w.rows[1] - 1);
  });

  test("the wind stored along the grid's axes is turned to true north (value route against pyproj's bearing)", async () => {
    // The store's wind is (2, 10) m/s along the grid's (+x, +y) everywhere; at a node the true
    // direction follows from the bearing of grid north there.
    for (const [lat, lon] of [
      [70, 100],
      [60, -170],
      [75, -45],
    ]) {
      const node = reference({ points: [[lat, lon]] }).points[0];
      const beta = (reference({ nodes: [[node.iy, node.ix]] }).bearings[0] * Math.PI) / 180;
      const ue = 2 * Math.cos(beta) + 10 * Math.sin(beta);
      const vn = -2 * Math.sin(beta) + 10 * Math.cos(beta);
      const from = ((Math.atan2(-ue, -vn) * 180) / Math.PI + 360) % 360;
      const v = (
        await get(`${srv.url}/api/forecast/value?layer=nsidc.wind_arrows&lat=${node.lat}&lon=${node.lon}`)
      ).json();
      const diff = Math.abs(((v.direction_deg - from + 540) % 360) - 180);
      assert.ok(diff <= 1.5, `${lat},${lon}: direction ${v.direction_deg} vs pyproj ${from.toFixed(1)}`);
      assert.ok(Math.abs(v.value - Math.hypot(2, 10)) < 1e-3, `speed ${v.value}`);
    }
  });

  test("map pixels at known points have the colour of xarray's field sampled where pyproj puts them", async () => {
    const tiles = join(dir, "tiles");
    const z = 4;
    await build({ store, out: tiles, maxZoom: z, vars: ["t2m"], leads: [0], rootGroupName: "nsidc" });
    const { rgba, lut } = buildPalette(registry.lookup("t2m")!.style!);
    const field = JSON.parse(
      execFileSync(
        venv,
        [
          "-c",
          "import sys, json, xarray as xr; ds = xr.open_zarr(sys.argv[1], consolidated=False); " +
            "print(json.dumps(ds.temperature_2m.isel(init_time=0, lead_time=0).values.astype(float).ravel().tolist()))",
          store,
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
      ),
    ) as number[];
    // Pixels near the top of the map (85° N), on both sides of the antimeridian, far south in the
    // grid, and just off its cells.
    const places = [
      [84.9, 10],
      [80, -100],
      [70, 179.5],
      [70, -179.5],
      [62, 160],
      [48, -40],
      [40, 120],
      [36, 45],
      [33, -45],
    ];
    const world = 2 ** z * 256;
    const probes = places.map(([lat, lon]) => {
      const col = Math.floor(((lon + 180) / 360) * world);
      const merc = Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
      const row = Math.floor(((1 - merc / Math.PI) / 2) * world);
      return [Math.floor(col / 256), Math.floor(row / 256), col % 256, row % 256];
    });
    const centres = probes.map(([x, y, c, r]) => [pixelLat(z, y, r), pixelLon(z, x, c)]);
    const pos = reference({ positions: centres }).positions;
    let inside = 0;
    let outside = 0;
    for (const [k, [x, y, c, r]] of probes.entries()) {
      const [fx, fy] = pos[k];
      const file = tileFile(tiles, "nsidc.t2m", z, x, y);
      const img = file ? await decodeRgba(readFileSync(file)) : undefined;
      const px = img ? Array.from(img.data.subarray((r * 256 + c) * 4, (r * 256 + c) * 4 + 4)) : [0, 0, 0, 0];
      const at = `pixel ${z}/${x}/${y} (${c},${r}) at ${places[k]}`;
      const v = bilinearAt(field, NX, NY, fx, fy, K);
      if (v === undefined) {
        assert.equal(px[3], 0, `${at}: off the grid, must be transparent`);
        outside++;
        continue;
      }
      const idx = lut(v);
      const near = [idx - 1, idx, idx + 1].map((i) => Array.from(rgba.subarray(i * 4, i * 4 + 4)).join(","));
      assert.ok(near.includes(px.join(",")), `${at}: ${px} not the colour of ${v.toFixed(2)} K`);
      inside++;
    }
    assert.ok(inside >= 6 && outside >= 2, `probes inside ${inside}, outside ${outside}`);
  });
});

/** The z/x/y file of a layer's only run and lead in a build, or undefined where no tile was written. */
function tileFile(out: string, layer: string, z: number, x: number, y: number): string | undefined {
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const l = catalog.layers.find((e: { id: string }) => e.id === layer);
  const rel = l.runs[0].leads[0].tiles.replace("{z}", z).replace("{x}", x).replace("{y}", y);
  const path = join(out, "current", rel);
  try {
    readFileSync(path);
    return path;
  } catch {
    return undefined;
  }
}
