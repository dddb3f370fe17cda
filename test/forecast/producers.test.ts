// Stores laid out the way real producers write them (Debian's xarray + zarr 2): a cfgrib ECMWF
// single run, a cfgrib GEFS ensemble, ARCO ERA5 without lead times, a WeatherBench2 forecast and
// a COSMO-like limited area in its own units, plus two broken ones. gridcast's /point, export,
// /data and build must agree with what xarray reads from the same bytes; the broken groups are
// reported by name and reason while every other group serves.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { pointSeries } from "../../src/forecast/point.ts";
import type { LayerSpec } from "../../src/pipeline/layer-spec.ts";
import { runPart } from "../../src/published/layout.ts";
import { registry } from "../../src/registry/registry.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { build, expectedPixels, withAxis } from "../pipeline/build-fixture.ts";
import { decodeRgba, pixel } from "../render/decode.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/producer_stores.py");
const run = promisify(execFile);

let dir: string;
let combo: string;
let srv: TestServer;
let key: string;
const H = () => ({ "X-API-Key": key });

interface Read {
  values: (number | string | null)[];
  dims: string[];
  attrs: Record<string, unknown>;
  coords: Record<string, (number | string)[]>;
}

/** What xarray reads: one batch of isel queries through the python helper. */
async function xread(queries: { store: string; var: string; isel?: Record<string, number>; headers?: object }[]) {
  return pythonJson<Read[]>(PYTHON, SCRIPT, ["read"], queries);
}

const store = (name: string) => join(dir, `${name}.zarr`);
const f32 = (x: number) => Math.fround(x);
const near = (a: number | null, b: number, what: string, tol = 1e-5) =>
  assert.ok(a !== null && Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

before(async () => {
  dir = tempDir("gridcast-producers-");
  await run(PYTHON, [SCRIPT, "write", dir], { timeout: 120_000 });
  // The same stores as groups of one gridcast store: forecast/<name>.
  combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of ["ecmwf_oper", "gefs", "era5", "wb2_hres", "cosmo", "one_row", "one_column", "bad_time"]) {
    cpSync(store(n), join(combo, "forecast", n), { recursive: true });
  }
  srv = await testServer(combo);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

describe("discovery", () => {
  test("a dataset at the store root is a group named after its directory (or the setting)", async () => {
    for (const n of ["ecmwf_oper", "era5", "wb2_hres", "gefs", "cosmo"]) {
      const s = new Store(store(n));
      assert.deepEqual(await s.forecastGroupIds(), [`forecast/${n}`]);
      const g = await s.forecastGroup(`forecast/${n}`);
      assert.equal(g.path, "");
      assert.ok(g.variables.size > 0, n);
    }
    const named = new Store(store("era5"), { rootGroupName: "reanalysis" });
    assert.deepEqual(await named.forecastGroupIds(), ["forecast/reanalysis"]);
    // A store given as one group's own directory.
    const own = new Store(join(combo, "forecast", "gefs"));
    assert.deepEqual(await own.forecastGroupIds(), ["forecast/gefs"]);
  });

  test("over HTTP (object storage, no listing), a root dataset is found from its consolidated metadata", async () => {
    const upstream = createServer((req, res) => {
      const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
      try {
        res.end(readFileSync(join(dir, rel)));
      } catch {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((ok) => upstream.listen(0, "127.0.0.1", () => ok()));
    try {
      const port = (upstream.address() as { port: number }).port;
      const s = new Store(`http://127.0.0.1:${port}/era5.zarr/`);
      assert.deepEqual(await s.forecastGroupIds(), ["forecast/era5"]);
      const g = await s.forecastGroup("forecast/era5");
      assert.equal(g.analysis, true);
      assert.equal(g.runs.length, 6);
    } finally {
      upstream.closeAllConnections();
      upstream.close();
    }
  });

  test("served at its root, /point needs no group and answers xarray's values", async () => {
    const solo = await testServer(store("ecmwf_oper"));
    try {
      const k = await solo.key(["weather"]);
      const r = await get(`${solo.url}/point?lat=40&lon=10&var=2t`, { "X-API-Key": k });
      assert.equal(r.status, 200, r.body.toString());
      const p = r.json();
      assert.equal(p.group, "forecast/ecmwf_oper");
      const [x] = await xread([{ store: store("ecmwf_oper"), var: "t2m", isel: { latitude: 5, longitude: 19 } }]);
      assert.deepEqual(
        p.values,
        x.values.map((v) => f32(v as number)),
      );
      assert.equal((await get(`${solo.url}/api/models`)).json().forecast[0].id, "forecast/ecmwf_oper");
    } finally {
      await solo.close();
    }
  });
});

describe("isolation", () => {
  test("unreadable groups are named with their reason; every other group lists and serves", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    assert.deepEqual(models.forecast.map((g: { id: string }) => g.id).sort(), [
      "forecast/cosmo",
      "forecast/ecmwf_oper",
      "forecast/era5",
      "forecast/gefs",
      "forecast/wb2_hres",
    ]);
    const why = Object.fromEntries(models.unavailable.map((u: { id: string; reason: string }) => [u.id, u.reason]));
    assert.match(why["forecast/one_row"], /single latitude row/);
    assert.match(why["forecast/one_column"], /single longitude column/);
    assert.match(why["forecast/bad_time"], /time units/);
    const ready = await get(`${srv.url}/readyz`);
    assert.equal(ready.status, 200);
    const bad = ready.json().groups.filter((g: { ok: boolean }) => !g.ok);
    assert.deepEqual(bad.map((g: { id: string }) => g.id).sort(), [
      "forecast/bad_time",
      "forecast/one_column",
      "forecast/one_row",
    ]);
    const exp = await get(`${srv.url}/api/export`, H());
    assert.equal(exp.status, 200);
    assert.equal(exp.json().groups.length, 5);
    const data = await get(`${srv.url}/data/datasets`, H());
    assert.equal(data.status, 200);
    assert.equal(data.json().datasets.length, 5);
    assert.deepEqual(
      data
        .json()
        .unavailable.map((u: { id: string }) => u.id)
        .sort(),
      ["forecast~bad_time", "forecast~one_column", "forecast~one_row"],
    );
  });

  test("garbage time units are a store fault (503, logged with the group), an unknown group is 404", async () => {
    const r = await get(`${srv.url}/point?lat=10&lon=10&var=t2m&group=forecast/bad_time`, H());
    assert.equal(r.status, 503);
    assert.match(r.json().detail, /forecast\/bad_time/);
    assert.ok(!r.body.toString().includes(dir), "no path to the client");
    assert.ok(srv.logs.some((l) => l.event === "forecast_group_unreadable" && l.group === "forecast/bad_time"));
    for (const url of [
      `/point?lat=10&lon=10&var=t2m&group=forecast/nowhere`,
      `/api/export/forecast~nowhere/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=0&lat_max=1&lon_min=0&lon_max=1`,
      `/data/datasets/forecast~nowhere/zarr/.zmetadata`,
    ]) {
      assert.equal((await get(srv.url + url, H())).status, 404, url);
    }
  });

  test("a chunk shape with a 0 refuses its group when opened, with the reason", async () => {
    const bad = join(dir, "zero-chunk");
    cpSync(store("era5"), bad, { recursive: true });
    const zm = JSON.parse(readFileSync(join(bad, ".zmetadata"), "utf8"));
    zm.metadata["2m_temperature/.zarray"].chunks = [0, 19, 36];
    writeFileSync(join(bad, ".zmetadata"), JSON.stringify(zm));
    const s = new Store(bad);
    await assert.rejects(
      async () => s.forecastGroup("forecast/zero-chunk"),
      /zero-chunk cannot be read: array 2m_temperature: chunk shape/,
    );
    const status = await s.groupStatus();
    assert.equal(status[0].ok, false);
    // Any other reader of the array (the /data view, say) is refused before a decode is tried.
    const meta = await s.node("2m_temperature");
    await assert.rejects(async () => s.array(meta!).chunk([0, 0, 0]), /array metadata cannot be used: chunk shape/);
  });
});

describe("time axes", () => {
  test("cfgrib scalar time + step: one run, leads from the step axis, values equal xarray's", async () => {
    const p = (await get(`${srv.url}/point?lat=40&lon=10&var=t2m&group=forecast/ecmwf_oper`, H())).json();
    assert.equal(p.run, "2024-05-01T00:00:00");
    assert.deepEqual(p.lead_hours, [0, 3, 6, 12]);
    assert.deepEqual(p.times.slice(-1), ["2024-05-01T12:00:00"]);
    const [x] = await xread([{ store: store("ecmwf_oper"), var: "t2m", isel: { latitude: 5, longitude: 19 } }]);
    assert.deepEqual(
      p.values,
      x.values.map((v) => f32(v as number)),
    );
  });

  test("ERA5 without leads: each time is a run with lead 0; WeatherBench2 prediction_timedelta", async () => {
    const models = (await get(`${srv.url}/api/models`)).json().forecast;
    const era5 = models.find((g: { id: string }) => g.id === "forecast/era5");
    assert.equal(era5.analysis, true);
    assert.equal(era5.runs.length, 6);
    assert.deepEqual(era5.lead_hours, [0]);
    const xs = await xread([
      { store: store("era5"), var: "2m_temperature", isel: { time: 4, latitude: 4, longitude: 1 } },
      { store: store("era5"), var: "total_precipitation", isel: { time: 4, latitude: 4, longitude: 1 } },
      { store: store("wb2_hres"), var: "2m_temperature", isel: { time: 1, latitude: 13, longitude: 2 } },
    ]);
    const t = (await get(`${srv.url}/point?lat=50&lon=10&var=2m_temperature&group=forecast/era5&run=4`, H())).json();
    assert.equal(t.run, "2020-01-01T04:00:00");
    assert.deepEqual(t.values, [f32(xs[0].values[0] as number)]);
    // ERA5's hourly precipitation covers the hour before each time.
    const tp = (await get(`${srv.url}/point?lat=50&lon=10&var=tp&group=forecast/era5&run=4`, H())).json();
    assert.deepEqual(tp.intervals, [{ start: "2020-01-01T03:00:00", end: "2020-01-01T04:00:00" }]);
    assert.equal(tp.temporal.description, "amount over the previous 1 h");
    near(tp.values[0], xs[1].values[0] as number, "era5 tp");
    const w = (await get(`${srv.url}/point?lat=40&lon=10&var=t2m&group=forecast/wb2_hres&run=1`, H())).json();
    assert.deepEqual(w.lead_hours, [0, 6, 12, 18]);
    assert.equal(w.run, "2020-01-01T12:00:00");
    assert.deepEqual(
      w.values,
      xs[2].values.map((v) => f32(v as number)),
    );
  });
});

test("zarr without xarray: datetime64/timedelta64 dtypes and no CF units still decode", async () => {
  const s = new Store(store("raw_datetime"));
  const g = await s.forecastGroup("forecast/raw_datetime");
  assert.deepEqual(g.runs, [Date.UTC(2024, 2, 1, 0), Date.UTC(2024, 2, 1, 12)]);
  assert.deepEqual(g.leads, [0, 6, 12]);
  const p = await pointSeries(s, registry, { lat: 10, lon: 0, var: "t2m", group: g.id, run: 1 });
  assert.deepEqual(p.times, ["2024-03-01T12:00:00", "2024-03-01T18:00:00", "2024-03-02T00:00:00"]);
  const [x] = await xread([{ store: store("raw_datetime"), var: "t2m", isel: { time: 1, latitude: 4, longitude: 0 } }]);
  assert.deepEqual(x.coords.time, ["2024-03-01T00:00:00", "2024-03-01T12:00:00"]);
  assert.equal(p.grid_lat, 10);
  assert.deepEqual(
    p.values,
    x.values.map((v) => f32(v as number)),
  );
});

describe("ensembles", () => {
  const q = "lat=45&lon=90&var=t2m&group=forecast/gefs&run=1";
  test("/point answers the control by default, any member, or all of them", async () => {
    const xs = await xread(
      [0, 1, 2, 3].map((m) => ({
        store: store("gefs"),
        var: "t2m",
        isel: { time: 1, number: m, latitude: 2, longitude: 5 },
      })),
    );
    const control = (await get(`${srv.url}/point?${q}`, H())).json();
    assert.equal(control.member, 0);
    assert.deepEqual(
      control.values,
      xs[0].values.map((v) => f32(v as number)),
    );
    const two = (await get(`${srv.url}/point?${q}&member=2`, H())).json();
    assert.deepEqual(
      two.values,
      xs[2].values.map((v) => f32(v as number)),
    );
    const all = (await get(`${srv.url}/point?${q}&member=all`, H())).json();
    assert.deepEqual(
      all.members.map((m: { member: number }) => m.member),
      [0, 1, 2, 3],
    );
    for (let m = 0; m < 4; m++)
      assert.deepEqual(
        all.members[m].values,
        xs[m].values.map((v) => f32(v as number)),
      );
    assert.equal((await get(`${srv.url}/point?${q}&member=9`, H())).json().param, "member");
    assert.equal(
      (await get(`${srv.url}/point?lat=40&lon=10&var=t2m&group=forecast/ecmwf_oper&member=1`, H())).status,
      400,
    );
  });

  test("export picks a member; /data keeps the member dimension for xarray", async () => {
    const url = `${srv.url}/api/export/forecast~gefs/npy?var=t2m&time_index=0&lead_start=1&lead_stop=1&lat_min=-90&lat_max=90&lon_min=0&lon_max=359&member=3`;
    const r = await get(url, H());
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.equal(field.member, 3);
    const [x] = await xread([{ store: store("gefs"), var: "t2m", isel: { time: 0, step: 1, number: 3 } }]);
    // .npy: header then float32 (lat ascending, lon eastward); the store's latitudes descend.
    const body = new Float32Array(r.body.buffer.slice(r.body.byteOffset + r.body.length - 10 * 20 * 4));
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 20; j++) assert.equal(body[(9 - i) * 20 + j], f32(x.values[i * 20 + j] as number));
    }
    const over = await xread([
      {
        store: `${srv.url}/data/datasets/forecast~gefs/zarr/`,
        headers: H(),
        var: "t2m",
        isel: { time: 1, lead_time: 2, member: 1, lat: 3 },
      },
      { store: store("gefs"), var: "t2m", isel: { time: 1, step: 2, number: 1, latitude: 3 } },
    ]);
    assert.deepEqual(over[0].dims, ["lon"]);
    assert.deepEqual(over[0].values, over[1].values);
    assert.deepEqual(over[0].coords.member ?? [0, 1, 2, 3], [0, 1, 2, 3]);
  });
});

describe("units and temporal meaning", () => {
  test("COSMO units convert to canonical ones in /point and export; an unknown unit stays as stored", async () => {
    const xs = await xread(
      ["T_2M", "PMSL", "TOT_PREC", "CLCT", "RELHUM_2M"].map((v) => ({
        store: store("cosmo"),
        var: v,
        isel: { time: 0, latitude: 6, longitude: 12 },
      })),
    );
    const at = (v: string) =>
      get(`${srv.url}/point?lat=46&lon=10&var=${v}&group=forecast/cosmo`, H()).then((r) => r.json());
    const cases: [string, string, (x: number) => number][] = [
      ["T_2M", "K", (x) => x + 273.15],
      ["PMSL", "Pa", (x) => x * 100],
      ["TOT_PREC", "m", (x) => x / 1000],
      ["CLCT", "1", (x) => x / 100],
      ["RELHUM_2M", "furlongs", (x) => x],
    ];
    for (const [i, [v, units, f]] of cases.entries()) {
      const p = await at(v);
      assert.equal(p.units, units, v);
      p.values.forEach((got: number, k: number) => {
        near(got, f(xs[i].values[k] as number), `${v}[${k}]`);
      });
    }
    // The map click reads the same converted value, with the member and window it stands for.
    const click = (await get(`${srv.url}/api/forecast/value?layer=cosmo.t2m&lat=46&lon=10&lead=2`)).json();
    assert.equal(click.units, "K");
    near(click.value, (xs[0].values[2] as number) + 273.15, "click");
    const gefsTp = (await get(`${srv.url}/api/forecast/value?layer=gefs.tp&lat=45&lon=90&lead=12`)).json();
    assert.equal(gefsTp.member, 0);
    assert.deepEqual(gefsTp.interval, { start: "2024-05-01T06:00:00", end: "2024-05-01T18:00:00" });
    const tp = await at("tp");
    assert.equal(tp.temporal.window, "since_start");
    assert.deepEqual(tp.intervals[3], { start: "2024-05-01T00:00:00", end: "2024-05-01T03:00:00" });
    const exp = await get(
      `${srv.url}/api/export/forecast~cosmo/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=46&lat_max=46&lon_min=10&lon_max=10`,
      H(),
    );
    const field = JSON.parse(exp.headers.get("x-svc-field")!);
    assert.equal(field.units, "K");
    assert.equal(field.stored_units, "degC");
    near(
      new Float32Array(exp.body.buffer.slice(exp.body.byteOffset + exp.body.length - 4))[0],
      (xs[0].values[0] as number) + 273.15,
      "export",
    );
  });

  test("GEFS tp in kg m**-2 answers metres accumulated since the run start (GRIB stepType)", async () => {
    const [x] = await xread([
      { store: store("gefs"), var: "tp", isel: { time: 0, number: 0, latitude: 2, longitude: 5 } },
    ]);
    const p = (await get(`${srv.url}/point?lat=45&lon=90&var=tp&group=forecast/gefs&run=0`, H())).json();
    assert.equal(p.units, "m");
    assert.equal(p.temporal.source, "GRIB_stepType");
    p.values.forEach((v: number, k: number) => {
      near(v, (x.values[k] as number) / 1000, `tp[${k}]`);
    });
    assert.deepEqual(p.intervals[2], { start: "2024-05-01T00:00:00", end: "2024-05-01T12:00:00" });
  });

  test("/data serves analysis and single-run groups as xarray reads them from the store", async () => {
    const base = `${srv.url}/data/datasets`;
    const xs = await xread([
      { store: `${base}/forecast~era5/zarr/`, headers: H(), var: "t2m", isel: { time: 4, lat: 3 } },
      { store: store("era5"), var: "2m_temperature", isel: { time: 4, latitude: 3 } },
      { store: `${base}/forecast~ecmwf_oper/zarr/`, headers: H(), var: "tp", isel: { lead_time: 3, lat: 7 } },
      { store: store("ecmwf_oper"), var: "tp", isel: { step: 3, latitude: 7 } },
    ]);
    assert.deepEqual(xs[0].values, xs[1].values);
    assert.deepEqual(xs[0].coords.time, xs[1].coords.time); // the same decoded instants
    assert.deepEqual(xs[2].values, xs[3].values);
  });

  test("an unregistered variable with CF metadata is listed, not lost", async () => {
    const reg = (await get(`${srv.url}/api/registry`)).json();
    const soil = reg.unregistered.find((u: { stored: string }) => u.stored === "soil_type");
    assert.equal(soil.group, "forecast/era5");
    assert.equal(soil.long_name, "Soil type");
    const data = (await get(`${srv.url}/data/datasets`, H())).json();
    const era5 = data.datasets.find((d: { id: string }) => d.id === "forecast~era5");
    assert.ok(era5.unregistered.some((u: { stored: string }) => u.stored === "soil_type"));
  });

  test("a point beyond a group's coverage is refused, not answered with the edge value", async () => {
    const r = await get(`${srv.url}/point?lat=60&lon=10&var=t2m&group=forecast/cosmo`, H());
    assert.equal(r.status, 400);
  });
});

describe("command line", () => {
  const ROOT = resolve(import.meta.dirname, "../..");
  const cli = (args: string[]) =>
    run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT, encoding: "utf8" }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  test("inspect shows what it found where, and each group it skipped with the reason", async () => {
    const text = await cli(["inspect", "--store", combo]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /skipped forecast\/one_row: .*single latitude row/);
    assert.match(text.stdout, /skipped forecast\/bad_time: .*time units/);
    assert.match(
      text.stdout,
      /forecast\/era5 .*\n.*\n {2}found at: forecast\/era5 {2}\(analysis: each time is a run with lead 0\)/,
    );
    const root = JSON.parse((await cli(["inspect", "--store", store("gefs"), "--json"])).stdout);
    assert.equal(root.forecast_groups[0].id, "forecast/gefs");
    assert.equal(root.forecast_groups[0].path, "");
    assert.deepEqual(root.forecast_groups[0].members, [0, 1, 2, 3]);
  });

  test("build publishes the readable groups, names the skipped one and exits 3 (0 with --allow-skipped)", async () => {
    const out = tempDir("gridcast-producers-cli-");
    try {
      const args = [
        "build",
        "--store",
        combo,
        "--out",
        out,
        "--max-zoom",
        "0",
        "--groups",
        "era5,one_row",
        "--concurrency",
        "1",
      ];
      // one_row is named in --groups and cannot be served: the build fails by name, nothing built ...
      const strict = await cli(args);
      assert.equal(strict.code, 2, strict.stderr);
      assert.match(strict.stderr, /forecast\/one_row cannot be read.*--allow-missing-groups/);
      assert.equal(existsSync(join(out, "current")), false, "nothing published");
      // ... and with --allow-missing-groups the others are built, the skipped group named (exit 3).
      args.push("--allow-missing-groups");
      const r = await cli(args);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stdout, /skipped forecast\/one_row: .*single latitude row/);
      assert.match(r.stdout, /published/);
      // A second output directory: into the first, the same build would be "nothing new" (exit 4).
      const out2 = tempDir("gridcast-producers-cli-");
      try {
        const again = await cli([...args.map((a) => (a === out ? out2 : a)), "--allow-skipped"]);
        assert.equal(again.code, 0, again.stderr);
      } finally {
        cleanup(out2);
      }
      const none = await cli([
        "build",
        "--store",
        combo,
        "--out",
        out,
        "--max-zoom",
        "0",
        "--groups",
        "one_row,bad_time",
        "--allow-missing-groups",
      ]);
      // Even allowed to skip, a build of which no group can be read has nothing to publish.
      assert.equal(none.code, 2);
      assert.match(none.stderr, /no forecast group could be read/);
    } finally {
      cleanup(out);
    }
  });
});

describe("build", () => {
  let out: string;
  let report: Awaited<ReturnType<typeof build>>;
  before(async () => {
    out = tempDir("gridcast-producers-build-");
    report = await build({ store: combo, out, maxZoom: 2, concurrency: 1 });
  });
  after(() => cleanup(out));

  test("skips the unreadable groups by name, warns about the unit it cannot convert, builds the rest", () => {
    assert.deepEqual(report.skipped.map((s) => s.id).sort(), [
      "forecast/bad_time",
      "forecast/one_column",
      "forecast/one_row",
    ]);
    assert.ok(
      report.warnings.some((w) => w.includes("cosmo.r2") && w.includes("furlongs")),
      report.warnings.join("\n"),
    );
    assert.ok(report.totals.layers >= 10, `${report.totals.layers} layers`);
  });

  test("tile colours are the palette colours of xarray's values, in canonical units", async () => {
    const current = realpathSync(join(out, "current"));
    const manifest = JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
    const layer = (id: string) => manifest.layers.find((l) => l.id === id)!;
    assert.equal(layer("cosmo.t2m").units, "K");
    assert.equal(layer("cosmo.r2").style_range, "data");
    assert.deepEqual(layer("gefs.t2m").member, { value: 0, choice: "control" });
    // The catalog the viewer reads says which member the map shows and which range is the data's own.
    const catalog = JSON.parse(readFileSync(join(current, "catalog.json"), "utf8"));
    const cat = (id: string) => catalog.layers.find((l: { id: string }) => l.id === id);
    assert.deepEqual(cat("gefs.t2m").member, { value: 0, choice: "control" });
    assert.equal(cat("cosmo.r2").style_range, "data");
    assert.equal(cat("cosmo.r2").units, "furlongs");
    assert.equal(cat("gefs.tp").temporal.description, "amount since the start of the forecast");
    // A gust field where the store has one (ECMWF's i10fg) is a map layer of its own, in m/s.
    assert.equal(cat("ecmwf_oper.gust").units, "m s-1");
    assert.equal(cat("ecmwf_oper.gust").display.units, "m/s");
    const checks: [string, string, string, Record<string, number>, (x: number) => number][] = [
      ["cosmo.t2m", "cosmo", "T_2M", { time: 0, step: 0 }, (x) => x + 273.15],
      ["gefs.t2m", "gefs", "t2m", { time: 1, step: 0, number: 0 }, (x) => x],
      ["ecmwf_oper.msl", "ecmwf_oper", "msl", { step: 0 }, (x) => x],
      ["ecmwf_oper.gust", "ecmwf_oper", "i10fg", { step: 0 }, (x) => x],
    ];
    for (const [id, name, v, isel, f] of checks) {
      const spec = layer(id);
      const [x] = await xread([{ store: store(name), var: v, isel }]);
      const s = new Store(store(name));
      const group = await s.forecastGroup(`forecast/${name}`);
      const p = buildPalette(spec.style);
      const values = Float64Array.from(x.values, (a) => f32(f(a as number)));
      const lf = withAxis({ group, field: values, rgba: p.rgba, lut: p.lut }, p);
      const run = spec.runs.at(-1)!;
      const lead = run.leads[0];
      let checked = 0;
      for (const [z, x0, y0] of [
        [0, 0, 0],
        [2, 2, 1],
      ]) {
        const file = join(
          current,
          "tiles",
          id,
          runPart(run.token, spec.drawing),
          String(lead.hours),
          String(z),
          String(x0),
          `${y0}.png`,
        );
        let png: Buffer;
        try {
          png = readFileSync(file);
        } catch {
          continue;
        }
        const img = await decodeRgba(png);
        for (let row = 1; row < 256; row += 3) {
          for (let col = 2; col < 256; col += 3) {
            // Continuous fields are drawn bilinear: the colour of the interpolated value (a bin
            // edge may tip either way), from the grid and xarray's values alone.
            const want = expectedPixels(lf as never, z, x0, y0, col, row);
            const got = pixel(img.data, row * 256 + col);
            if (want[0][3] === 0) assert.equal(got[3], 0, `${id} ${z}/${x0}/${y0} ${col},${row}`);
            else {
              assert.ok(
                want.some((w) => w.join() === got.join()),
                `${id} ${z}/${x0}/${y0} ${col},${row}: ${got} not in ${want.join(" | ")}`,
              );
              checked++;
            }
          }
        }
      }
      assert.ok(checked > 20, `${id}: ${checked} pixels`);
    }
    // A layer in a unit gridcast cannot convert is drawn over its own range: many colours, not one.
    const r2 = layer("cosmo.r2");
    const run = r2.runs.at(-1)!;
    const img = await decodeRgba(
      readFileSync(
        join(
          current,
          "tiles",
          "cosmo.r2",
          runPart(run.token, r2.drawing),
          String(run.leads[0].hours),
          "2",
          "2",
          "1.png",
        ),
      ),
    );
    const colours = new Set<string>();
    for (let i = 0; i < 256 * 256; i++) if (img.data[i * 4 + 3] > 0) colours.add(pixel(img.data, i).join());
    assert.ok(colours.size > 20, `${colours.size} colours`);
  });
});
