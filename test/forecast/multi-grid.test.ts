// A group whose variables sit on different grids, written by the real writers
// (test/python/multigrid_stores.py): cfgrib hypercubes merged into one v2 dataset (t2m on a regional
// 1° grid latitude/longitude, msl on a global 2.5° grid lat_1/lon_1, Debian's xarray + zarr 2), and
// ECMWF open data's atmosphere and wave fields in one v3 dataset (t2m on latitude/longitude, swh on
// latitude_wave/longitude_wave, xarray + zarr 3). Each variable must be served on its own grid —
// /point, export, the map click, listings, map tiles and /data — and agree with xarray reading the
// same store; reading the second variable on the first grid's coordinates fails every test.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { LayerSpec } from "../../src/pipeline/layer-spec.ts";
import { runPart } from "../../src/published/layout.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { zarr3Python } from "../helpers/zarr3-python.ts";
import { build, expectedPixels, withAxis } from "../pipeline/build-fixture.ts";
import { decodeRgba, pixel } from "../render/decode.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/multigrid_stores.py");
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

let dir: string;
let combo: string;
let srv: TestServer;
let key: string;
let py3: string | null;
let buildOut: Promise<string> | undefined;
const H = () => ({ "X-API-Key": key });

interface Read {
  values: (number | string | null)[];
  dims: string[];
  shape: number[];
  coords: Record<string, (number | string)[]>;
  var_dims: string[];
  var_coords: Record<string, (number | string)[]>;
}

interface Query {
  store: string;
  var: string;
  isel?: Record<string, number>;
  sel?: Record<string, number>;
  slice?: Record<string, [number, number]>;
  headers?: object;
}

/** What xarray reads (Debian's, or `python` given): one batch of queries. */
async function xread(queries: Query[], python = PYTHON): Promise<Read[]> {
  return pythonJson<Read[]>(python, SCRIPT, ["read"], queries);
}

const store = (name: string) => join(dir, `${name}.zarr`);
const f32s = (r: Read) => r.values.map((v) => (v === null ? null : Math.fround(v as number)));
const data = (name: string) => `${srv.url}/data/datasets/forecast~${name}/zarr/`;

/** The float32 body of an .npy answer holding `n` values. */
const npyValues = (body: Buffer, n: number) =>
  new Float32Array(body.buffer.slice(body.byteOffset + body.length - n * 4));

function built(): Promise<string> {
  buildOut ??= (async () => {
    const out = tempDir("gridcast-multigrid-build-");
    const report = await build({
      store: combo,
      out,
      maxZoom: 1,
      concurrency: 1,
      groups: ["merged", ...(py3 ? ["waves"] : [])],
    });
    assert.deepEqual(report.skipped, []);
    return out;
  })();
  return buildOut;
}

before(async () => {
  dir = tempDir("gridcast-multigrid-");
  await run(PYTHON, [SCRIPT, "v2", dir], { timeout: 120_000 });
  py3 = zarr3Python("the multi-grid wave store");
  if (py3) await run(py3, [SCRIPT, "v3", dir], { timeout: 120_000 });
  combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of ["merged", "bad_second", "two_names", ...(py3 ? ["waves"] : [])]) {
    cpSync(store(n), join(combo, "forecast", n), { recursive: true });
  }
  srv = await testServer(combo);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  if (buildOut) cleanup(await buildOut);
  cleanup(dir);
});

describe("cfgrib hypercubes merged (v2): t2m on latitude/longitude, msl on lat_1/lon_1", () => {
  test("listings: both variables served, each on its own grid", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    const g = models.forecast.find((m: { id: string }) => m.id === "forecast/merged");
    assert.ok(g, JSON.stringify(models.unavailable));
    assert.deepEqual(g.variables, ["msl", "t2m"]);
    assert.equal(g.grids.length, 2);
    const [a, b] = g.grids;
    assert.deepEqual(a.coordinates, { lat: "latitude", lon: "longitude" });
    assert.deepEqual(a.variables, ["t2m"]);
    assert.equal(a.kind, "regional");
    assert.deepEqual(b.coordinates, { lat: "lat_1", lon: "lon_1" });
    assert.deepEqual(b.variables, ["msl"]);
    assert.equal(b.kind, "global");
    assert.deepEqual(b.resolution_deg, { lat: 2.5, lon: 2.5 });
    assert.deepEqual(b.data_dims, { lat: "lat_1", lon: "lon_1" });
    const exp = (await get(`${srv.url}/api/export`, H())).json();
    const e = exp.groups.find((x: { group: string }) => x.group === "forecast/merged");
    const msl = e.fields.find((f: { name: string }) => f.name === "msl");
    assert.deepEqual(msl.dims, ["time", "lead_time", "lat_1", "lon_1"]);
    assert.deepEqual(msl.grid_coordinates, { lat: "lat_1", lon: "lon_1" });
    assert.deepEqual(e.grids[1].lat, { min: -90, max: 90, count: 73, step: 2.5, order: "ascending" });
  });

  test("/point reads each variable at xarray's nearest node of its own grid", async () => {
    // (46.2, 8.9): t2m's node is (46, 9), msl's (45, 10); (-30, -100) lies on msl's grid only.
    const xs = await xread([
      { store: store("merged"), var: "t2m", isel: { time: 0 }, sel: { latitude: 46.2, longitude: 8.9 } },
      { store: store("merged"), var: "msl", isel: { time: 0 }, sel: { lat_1: 46.2, lon_1: 8.9 } },
      { store: store("merged"), var: "msl", isel: { time: 0 }, sel: { lat_1: -30, lon_1: 260 } },
    ]);
    const q = (v: string, lat: number, lon: number) =>
      get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=${v}&group=forecast/merged`, H());
    const t = (await q("t2m", 46.2, 8.9)).json();
    assert.deepEqual([t.grid_lat, t.grid_lon], [xs[0].coords.latitude[0], xs[0].coords.longitude[0]]);
    assert.deepEqual(t.values, f32s(xs[0]));
    assert.deepEqual(t.grid_coordinates, { lat: "latitude", lon: "longitude" });
    const m = (await q("msl", 46.2, 8.9)).json();
    assert.deepEqual([m.grid_lat, m.grid_lon], [45, 10]);
    assert.deepEqual([xs[1].coords.lat_1[0], xs[1].coords.lon_1[0]], [45, 10]);
    assert.deepEqual(m.values, f32s(xs[1]));
    assert.equal(m.units, "Pa");
    assert.deepEqual(m.grid_coordinates, { lat: "lat_1", lon: "lon_1" });
    // Outside t2m's regional grid, inside msl's global one.
    const far = await q("msl", -30, -100);
    assert.equal(far.status, 200, far.body.toString());
    assert.deepEqual(far.json().values, f32s(xs[2]));
    assert.equal(far.json().grid_lon, -100);
    assert.equal(far.json().source, "global");
    const out = await q("t2m", -30, -100);
    assert.equal(out.status, 400);
    assert.equal(out.json().param, "lat");
  });

  test("export .npy of a box: each variable's own rows and columns, as xarray selects them", async () => {
    const box = "lat_min=40&lat_max=50&lon_min=5&lon_max=15";
    const xs = await xread([
      { store: store("merged"), var: "msl", isel: { time: 0, step: 2 }, slice: { lat_1: [40, 50], lon_1: [5, 15] } },
      {
        store: store("merged"),
        var: "t2m",
        isel: { time: 0, step: 2 },
        slice: { latitude: [50, 40], longitude: [5, 15] },
      },
    ]);
    const m = await get(
      `${srv.url}/api/export/forecast~merged/npy?var=msl&time_index=0&lead_start=2&lead_stop=2&${box}`,
      H(),
    );
    assert.equal(m.status, 200, m.body.toString());
    const mf = JSON.parse(m.headers.get("x-svc-field")!);
    assert.deepEqual(mf.shape, [1, 5, 5]);
    assert.deepEqual(xs[0].shape, [5, 5]);
    assert.deepEqual(mf.lat, { first: 40, step: 2.5, count: 5 });
    assert.deepEqual(mf.grid_coordinates, { lat: "lat_1", lon: "lon_1" });
    assert.deepEqual([...npyValues(m.body, 25)], f32s(xs[0]));
    const t = await get(
      `${srv.url}/api/export/forecast~merged/npy?var=t2m&time_index=0&lead_start=2&lead_stop=2&${box}`,
      H(),
    );
    assert.equal(t.status, 200, t.body.toString());
    const tf = JSON.parse(t.headers.get("x-svc-field")!);
    assert.deepEqual(tf.shape, [1, 11, 11]);
    // xarray's rows run north to south as stored; the export's ascend.
    const tv = npyValues(t.body, 121);
    for (let i = 0; i < 11; i++) {
      for (let j = 0; j < 11; j++) assert.equal(tv[(10 - i) * 11 + j], f32s(xs[1])[i * 11 + j]);
    }
  });

  test("the map click reads the layer's own grid", async () => {
    const [x] = await xread([
      { store: store("merged"), var: "msl", isel: { time: 0, step: 1 }, sel: { lat_1: -30, lon_1: 260 } },
    ]);
    const r = await get(`${srv.url}/api/forecast/value?layer=merged.msl&lat=-30&lon=-100&lead=6`);
    assert.equal(r.status, 200, r.body.toString());
    const v = r.json();
    assert.equal(v.value, Math.fround(x.values[0] as number));
    assert.deepEqual([v.grid_lat, v.grid_lon], [-30, -100]);
    assert.deepEqual(v.grid_coordinates, { lat: "lat_1", lon: "lon_1" });
    const t = (await get(`${srv.url}/api/forecast/value?layer=merged.t2m&lat=-30&lon=-100&lead=6`)).json();
    assert.equal(t.value, null);
    assert.equal(t.grid_lat, null);
  });

  test("/data: xarray (zarr 2 and zarr 3) opens each variable with its own coordinates", async () => {
    const want = await xread([
      { store: store("merged"), var: "msl", isel: { time: 0, step: 1 } },
      { store: store("merged"), var: "t2m", isel: { time: 0, step: 1 } },
    ]);
    const clients = [PYTHON, ...(py3 ? [py3] : [])];
    for (const python of clients) {
      const [msl, t2m] = await xread(
        [
          { store: data("merged"), headers: H(), var: "msl", isel: { time: 0, lead_time: 1 } },
          { store: data("merged"), headers: H(), var: "t2m", isel: { time: 0, lead_time: 1 } },
        ],
        python,
      );
      // /data publishes every grid north-up: a grid stored south to north comes out reversed.
      const mslWant = northFirst(want[0].var_coords.lat_1 as number[], want[0].values);
      const t2mWant = northFirst(want[1].var_coords.latitude as number[], want[1].values);
      assert.deepEqual(msl.var_dims, ["time", "lead_time", "lat_1", "lon_1"], python);
      assert.deepEqual(msl.var_coords.lat_1, mslWant.lat, python);
      assert.deepEqual(msl.var_coords.lon_1, want[0].var_coords.lon_1, python);
      assert.deepEqual(msl.values, mslWant.rows, python);
      assert.deepEqual(t2m.var_dims, ["time", "lead_time", "lat", "lon"], python);
      assert.deepEqual(t2m.var_coords.lat, t2mWant.lat, python);
      assert.deepEqual(t2m.var_coords.lon, want[1].var_coords.longitude, python);
      assert.deepEqual(t2m.values, t2mWant.rows, python);
    }
  });

  test("maps: the build draws both layers, each over its own grid", async () => {
    const current = realpathSync(join(await built(), "current"));
    const manifest = JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
    const t2m = manifest.layers.find((l) => l.id === "merged.t2m");
    const msl = manifest.layers.find((l) => l.id === "merged.msl");
    assert.ok(t2m && msl, manifest.layers.map((l) => l.id).join());
    assert.equal(msl.kind, "global");
    assert.equal(t2m.kind, "regional");
    // z0 + z1: the global grid covers all 5 tiles; the European patch, across 0° E, 1 + 2.
    assert.equal(msl.tilesPerLead, 5);
    assert.equal(t2m.tilesPerLead, 3);
    const [x] = await xread([{ store: store("merged"), var: "msl", isel: { time: 0, step: 0 } }]);
    const group = await new Store(store("merged")).forecastGroup("forecast/merged");
    const palette = buildPalette(msl.style);
    const lf = withAxis(
      {
        group: { ...group, grid: group.variables.get("msl")!.grid },
        field: Float32Array.from(x.values as number[]),
        rgba: palette.rgba,
        lut: palette.lut,
      } as never,
      palette,
    );
    const runSpec = msl.runs.at(-1)!;
    const lead = runSpec.leads[0];
    for (const [tx, ty] of [
      [0, 1],
      [1, 0],
    ]) {
      const file = join(
        current,
        "tiles",
        msl.id,
        runPart(runSpec.token, msl.drawing),
        String(lead.hours),
        "1",
        String(tx),
        `${ty}.png`,
      );
      const img = await decodeRgba(readFileSync(file));
      let drawn = 0;
      for (let row = 3; row < 256; row += 9) {
        for (let col = 2; col < 256; col += 9) {
          const want = expectedPixels(lf as never, 1, tx, ty, col, row);
          const got = pixel(img.data, row * 256 + col);
          assert.ok(
            want.some((w) => w.join() === got.join()),
            `tile ${tx}/${ty} ${col},${row}: ${got} not ${want[1]}`,
          );
          if (got[3] > 0) drawn++;
        }
      }
      assert.ok(drawn > 500, `tile ${tx}/${ty}: ${drawn} pixels drawn`);
    }
  });

  test("inspect names each grid and the grid of each variable", async () => {
    const r = await run(process.execPath, ["bin/gridcast", "inspect", "--store", combo], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.match(r.stdout, /grid lat_1,lon_1 {2}\(global, 73x144 at 2\.5°/);
    assert.match(r.stdout, /msl +stored msl .* on grid lat_1,lon_1/);
    assert.match(r.stdout, /t2m +stored t2m .* on grid latitude,longitude/);
  });
});

test("lat/lon beside latitude/longitude: the variable on the second spelling is served on it", async () => {
  const xs = await xread([
    { store: store("two_names"), var: "t2m", isel: { time: 1 }, sel: { latitude: 16.6, longitude: 103.3 } },
    { store: store("two_names"), var: "msl", isel: { time: 1 }, sel: { lat: 16.6, lon: 103.3 } },
    { store: store("two_names"), var: "t2m", isel: { time: 1 } },
  ]);
  const q = (v: string) =>
    get(`${srv.url}/point?lat=16.6&lon=103.3&var=${v}&group=forecast/two_names&run=1`, H()).then((r) => r.json());
  const t = await q("t2m");
  assert.deepEqual([t.grid_lat, t.grid_lon], [17, 103]);
  assert.deepEqual(t.values, f32s(xs[0]));
  const m = await q("msl");
  assert.deepEqual([m.grid_lat, m.grid_lon], [16, 104]);
  assert.deepEqual(m.values, f32s(xs[1]));
  const [over] = await xread([{ store: data("two_names"), headers: H(), var: "t2m", isel: { time: 1 } }]);
  assert.deepEqual(over.var_dims, ["time", "latitude", "longitude"]);
  assert.deepEqual(over.var_coords.latitude, xs[2].var_coords.latitude);
  assert.deepEqual(over.values, xs[2].values);
});

test("a second grid that cannot be read refuses only its variables, by name", async () => {
  const models = (await get(`${srv.url}/api/models`)).json();
  const g = models.forecast.find((m: { id: string }) => m.id === "forecast/bad_second");
  assert.ok(g, JSON.stringify(models.unavailable));
  assert.deepEqual(g.variables, ["t2m"]);
  assert.equal(g.grids, undefined);
  const reg = (await get(`${srv.url}/api/registry`)).json();
  const u = reg.unregistered.find((x: { group: string; stored: string }) => x.group === "forecast/bad_second");
  assert.equal(u.stored, "msl");
  assert.match(u.reason, /its grid \(lat_1, lon_1\) cannot be read: the latitude coordinate is not strictly monotonic/);
  const [x] = await xread([{ store: store("bad_second"), var: "t2m", isel: { time: 0, latitude: 1, longitude: 2 } }]);
  const p = (await get(`${srv.url}/point?lat=48&lon=4&var=t2m&group=forecast/bad_second`, H())).json();
  assert.deepEqual(p.values, f32s(x));
  assert.equal(p.grid_coordinates, undefined);
  const m = await get(`${srv.url}/point?lat=48&lon=4&var=msl&group=forecast/bad_second`, H());
  assert.equal(m.status, 404);
});

describe("atmosphere and waves in one dataset (v3): swh on latitude_wave/longitude_wave", () => {
  test("/point, export and the map click read swh on the wave grid; land is missing", async (t) => {
    if (!py3) {
      t.skip("xarray + zarr 3 unavailable");
      return;
    }
    // (44.3, -25.2): only the wave grid reaches there (t2m stops at -20.25).
    const xs = await xread(
      [
        { store: store("waves"), var: "swh", isel: { time: 1 }, sel: { latitude_wave: 44.3, longitude_wave: -25.2 } },
        { store: store("waves"), var: "swh", isel: { time: 1 }, sel: { latitude_wave: 42, longitude_wave: 12 } },
        {
          store: store("waves"),
          var: "swh",
          isel: { time: 1, step: 1 },
          slice: { latitude_wave: [60, 40], longitude_wave: [-30, -20] },
        },
        { store: store("waves"), var: "t2m", isel: { time: 1 }, sel: { latitude: 44.3, longitude: -5.2 } },
      ],
      py3,
    );
    const q = (v: string, lat: number, lon: number) =>
      get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=${v}&group=forecast/waves`, H());
    const sea = await q("swh", 44.3, -25.2);
    assert.equal(sea.status, 200, sea.body.toString());
    assert.deepEqual([sea.json().grid_lat, sea.json().grid_lon], [44, -25]);
    assert.deepEqual(sea.json().values, f32s(xs[0]));
    assert.ok(xs[0].values.every((v) => v !== null));
    // Land on the wave grid (NaN, the _FillValue): missing, as xarray reads it.
    assert.deepEqual(xs[1].values, [null, null]);
    assert.deepEqual((await q("swh", 42, 12)).json().values, [null, null]);
    assert.equal((await q("t2m", 44.3, -25.2)).status, 400);
    assert.deepEqual((await q("t2m", 44.3, -5.2)).json().values, f32s(xs[3]));
    const exp = await get(
      `${srv.url}/api/export/forecast~waves/npy?var=swh&time_index=1&lead_start=1&lead_stop=1&lat_min=40&lat_max=60&lon_min=-30&lon_max=-20`,
      H(),
    );
    assert.equal(exp.status, 200, exp.body.toString());
    assert.deepEqual(JSON.parse(exp.headers.get("x-svc-field")!).shape, [1, 21, 11]);
    const ev = npyValues(exp.body, 21 * 11);
    const want = f32s(xs[2]);
    for (let i = 0; i < 21; i++) {
      for (let j = 0; j < 11; j++) assert.equal(ev[(20 - i) * 11 + j], want[i * 11 + j]);
    }
    const click = (await get(`${srv.url}/api/forecast/value?layer=waves.swh&lat=44.3&lon=-25.2&lead=3`)).json();
    assert.equal(click.value, f32s(xs[0])[1]);
  });

  test("/data: xarray + zarr 3 with defaults opens swh on its wave coordinates", async (t) => {
    if (!py3) {
      t.skip("xarray + zarr 3 unavailable");
      return;
    }
    const [over, from] = await xread(
      [
        { store: data("waves"), headers: H(), var: "swh", isel: { time: 1, lead_time: 0 } },
        { store: store("waves"), var: "swh", isel: { time: 1, step: 0 } },
      ],
      py3,
    );
    assert.deepEqual(over.var_dims, ["time", "lead_time", "latitude_wave", "longitude_wave"]);
    assert.deepEqual(over.var_coords.latitude_wave, from.var_coords.latitude_wave);
    assert.deepEqual(over.var_coords.longitude_wave, from.var_coords.longitude_wave);
    assert.deepEqual(over.values, from.values);
  });

  test("maps: the wave layer is built beside t2m, over the wave grid's bounds", async (t) => {
    if (!py3) {
      t.skip("xarray + zarr 3 unavailable");
      return;
    }
    const current = realpathSync(join(await built(), "current"));
    const catalog = JSON.parse(readFileSync(join(current, "catalog.json"), "utf8"));
    const ids = catalog.layers.map((l: { id: string }) => l.id);
    assert.ok(ids.includes("waves.swh") && ids.includes("waves.t2m"), ids.join());
    const manifest = JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
    const swh = manifest.layers.find((l) => l.id === "waves.swh")!;
    assert.deepEqual(swh.bounds, [-40.5, 19.5, 30.5, 70.5]);
  });
});

/** Latitudes and (flat, row by row) values of a 2-D field north first, as /data publishes them. */
function northFirst(lat: number[], values: unknown[]): { lat: number[]; rows: unknown[] } {
  if (!(lat.length > 1 && lat[lat.length - 1] > lat[0])) return { lat, rows: values };
  const width = values.length / lat.length;
  const rows: unknown[] = [];
  for (let r = lat.length - 1; r >= 0; r--) rows.push(...values.slice(r * width, (r + 1) * width));
  return { lat: [...lat].reverse(), rows };
}
