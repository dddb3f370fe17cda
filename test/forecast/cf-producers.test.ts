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
import { buildPalette } from "../../src/render/colormap.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build, expectedPixels, withAxis } from "../pipeline/build-fixture.ts";
import { decodeRgba, pixel } from "../render/decode.ts";
import { pyprojReference } from "./projected/reference.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/cf_producers.py");
const LAYOUTS = ["meps", "graphcast", "ukv", "bom", "twice", "e2s_zarr2"];
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

describe("map tiles", () => {
  test("GraphCast (squeezed batch) and Earth2Studio zarr 3 (control member) tiles show xarray's values; refusals in the build output", async () => {
    const out = tempDir("gridcast-cf-producers-build-");
    try {
      const report = await build({
        store: combo,
        out,
        maxZoom: 1,
        groups: ["forecast/graphcast", "forecast/e2s_zarr3", "forecast/twice"],
        vars: ["t2m"],
      });
      // The build output names each array refused as t2m, with the reason.
      for (const a of ["screen_temperature", "temperature_bias_corrected"]) {
        assert.ok(
          report.warnings.some(
            (w) => w.startsWith(`forecast/twice/${a}: not drawn as t2m:`) && w.includes("ambiguous"),
          ),
          report.warnings.join("\n"),
        );
      }
      const current = realpathSync(join(out, "current"));
      const manifest = JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
      const cases: [string, string, string, Record<string, number>][] = [
        ["graphcast.t2m", "graphcast", "2m_temperature", { batch: 0, time: 0 }],
        ["e2s_zarr3.t2m", "e2s_zarr3", "t2m", { ensemble: 0, time: 1, lead_time: 0 }],
      ];
      for (const [id, name, v, isel] of cases) {
        const spec = manifest.layers.find((l) => l.id === id)!;
        const py = name === "e2s_zarr3" ? venv : PYTHON;
        const [x] = await pythonJson<Read[]>(py, SCRIPT, ["read"], [{ store: store(name), var: v, isel }]);
        const group = await new Store(store(name)).forecastGroup(`forecast/${name}`);
        const p = buildPalette(spec.style);
        const values = Float64Array.from(x.values, (a) => f32(a as number));
        const lf = withAxis({ group, field: values, rgba: p.rgba, lut: p.lut }, p);
        const run = spec.runs.at(-1)!;
        const lead = run.leads[0];
        const file = join(current, "tiles", id, run.token, String(lead.hours), "1", "1", "0.png");
        const img = await decodeRgba(readFileSync(file));
        let checked = 0;
        for (let row = 1; row < 256; row += 5) {
          for (let col = 2; col < 256; col += 5) {
            const want = expectedPixels(lf as never, 1, 1, 0, col, row);
            const got = pixel(img.data, row * 256 + col);
            if (want[0][3] === 0) continue;
            assert.ok(
              want.some((w) => w.join() === got.join()),
              `${id} ${col},${row}: ${got} not in ${want.join(" | ")}`,
            );
            checked++;
          }
        }
        assert.ok(checked > 200, `${id}: ${checked} pixels`);
      }
    } finally {
      cleanup(out);
    }
  });
});
