// CF-first producers' stores exactly as they write them, nothing renamed (test/python/cf_producers.py):
// MET Norway MEPS (valid times in `time`, the run in a scalar forecast_reference_time, size-1
// height dims, CF names on a Lambert grid), GraphCast's saved rollout (a duration `time`, the
// valid time in `datetime` on (batch, time), a size-1 batch), a Met Office UKV-like Lambert
// azimuthal store (CF names, 1.5 m height, a rate in m s-1), a BoM-like ensemble (realization by
// standard_name, a one-entry forecast_reference_time axis) and Earth2Studio's Zarr output in zarr 2
// and zarr 3 (numpy.datetime64/timedelta64 data types). Every answer — /point's run, leads and
// values, the export, the map click and /data — is held to what xarray (+ pyproj for projected
// grids) reads from the same bytes.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { LayerSpec } from "../../src/pipeline/layer-spec.ts";
import { runPart } from "../../src/published/layout.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build, expectedPixels, withAxis } from "../pipeline/build-fixture.ts";
import { decodeRgba, pixel } from "../render/decode.ts";
import { bilinearAt, pyprojReference } from "./projected/reference.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/cf_producers.py");
const ENSEMBLE_DIMS = ["member", "number", "realization", "ensemble", "ensemble_member"];
const LAYOUTS = [
  "meps",
  "graphcast",
  "ukv",
  "bom",
  "twice",
  "e2s_zarr2",
  "flat",
  "fp_axis",
  ...ENSEMBLE_DIMS.map((d) => `ens_${d}`),
];
const run = promisify(execFile);

let dir: string;
let combo: string;
let venv: string;
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
  venv = requireZarr3Python("Earth2Studio's zarr 3 layout");
  await Promise.all([
    run(PYTHON, [SCRIPT, "write", dir, ...LAYOUTS], { timeout: 120_000 }),
    run(venv, [SCRIPT, "write", dir, "e2s_zarr3"], { timeout: 120_000 }),
  ]);
  combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of [...LAYOUTS, "e2s_zarr3"]) cpSync(store(n), join(combo, "forecast", n), { recursive: true });
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
    // /data publishes the grid north-up: the stored rows (y ascending) in reverse.
    const rows = Array.from({ length: 30 }, (_, j) => direct.values.slice(j * 24, (j + 1) * 24));
    assert.deepEqual(over.values, rows.reverse().flat());
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

/** What pyproj + xarray find at the node gridcast answered from: how far it lies from a stored node, and its values. */
const projectedNode = (queries: { store: string; var: string; lat: number; lon: number }[]) =>
  pythonJson<{ ix: number; iy: number; miss_m: number; values: number[] }[]>(PYTHON, SCRIPT, ["project"], queries);

describe("Met Office UKV-like: CF names, a 1.5 m height, a precipitation rate in m s-1", () => {
  test("served at its root: projection_x/y_coordinate make the root a dataset without latitude/longitude arrays", async () => {
    const s = new Store(store("ukv"));
    assert.deepEqual(await s.forecastGroupIds(), ["forecast/ukv"]);
    assert.ok((await s.forecastGroup("forecast/ukv")).variables.has("t2m"));
  });

  test("air_temperature at 1.5 m is t2m, the rate converts to mm/h; run, leads and values are pyproj + xarray's", async () => {
    const t = await point("lat=52.2&lon=-1.5&var=air_temperature&group=forecast/ukv");
    assert.equal(t.var, "t2m");
    assert.equal(t.run, "2024-05-01T06:00:00");
    assert.deepEqual(t.lead_hours, [0, 1, 2]);
    const pr = await point("lat=52.2&lon=-1.5&var=prate&group=forecast/ukv");
    assert.equal(pr.units, "mm h-1");
    assert.equal(pr.temporal.kind, "mean");
    const [nt, np] = await projectedNode([
      { store: store("ukv"), var: "air_temperature", lat: t.grid_lat, lon: t.grid_lon },
      { store: store("ukv"), var: "precipitation_rate", lat: pr.grid_lat, lon: pr.grid_lon },
    ]);
    assert.ok(nt.miss_m < 1, `the answering node lies ${nt.miss_m} m from a stored node`);
    assert.deepEqual(
      t.values,
      nt.values.map((v) => f32(v)),
    );
    pr.values.forEach((v: number, i: number) => {
      const want = f32(np.values[i]) * 3_600_000;
      assert.ok(Math.abs(v - want) <= 1e-5 * want, `prate[${i}]: ${v} vs ${want}`);
    });
  });

  test("what is left out is named with its reason and remedy in /api/registry and /data/datasets", async () => {
    const reg = (await get(`${srv.url}/api/registry`)).json();
    const ws = reg.unregistered.find((u: { group: string; stored: string }) => u.group === "forecast/ukv");
    assert.equal(ws.stored, "wind_speed");
    assert.match(ws.reason, /standard_name wind_speed is not one gridcast maps/);
    const data = (await get(`${srv.url}/data/datasets`, H())).json();
    const ukv = data.datasets.find((d: { id: string }) => d.id === "forecast~ukv");
    assert.ok(ukv.unregistered.some((u: { stored: string }) => u.stored === "wind_speed"));
  });
});

describe("BoM-like ensemble: realization by standard_name, names by alias and by CF meaning", () => {
  test("every member answers xarray's values; ttl_cld is tcc by meaning; accum_prcp in metres", async () => {
    const all = await point("lat=-34&lon=151&var=temp_scrn&member=all&group=forecast/bom");
    assert.equal(all.run, "2024-05-01T06:00:00");
    assert.deepEqual(all.lead_hours, [0, 3, 6, 9, 12]);
    const xs = await xread(
      [0, 1, 2].map((m) => ({ store: store("bom"), var: "temp_scrn", isel: { ens: m, lat: 5, lon: 19 } })),
    );
    assert.deepEqual(
      all.members.map((m: { member: number }) => m.member),
      [0, 1, 2],
    );
    for (let m = 0; m < 3; m++) {
      assert.deepEqual(
        all.members[m].values,
        xs[m].values.map((v) => f32(v as number)),
      );
    }
    const [cld, acc] = await xread([
      { store: store("bom"), var: "ttl_cld", isel: { ens: 0, lat: 5, lon: 19 } },
      { store: store("bom"), var: "accum_prcp", isel: { ens: 0, lat: 5, lon: 19 } },
    ]);
    const tcc = await point("lat=-34&lon=151&var=tcc&group=forecast/bom");
    assert.equal(tcc.units, "1");
    assert.deepEqual(
      tcc.values,
      cld.values.map((v) => f32(v as number)),
    );
    const tp = await point("lat=-34&lon=151&var=accum_prcp&group=forecast/bom");
    assert.equal(tp.var, "tp");
    assert.equal(tp.temporal.window, "since_start");
    tp.values.forEach((v: number, i: number) => {
      const want = f32(acc.values[i] as number) / 1000;
      assert.ok(Math.abs(v - want) <= 1e-6 * Math.max(1, want), `tp[${i}]`);
    });
  });

  test("a time mean of air temperature is no t2m: refused with what it would need", async () => {
    const models = (await get(`${srv.url}/api/registry`)).json();
    const av = models.unregistered.find((u: { stored: string }) => u.stored === "av_temp_scrn");
    assert.match(av.reason, /cell_methods "time: mean" matches no registered variable .*t2m needs/);
  });
});

describe("two arrays claiming one variable", () => {
  test("refused by name, neither guessed, unless one is named exactly so; the rest of the group serves", async () => {
    for (const v of ["t2m", "msl"]) {
      const r = await get(`${srv.url}/point?lat=45&lon=5&var=${v}&group=forecast/twice`, H());
      assert.equal(r.status, 404, r.body.toString());
      assert.match(r.json().detail, /ambiguous, neither is served/);
    }
    const reg = (await get(`${srv.url}/api/registry`)).json();
    const why = Object.fromEntries(
      reg.unregistered
        .filter((u: { group: string }) => u.group === "forecast/twice")
        .map((u: { stored: string; reason: string }) => [u.stored, u.reason]),
    );
    assert.deepEqual(Object.keys(why).sort(), [
      "mslp",
      "prmsl",
      "screen_temperature",
      "surface_pressure",
      "temperature_bias_corrected",
    ]);
    assert.match(why.screen_temperature, /and so does temperature_bias_corrected: ambiguous, neither is served/);
    assert.match(why.temperature_bias_corrected, /and so does screen_temperature: ambiguous/);
    assert.match(why.mslp, /mslp and prmsl are all names of msl: ambiguous, neither is served/);
    assert.match(why.surface_pressure, /sp is sp by its very name and is served/);
    const sp = await point("lat=45&lon=5&var=sp&group=forecast/twice");
    const [x] = await xread([{ store: store("twice"), var: "sp", isel: { lat: 5, lon: 5 } }]);
    assert.deepEqual(
      sp.values,
      x.values.map((v) => f32(v as number)),
    );
  });
});

describe("Earth2Studio Zarr output with an ensemble, zarr 2 and zarr 3", () => {
  for (const [name, fmt] of [
    ["e2s_zarr2", "zarr 2: numpy datetime64/timedelta64 dtypes"],
    ["e2s_zarr3", "zarr 3: numpy.datetime64/numpy.timedelta64 data types"],
  ] as const) {
    test(`${fmt}: runs, leads, members and values are xarray's; tp06 is 6-hour precipitation`, async () => {
      const py = name === "e2s_zarr3" ? venv : PYTHON;
      const read = (qs: { store: string; var: string; isel?: Record<string, number>; headers?: object }[]) =>
        pythonJson<Read[]>(py, SCRIPT, ["read"], qs);
      const all = await point(`lat=40&lon=10&var=t2m&member=all&run=1&group=forecast/${name}`);
      assert.equal(all.run, "2024-06-01T12:00:00");
      assert.deepEqual(all.lead_hours, [0, 6, 12]);
      const xs = await read(
        [0, 1, 2].map((m) => ({ store: store(name), var: "t2m", isel: { ensemble: m, time: 1, lat: 5, lon: 1 } })),
      );
      for (let m = 0; m < 3; m++) {
        assert.deepEqual(
          all.members[m].values,
          xs[m].values.map((v) => f32(v as number)),
        );
      }
      const tp = await point(`lat=40&lon=10&var=tp06&group=forecast/${name}`);
      assert.equal(tp.var, "tp_6h");
      assert.equal(tp.temporal.interval, "PT6H");
      const [over, direct] = await read([
        {
          store: `${srv.url}/data/datasets/forecast~${name}/zarr/`,
          headers: H(),
          var: "u10",
          isel: { member: 2, time: 0, lead_time: 1 },
        },
        { store: store(name), var: "u10m", isel: { ensemble: 2, time: 0, lead_time: 1 } },
      ]);
      assert.deepEqual(over.values, direct.values);
    });
  }
});

/** One layout's 2 m temperature: where it is stored, a node inside its grid, and what pins a run and member. */
interface Layout {
  name: string;
  stored: string;
  /** Storage (row, column) of a node well inside the grid. */
  node: [number, number];
  /** Stored dimensions pinned for the comparison (run, control member, size-1 dims); the lead dimension is left. */
  isel: Record<string, number>;
  leadDim: string;
  timeIndex: number;
  run: string;
  leads: number[];
  projected: boolean;
  /** Half the export box's side, degrees. */
  half: number;
  /** /data dimensions pinned besides time and lead_time. */
  dataIsel: Record<string, number>;
}
const EVERY: Layout[] = [
  {
    name: "meps",
    stored: "air_temperature_2m",
    node: [12, 9],
    isel: { height1: 0 },
    leadDim: "time",
    timeIndex: 0,
    run: "2024-05-01T06:00:00",
    leads: [0, 1, 2, 3],
    projected: true,
    half: 1.5,
    dataIsel: {},
  },
  {
    name: "ukv",
    stored: "air_temperature",
    node: [13, 9],
    isel: {},
    leadDim: "time",
    timeIndex: 0,
    run: "2024-05-01T06:00:00",
    leads: [0, 1, 2],
    projected: true,
    half: 1,
    dataIsel: {},
  },
  {
    name: "bom",
    stored: "temp_scrn",
    node: [5, 17],
    isel: { ens: 0 },
    leadDim: "time",
    timeIndex: 0,
    run: "2024-05-01T06:00:00",
    leads: [0, 3, 6, 9, 12],
    projected: false,
    half: 4,
    dataIsel: { member: 0 },
  },
  {
    name: "graphcast",
    stored: "2m_temperature",
    node: [13, 2],
    isel: { batch: 0 },
    leadDim: "time",
    timeIndex: 0,
    run: "2024-01-01T00:00:00",
    leads: [6, 12, 18],
    projected: false,
    half: 15,
    dataIsel: {},
  },
  ...(["e2s_zarr2", "e2s_zarr3"] as const).map((name) => ({
    name,
    stored: "t2m",
    node: [5, 3] as [number, number],
    isel: { ensemble: 0, time: 1 },
    leadDim: "lead_time",
    timeIndex: 1,
    run: "2024-06-01T12:00:00",
    leads: [0, 6, 12],
    projected: false,
    half: 15,
    dataIsel: { member: 0 },
  })),
];
/** The Python that reads a layout's own store: the zarr 3 venv for zarr 3, Debian's otherwise. */
const pyOf = (name: string) => (name === "e2s_zarr3" ? venv : PYTHON);
const py = <T>(python: string, mode: string, queries: unknown[]) => pythonJson<T>(python, SCRIPT, [mode], queries);
const axisOf = (a: { first?: number; step?: number; count: number; values?: number[] }) =>
  a.values ?? Array.from({ length: a.count }, (_, i) => a.first! + i * a.step!);
/** The float32 values of an .npy export: the last `n` × 4 bytes of the body. */
const npyValues = (body: Buffer, n: number) =>
  new Float32Array(body.buffer.slice(body.byteOffset + body.length - n * 4, body.byteOffset + body.length));
const near = (got: number, want: number, rel: number, what: string) =>
  assert.ok(Math.abs(got - want) <= rel * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);

describe("every route, every layout: /point, the map click, the export and /data against xarray (+ pyproj)", () => {
  for (const L of EVERY) {
    test(`${L.name}: run, leads and values of /point, value and export are xarray's at a node pyproj/xarray place`, async () => {
      const python = pyOf(L.name);
      const [at] = await py<{ lat: number; lon: number; values: number[] }[]>(python, "at", [
        { store: store(L.name), var: L.stored, iy: L.node[0], ix: L.node[1], isel: L.isel },
      ]);
      assert.equal(at.values.length, L.leads.length);
      const q = `lat=${at.lat}&lon=${at.lon}`;
      const p = await point(`${q}&var=t2m&group=forecast/${L.name}`);
      assert.equal(p.run, L.run);
      assert.deepEqual(p.lead_hours, L.leads);
      assert.deepEqual(
        p.values,
        at.values.map((v) => f32(v)),
      );
      const last = L.leads.length - 1;
      const click = (await get(`${srv.url}/api/forecast/value?layer=${L.name}.t2m&${q}&lead=${L.leads[last]}`)).json();
      assert.equal(click.run, L.run);
      assert.equal(click.value, f32(at.values[last]));

      const box = `lat_min=${at.lat - L.half}&lat_max=${at.lat + L.half}&lon_min=${at.lon - L.half}&lon_max=${at.lon + L.half}`;
      const r = await get(
        `${srv.url}/api/export/forecast~${L.name}/npy?var=t2m&time_index=${L.timeIndex}&lead_start=${last}&lead_stop=${last}&${box}`,
        H(),
      );
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.equal(field.run, L.run);
      const ys = axisOf(L.projected ? field.y : field.lat);
      const xs = axisOf(L.projected ? field.x : field.lon);
      assert.ok(ys.length >= 3 && xs.length >= 3, `${ys.length} × ${xs.length} nodes`);
      const [want] = await py<number[][]>(python, "box", [
        { store: store(L.name), var: L.stored, isel: { ...L.isel, [L.leadDim]: last }, ys, xs },
      ]);
      assert.deepEqual(
        Array.from(npyValues(r.body, ys.length * xs.length)),
        want.map((v) => f32(v)),
      );
    });
  }

  test("/data read by xarray + zarr 2 (v2 view) and xarray + zarr 3 (v3 view) equals xarray reading each store", async () => {
    type Plane = { dims: string[]; values: number[]; attrs: Record<string, unknown> };
    for (const L of EVERY) {
      const lead = 1;
      const over = {
        store: `${srv.url}/data/datasets/forecast~${L.name}/zarr/`,
        headers: H(),
        var: "t2m",
        isel: { time: L.timeIndex, lead_time: lead, ...L.dataIsel },
      };
      const [[direct], [v2], [v3]] = await Promise.all([
        py<Plane[]>(pyOf(L.name), "plane", [
          { store: store(L.name), var: L.stored, isel: { ...L.isel, [L.leadDim]: lead } },
        ]),
        py<Plane[]>(PYTHON, "plane", [over]),
        py<Plane[]>(venv, "plane", [over]),
      ]);
      assert.ok(direct.values.length > 100, `${L.name}: ${direct.values.length} values`);
      assert.deepEqual(v2.values, direct.values, `${L.name}: zarr 2 client`);
      assert.deepEqual(v3.values, direct.values, `${L.name}: zarr 3 client`);
      assert.ok(v2.dims.includes("lead_time"), `${L.name}: ${v2.dims}`);
    }
  });
});

describe("grid-relative winds (MEPS x_wind_10m/y_wind_10m) are answered as u10/v10 only turned to true north", () => {
  // A node in the west of the Lambert grid, where grid north lies well off true north.
  const node: [number, number] = [12, 1];
  const isel = { height7: 0 };
  interface Winds {
    east: number[];
    north: number[];
    bearing_deg: number[];
  }

  test("/point, the map click and the export hold pyproj's rotation of xarray's components", async () => {
    const [at] = await py<{ lat: number; lon: number }[]>(PYTHON, "at", [
      { store: store("meps"), var: "x_wind_10m", iy: node[0], ix: node[1], isel },
    ]);
    const [w] = await py<Winds[]>(PYTHON, "winds", [
      {
        store: store("meps"),
        u: "x_wind_10m",
        v: "y_wind_10m",
        isel,
        ys: [node[0], node[0] + 1],
        xs: [node[1], node[1] + 1],
      },
    ]);
    assert.ok(Math.abs(w.bearing_deg[0]) > 3, `grid north lies ${w.bearing_deg[0]}° off true north`);
    const q = `lat=${at.lat}&lon=${at.lon}`;
    for (const [name, stored, want] of [
      ["u10", "x_wind_10m", w.east],
      ["v10", "y_wind_10m", w.north],
    ] as const) {
      for (const asked of [name, stored]) {
        const p = await point(`${q}&var=${asked}&group=forecast/meps`);
        assert.equal(p.var, name);
        assert.equal(p.values.length, 4);
        for (const [i, v] of (p.values as number[]).entries()) near(v, want[i], 1e-4, `${asked}[${i}]`);
      }
      const click = (await get(`${srv.url}/api/forecast/value?layer=meps.${name}&${q}&lead=2`)).json();
      near(click.value, want[2], 1e-4, `${name} click`);
    }
    // The wind speed is the same either way; its direction is the true one.
    const speed = (await get(`${srv.url}/api/forecast/value?layer=meps.wind_speed&${q}&lead=2`)).json();
    near(speed.value, Math.hypot(w.east[2], w.north[2]), 1e-4, "speed");
    const from = ((Math.atan2(-w.east[2], -w.north[2]) * 180) / Math.PI + 360) % 360;
    assert.ok(Math.abs(((speed.direction_deg - from + 540) % 360) - 180) <= 0.5, `${speed.direction_deg} vs ${from}`);

    const r = await get(
      `${srv.url}/api/export/forecast~meps/npy?var=v10&time_index=0&lead_start=1&lead_stop=1&lat_min=${at.lat - 1.5}&lat_max=${at.lat + 1.5}&lon_min=${at.lon - 1.5}&lon_max=${at.lon + 1.5}`,
      H(),
    );
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.equal(field.turned_with, "x_wind_10m");
    const [ys, xs] = [field.window.y as number[], field.window.x as number[]];
    const [box] = await py<Winds[]>(PYTHON, "winds", [
      { store: store("meps"), u: "x_wind_10m", v: "y_wind_10m", isel: { ...isel, time: 1 }, ys, xs },
    ]);
    const got = npyValues(r.body, box.north.length);
    // Stored rows run south to north (y ascending), as the export's do.
    for (const [k, x] of box.north.entries()) near(got[k], x, 1e-4, `export v10[${k}]`);
  });

  test("/data passes the stored components through under their own names and standard_names, never as u10/v10", async () => {
    const base = `${srv.url}/data/datasets/forecast~meps/zarr/`;
    const meta = (await get(`${base}.zmetadata`, H())).json();
    const keys = Object.keys(meta.metadata);
    assert.ok(keys.includes("x_wind_10m/.zarray") && keys.includes("y_wind_10m/.zarray"), keys.join(" "));
    assert.ok(!keys.some((k) => k.startsWith("u10/") || k.startsWith("v10/")), keys.join(" "));
    const [over] = await py<{ values: number[]; attrs: Record<string, unknown> }[]>(PYTHON, "plane", [
      { store: base, headers: H(), var: "x_wind_10m", isel: { lead_time: 2 } },
    ]);
    const [direct] = await py<{ values: number[] }[]>(PYTHON, "plane", [
      { store: store("meps"), var: "x_wind_10m", isel: { ...isel, time: 2 } },
    ]);
    assert.equal(over.attrs.standard_name, "x_wind");
    assert.deepEqual(over.values, direct.values);
  });
});

/**
 * The colours a pixel may show where pyproj places it at (fx, fy) in a (ny, nx) field: the palette
 * entries of the bilinear values within a tenth of a cell of that place (the test fields are noise,
 * changing fast between nodes, and the renderer's per-tile tables place a pixel to a fraction of a
 * cell; a zoom 3 pixel is itself a sixth of a MEPS cell), one entry either side.
 */
function coloursNear(
  field: ArrayLike<number>,
  nx: number,
  ny: number,
  fx: number,
  fy: number,
  p: ReturnType<typeof buildPalette>,
) {
  const vs: number[] = [];
  for (const dx of [-0.1, 0, 0.1])
    for (const dy of [-0.1, 0, 0.1]) vs.push(bilinearAt(field, nx, ny, fx + dx, fy + dy)!);
  const [lo, hi] = [p.lut(Math.min(...vs)), p.lut(Math.max(...vs))].sort((a, b) => a - b);
  const out = new Set<string>();
  for (let i = lo - 1; i <= hi + 1; i++) out.add(Array.from(p.rgba.subarray(i * 4, i * 4 + 4)).join());
  return out;
}

/** Tile (x, y) at zoom z holding a point. */
function tileOf(z: number, lat: number, lon: number): [number, number] {
  const n = 2 ** z;
  const x = Math.floor(((lon + 180) / 360) * n);
  const r = (lat * Math.PI) / 180;
  const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n);
  return [x, y];
}

describe("one build of every layout: tiles and the build output", () => {
  let out: string;
  let report: Awaited<ReturnType<typeof build>>;
  let current: string;
  before(async () => {
    out = tempDir("gridcast-cf-producers-build-");
    report = await build({
      store: combo,
      out,
      maxZoom: 3,
      groups: [...EVERY.map((l) => `forecast/${l.name}`), "forecast/twice"],
      // twice serves sp alone (both of its t2m claimants are refused): a build selects a layer of every group.
      vars: ["t2m", "u10", "sp"],
    });
    current = realpathSync(join(out, "current"));
  });
  after(() => cleanup(out));

  const manifest = () => JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
  const tilePath = (spec: LayerSpec, z: number, x: number, y: number) => {
    const run = spec.runs.at(-1)!;
    return join(
      current,
      "tiles",
      spec.id,
      runPart(run.token, spec.drawing),
      String(run.leads[0].hours),
      String(z),
      String(x),
      `${y}.png`,
    );
  };

  for (const L of EVERY) {
    test(`${L.name}: t2m tile pixels are the colours of xarray's field where ${L.projected ? "pyproj" : "the grid"} places them`, async () => {
      const python = pyOf(L.name);
      const spec = manifest().layers.find((l) => l.id === `${L.name}.t2m`)!;
      assert.ok(spec, `${L.name}.t2m is drawn`);
      const [at] = await py<{ lat: number; lon: number }[]>(python, "at", [
        { store: store(L.name), var: L.stored, iy: L.node[0], ix: L.node[1], isel: L.isel },
      ]);
      const z = L.name === "graphcast" || L.name.startsWith("e2s") ? 1 : 3;
      const [tx, ty] = tileOf(z, at.lat, at.lon);
      const img = await decodeRgba(readFileSync(tilePath(spec, z, tx, ty)));
      const [x] = await pythonJson<Read[]>(
        python,
        SCRIPT,
        ["read"],
        [{ store: store(L.name), var: L.stored, isel: { ...L.isel, [L.leadDim]: 0 } }],
      );
      const values = Float64Array.from(x.values, (a) => f32(a as number));
      const p = buildPalette(spec.style);
      let checked = 0;
      if (!L.projected) {
        const group = await new Store(store(L.name)).forecastGroup(`forecast/${L.name}`);
        const lf = withAxis({ group, field: values, rgba: p.rgba, lut: p.lut }, p);
        for (let row = 1; row < 256; row += 5) {
          for (let col = 2; col < 256; col += 5) {
            const want = expectedPixels(lf as never, z, tx, ty, col, row);
            const got = pixel(img.data, row * 256 + col);
            if (want[0][3] === 0) continue;
            assert.ok(
              want.some((w) => w.join() === got.join()),
              `${col},${row}: ${got} not in ${want.join(" | ")}`,
            );
            checked++;
          }
        }
      } else {
        const probes: [number, number][] = [];
        for (let row = 2; row < 256; row += 6) for (let col = 3; col < 256; col += 6) probes.push([col, row]);
        const [pos] = await py<[number, number][][]>(python, "positions", [
          {
            store: store(L.name),
            var: L.stored,
            points: probes.map(([c, r]) => [pixelLat(z, ty, r), pixelLon(z, tx, c)]),
          },
        ]);
        const ny = x.coords[x.dims[0]].length;
        const nx = x.coords[x.dims[1]].length;
        assert.equal(values.length, ny * nx);
        for (const [k, [col, row]] of probes.entries()) {
          const [fx, fy] = pos[k];
          // Away from the edge half-cells, where the grid's own outline decides.
          if (!(fx > 0.6 && fx < nx - 1.6 && fy > 0.6 && fy < ny - 1.6)) continue;
          const got = pixel(img.data, row * 256 + col);
          const v = bilinearAt(values, nx, ny, fx, fy);
          assert.ok(
            coloursNear(values, nx, ny, fx, fy, p).has(got.join()),
            `${col},${row}: ${got} not the colour of ${v}`,
          );
          checked++;
        }
      }
      assert.ok(checked > 100, `${L.name}: ${checked} pixels`);
    });
  }

  test("meps.u10 tiles show the wind turned to true north, not the stored x_wind", async () => {
    const spec = manifest().layers.find((l) => l.id === "meps.u10")!;
    assert.ok(spec, "meps.u10 is drawn");
    const [w] = await py<{ east: number[] }[]>(PYTHON, "winds", [
      {
        store: store("meps"),
        u: "x_wind_10m",
        v: "y_wind_10m",
        isel: { height7: 0, time: 0 },
        ys: [0, 30],
        xs: [0, 24],
      },
    ]);
    const [stored] = await py<{ values: number[] }[]>(PYTHON, "plane", [
      { store: store("meps"), var: "x_wind_10m", isel: { height7: 0, time: 0 } },
    ]);
    const p = buildPalette(spec.style);
    const z = 3;
    let turned = 0;
    let checked = 0;
    for (const [tx, ty] of [
      [3, 1],
      [4, 1],
      [3, 2],
      [4, 2],
    ]) {
      const file = tilePath(spec, z, tx, ty);
      let img: Awaited<ReturnType<typeof decodeRgba>>;
      try {
        img = await decodeRgba(readFileSync(file));
      } catch {
        continue;
      }
      const probes: [number, number][] = [];
      for (let row = 2; row < 256; row += 6) for (let col = 3; col < 256; col += 6) probes.push([col, row]);
      const [pos] = await py<[number, number][][]>(PYTHON, "positions", [
        {
          store: store("meps"),
          var: "x_wind_10m",
          points: probes.map(([c, r]) => [pixelLat(z, ty, r), pixelLon(z, tx, c)]),
        },
      ]);
      for (const [k, [col, row]] of probes.entries()) {
        const [fx, fy] = pos[k];
        if (!(fx > 0.6 && fx < 24 - 1.6 && fy > 0.6 && fy < 30 - 1.6)) continue;
        const got = pixel(img.data, row * 256 + col).join();
        assert.ok(coloursNear(w.east, 24, 30, fx, fy, p).has(got), `${tx}/${ty} ${col},${row}`);
        if (!coloursNear(stored.values, 24, 30, fx, fy, p).has(got)) turned++;
        checked++;
      }
    }
    assert.ok(checked > 100, `${checked} pixels`);
    assert.ok(turned > 10, `only ${turned} pixels tell the turned wind from the stored one`);
  });

  test("the build output names every array left out, with the reason and what would serve it", () => {
    for (const a of ["screen_temperature", "temperature_bias_corrected"]) {
      assert.ok(
        report.warnings.some((w) => w.startsWith(`forecast/twice/${a}: not drawn as t2m:`) && w.includes("ambiguous")),
        report.warnings.join("\n"),
      );
    }
    const ws = report.warnings.find((w) => w.startsWith("forecast/ukv/wind_speed: not served:"));
    assert.ok(ws, report.warnings.join("\n"));
    assert.match(ws, /standard_name wind_speed is not one gridcast maps \(name it as a registered variable or alias/);
    assert.ok(
      report.warnings.some(
        (w) => w.startsWith("forecast/bom/av_temp_scrn: not served:") && /t2m needs .*no time statistic/.test(w),
      ),
      report.warnings.join("\n"),
    );
  });
});

describe("CF run × forecast_period axes, the valid time a 2-D time coordinate", () => {
  test("runs from forecast_reference_time, leads from forecast_period; values are xarray's", async () => {
    const p = await point("lat=52&lon=4&var=t2m&group=forecast/fp_axis");
    assert.equal(p.run, "2024-05-01T12:00:00");
    assert.deepEqual(p.lead_hours, [0, 3, 6]);
    assert.deepEqual(p.times, ["2024-05-01T12:00:00", "2024-05-01T15:00:00", "2024-05-01T18:00:00"]);
    const [x] = await xread([
      { store: store("fp_axis"), var: "air_temperature", isel: { forecast_reference_time: 1, lat: 1, lon: 2 } },
    ]);
    assert.deepEqual(
      p.values,
      x.values.map((v) => f32(v as number)),
    );
  });
});

describe("ensemble dimensions by name alone", () => {
  test("member, number, realization, ensemble and ensemble_member each hold the members xarray reads", async () => {
    const want = await xread(
      ENSEMBLE_DIMS.map((d) => ({ store: store(`ens_${d}`), var: "t2m", isel: { [d]: 2, lat: 1, lon: 3 } })),
    );
    for (const [k, d] of ENSEMBLE_DIMS.entries()) {
      const p = await point(`lat=42&lon=6&var=t2m&member=all&group=forecast/ens_${d}`);
      assert.deepEqual(
        p.members.map((m: { member: number }) => m.member),
        [0, 1, 2],
        d,
      );
      assert.deepEqual(
        p.members[2].values,
        want[k].values.map((v) => f32(v as number)),
        d,
      );
    }
  });
});

describe("every refusal names the array, the reason and the remedy: inspect, /api/models, /data/datasets", () => {
  test("an array gridcast cannot place, and a group on cells it cannot place, on each surface", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(import.meta.dirname, "../../bin/gridcast"), "inspect", "--store", combo],
      {
        timeout: 120_000,
      },
    );
    assert.match(stdout, /unregistered wind_speed: .*standard_name wind_speed is not one gridcast maps \(name it as/);
    assert.match(stdout, /u10 +stored x_wind_10m .*\(grid-relative: turned to true north with y_wind_10m\)/);
    assert.match(stdout, /skipped forecast\/flat: .*values.* does not recognise: it needs ICON clat\/clon/);

    const models = (await get(`${srv.url}/api/models`)).json();
    const ukv = models.forecast.find((g: { id: string }) => g.id === "forecast/ukv");
    const ws = ukv.unregistered.find((u: { stored: string }) => u.stored === "wind_speed");
    assert.match(ws.reason, /standard_name wind_speed is not one gridcast maps \(name it as/);
    const flat = models.unavailable.find((g: { id: string }) => g.id === "forecast/flat");
    assert.ok(flat, JSON.stringify(models.unavailable));
    assert.match(
      flat.reason,
      /t2m lies on cell axis values, an unstructured grid gridcast does not recognise: it needs/,
    );

    const data = (await get(`${srv.url}/data/datasets`, H())).json();
    const d = data.datasets.find((x: { id: string }) => x.id === "forecast~ukv");
    assert.match(
      d.unregistered.find((u: { stored: string }) => u.stored === "wind_speed").reason,
      /standard_name wind_speed is not one gridcast maps \(name it as/,
    );
    assert.ok(
      data.unavailable.some(
        (u: { id: string; reason: string }) => /flat/.test(u.id) && /does not recognise/.test(u.reason),
      ),
      JSON.stringify(data.unavailable),
    );
  });
});
