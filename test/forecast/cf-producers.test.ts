// CF-first producers' stores exactly as they write them, nothing renamed (test/python/cf_producers.py):
// MET Norway MEPS (valid times in `time`, the run in a scalar forecast_reference_time, size-1
// height dims, CF names on a Lambert grid) and GraphCast's saved rollout (a duration `time`, the
// valid time in `datetime` on (batch, time), a size-1 batch). Every answer — /point's run, leads
// and values, the export, the map click and /data — is held to what xarray (+ pyproj for the
// projected grid) reads from the same bytes.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { pyprojReference } from "./projected/reference.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/cf_producers.py");
const LAYOUTS = ["meps", "graphcast"];
const run = promisify(execFile);

let dir: string;
let srv: TestServer;
let key: string;
const H = () => ({ "X-API-Key": key });
const store = (name: string) => join(dir, `${name}.zarr`);
const f32 = (x: number) => Math.fround(x);

interface Read {
  values: (number | string | null)[];
  dims: string[];
  coords: Record<string, (number | string)[]>;
}
const xread = (queries: { store: string; var: string; isel?: Record<string, number>; headers?: object }[]) =>
  pythonJson<Read[]>(PYTHON, SCRIPT, ["read"], queries);

before(async () => {
  dir = tempDir("gridcast-cf-producers-");
  await run(PYTHON, [SCRIPT, "write", dir, ...LAYOUTS], { timeout: 120_000 });
  const combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of LAYOUTS) cpSync(store(n), join(combo, "forecast", n), { recursive: true });
  srv = await testServer(combo);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

const point = async (q: string) => {
  const r = await get(`${srv.url}/point?${q}`, H());
  assert.equal(r.status, 200, r.body.toString());
  return r.json();
};

describe("MET Norway MEPS: scalar forecast_reference_time, valid times in time", () => {
  // The Lambert grid's origin and a point in southern Norway.
  const points = [
    [63.3, 15],
    [60.2, 9.1],
  ];
  const ref = (v: string) =>
    pyprojReference(PYTHON, { store: store("meps"), var: v, axes: ["x", "y", "latitude", "longitude"], points });

  test("a forecast, not an analysis: one run from forecast_reference_time, leads from the valid times", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    const meps = models.forecast.find((g: { id: string }) => g.id === "forecast/meps");
    assert.equal(meps.analysis, false);
    assert.deepEqual(meps.lead_hours, [0, 1, 2, 3]);
    const p = await point("lat=63.3&lon=15&var=t2m&group=forecast/meps");
    assert.equal(p.run, "2024-05-01T06:00:00");
    assert.deepEqual(p.lead_hours, [0, 1, 2, 3]);
    assert.deepEqual(p.times, [
      "2024-05-01T06:00:00",
      "2024-05-01T07:00:00",
      "2024-05-01T08:00:00",
      "2024-05-01T09:00:00",
    ]);
  });

  test("CF names answer as stored and as canonical, with xarray + pyproj's values at the nearest node", async () => {
    const cases: [string, string, string, (x: number) => number][] = [
      ["air_temperature_2m", "t2m", "K", (x) => x],
      ["x_wind_10m", "u10", "m s-1", (x) => x],
      ["air_pressure_at_sea_level", "msl", "Pa", (x) => x],
      ["precipitation_amount_acc", "tp", "m", (x) => x / 1000],
    ];
    for (const [stored, canonical, units, f] of cases) {
      const want = ref(stored);
      for (const [k, [lat, lon]] of points.entries()) {
        for (const name of [stored, canonical]) {
          const p = await point(`lat=${lat}&lon=${lon}&var=${name}&group=forecast/meps`);
          assert.equal(p.var, canonical, name);
          assert.equal(p.units, units, name);
          assert.ok(Math.abs(p.grid_lat - want.points[k].lat) < 1e-6, `${name} node`);
          p.values.forEach((v: number, i: number) => {
            const x = f(f32(want.points[k].values[i]));
            assert.ok(Math.abs(v - x) <= 1e-6 * Math.max(1, Math.abs(x)), `${name}[${i}]: ${v} vs ${x}`);
          });
        }
      }
    }
    const tp = await point(`lat=63.3&lon=15&var=tp&group=forecast/meps`);
    assert.equal(tp.temporal.window, "since_start");
  });

  test("the export names the squeezed height dimension and holds xarray's field", async () => {
    const r = await get(
      `${srv.url}/api/export/forecast~meps/npy?var=air_temperature_2m&time_index=0&lead_start=2&lead_stop=2&lat_min=58&lat_max=68&lon_min=0&lon_max=30`,
      H(),
    );
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.deepEqual(field.squeezed, ["height1"]);
    assert.equal(field.run, "2024-05-01T06:00:00");
    assert.deepEqual(field.lead_time.valid_times, ["2024-05-01T08:00:00"]);
    const [y0, y1] = [field.window.y[0], field.window.y[1]];
    const [x0, x1] = [field.window.x[0], field.window.x[1]];
    const [x] = await xread([{ store: store("meps"), var: "air_temperature_2m", isel: { time: 2, height1: 0 } }]);
    const body = new Float32Array(r.body.buffer.slice(r.body.byteOffset + r.body.length - (y1 - y0) * (x1 - x0) * 4));
    let k = 0;
    for (let j = y0; j < y1; j++)
      for (let i = x0; i < x1; i++) assert.equal(body[k++], f32(x.values[j * 24 + i] as number));
  });

  test("the map click and /data answer the same run, leads and values", async () => {
    const want = ref("air_temperature_2m").points[1];
    const click = (await get(`${srv.url}/api/forecast/value?layer=meps.t2m&lat=60.2&lon=9.1&lead=3`)).json();
    assert.equal(click.run, "2024-05-01T06:00:00");
    assert.equal(click.value, f32(want.values[3]));
    const base = `${srv.url}/data/datasets/forecast~meps/zarr/`;
    const [over, direct] = await xread([
      { store: base, headers: H(), var: "t2m", isel: { lead_time: 1 } },
      { store: store("meps"), var: "air_temperature_2m", isel: { time: 1 } },
    ]);
    assert.deepEqual(over.dims, ["height1", "y", "x"]);
    assert.deepEqual(over.values, direct.values);
    const [run] = await xread([{ store: base, headers: H(), var: "time" }]);
    assert.deepEqual(run.values, ["2024-05-01T06:00:00"]);
    const [leads] = await xread([{ store: base, headers: H(), var: "lead_time" }]);
    assert.deepEqual(leads.values, [0, 1, 2, 3]);
  });
});

describe("GraphCast rollout: duration time, datetime on (batch, time), size-1 batch", () => {
  test("the run is the valid time less the lead; leads and values are xarray's", async () => {
    const p = await point("lat=40&lon=10&var=2m_temperature&group=forecast/graphcast");
    assert.equal(p.run, "2024-01-01T00:00:00");
    assert.deepEqual(p.lead_hours, [6, 12, 18]);
    const [x] = await xread([
      { store: store("graphcast"), var: "2m_temperature", isel: { batch: 0, lat: 13, lon: 1 } },
    ]);
    assert.deepEqual(
      p.values,
      x.values.map((v) => f32(v as number)),
    );
    assert.deepEqual(p.times, ["2024-01-01T06:00:00", "2024-01-01T12:00:00", "2024-01-01T18:00:00"]);
    const lv = await point("lat=40&lon=10&var=t&level=850&group=forecast/graphcast");
    const [xl] = await xread([
      { store: store("graphcast"), var: "temperature", isel: { batch: 0, level: 1, lat: 13, lon: 1 } },
    ]);
    assert.deepEqual(
      lv.values,
      xl.values.map((v) => f32(v as number)),
    );
    const models = (await get(`${srv.url}/api/models`)).json();
    assert.equal(models.forecast.find((g: { id: string }) => g.id === "forecast/graphcast").analysis, false);
  });
});
