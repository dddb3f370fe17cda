// Layouts xarray reads and producers write today, each written by the real writer
// (test/python/layout_stores.py: Debian's xarray + zarr 2, and xarray + zarr 3 for the store it
// appends to): the new CDS ERA5 layout, a regional grid across the antimeridian stored in
// -180..180, CMIP levels in Pa, a store appended by zarr 3 with a chunk never written, and a
// group with an undecodable time beside readable ones. /point, export, maps and /data must agree
// with what xarray reads from the same bytes, and the bad group must fail alone.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
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

const SCRIPT = resolve(import.meta.dirname, "../python/layout_stores.py");
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

let dir: string;
let combo: string;
let srv: TestServer;
let key: string;
let py3: string | null;
let buildOut: Promise<string> | undefined;

/** One build of the map groups, shared by the tests that read its tiles and catalog. */
function built(): Promise<string> {
  buildOut ??= (async () => {
    const out = tempDir("gridcast-layouts-build-");
    const report = await build({
      store: combo,
      out,
      maxZoom: 2,
      concurrency: 1,
      groups: ["dateline", "gfs_buckets", ...(py3 ? ["dynamical"] : [])],
    });
    assert.deepEqual(report.skipped, []);
    return out;
  })();
  return buildOut;
}
const H = () => ({ "X-API-Key": key });
const GROUPS = ["era5_cds", "dateline", "cmip", "bad_value", "gfs_buckets"];

interface Read {
  values: (number | string | null)[];
  dims: string[];
  coords: Record<string, (number | string)[]>;
}

/** What xarray reads (Debian's, or `python` given): one batch of isel queries. */
async function xread(
  queries: { store: string; var: string; isel?: Record<string, number>; headers?: object }[],
  python = PYTHON,
): Promise<Read[]> {
  return pythonJson<Read[]>(python, SCRIPT, ["read"], queries);
}

const store = (name: string) => join(dir, `${name}.zarr`);
const f32s = (r: Read) => r.values.map((v) => (v === null ? null : Math.fround(v as number)));

before(async () => {
  dir = tempDir("gridcast-layouts-");
  await run(PYTHON, [SCRIPT, "write", dir], { timeout: 120_000 });
  py3 = zarr3Python("the zarr-3-appended layout");
  if (py3) await run(py3, [SCRIPT, "zarr3", dir], { timeout: 120_000 });
  combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of [...GROUPS, ...(py3 ? ["appended", "dynamical"] : [])]) {
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

test("CDS ERA5: valid_time is the time axis of an analysis, pressure_level its levels", async () => {
  const models = (await get(`${srv.url}/api/models`)).json();
  const g = models.forecast.find((m: { id: string }) => m.id === "forecast/era5_cds");
  assert.ok(g, JSON.stringify(models.unavailable));
  assert.equal(g.analysis, true);
  assert.equal(g.runs.length, 4);
  const xs = await xread([
    { store: store("era5_cds"), var: "t", isel: { valid_time: 2, pressure_level: 1, latitude: 4, longitude: 8 } },
    { store: store("era5_cds"), var: "t2m", isel: { valid_time: 3, latitude: 4, longitude: 8 } },
  ]);
  const t = (await get(`${srv.url}/point?lat=50&lon=10&var=t&level=850&group=forecast/era5_cds&run=2`, H())).json();
  assert.equal(t.run, "2024-06-01T02:00:00");
  assert.equal(t.units, "K");
  assert.deepEqual(t.values, f32s(xs[0]));
  const t2 = (await get(`${srv.url}/point?lat=50&lon=10&var=t2m&group=forecast/era5_cds`, H())).json();
  assert.equal(t2.run, "2024-06-01T03:00:00");
  assert.deepEqual(t2.values, f32s(xs[1]));
  // /data: the same instants and values as xarray reads from the store.
  const [over, from] = await xread([
    { store: `${srv.url}/data/datasets/forecast~era5_cds/zarr/`, headers: H(), var: "t", isel: { level: 2, lat: 3 } },
    { store: store("era5_cds"), var: "t", isel: { pressure_level: 2, latitude: 3 } },
  ]);
  assert.deepEqual(over.values, from.values);
  assert.deepEqual(over.coords.time, from.coords.valid_time);
});

describe("a regional grid across the antimeridian, stored 170..178, -180..-120", () => {
  test("/point: each side of the seam answers xarray's nearest node; beyond the grid names lon", async () => {
    // Stored columns: 170, 172, 174, 176, 178, -180, -178, ... -120 (index 0..35).
    const cases: [number, number, number][] = [
      [-175, 7, -176],
      [179.5, 5, -180],
      [171, 0, 170],
      [-121, 34, -122],
    ];
    const xs = await xread(
      cases.map(([, ix]) => ({ store: store("dateline"), var: "t2m", isel: { time: 0, latitude: 2, longitude: ix } })),
    );
    for (const [k, [lon, , node]] of cases.entries()) {
      const r = await get(`${srv.url}/point?lat=56&lon=${lon}&var=t2m&group=forecast/dateline`, H());
      assert.equal(r.status, 200, r.body.toString());
      const p = r.json();
      assert.equal(p.grid_lon, node, `lon ${lon}`);
      assert.deepEqual(p.values, f32s(xs[k]), `lon ${lon}`);
    }
    for (const lon of [-110, 160, 20]) {
      const r = await get(`${srv.url}/point?lat=56&lon=${lon}&var=t2m&group=forecast/dateline`, H());
      assert.equal(r.status, 400, `lon ${lon}`);
      assert.equal(r.json().param, "lon");
    }
    const south = await get(`${srv.url}/point?lat=30&lon=-175&var=t2m&group=forecast/dateline`, H());
    assert.equal(south.json().param, "lat");
  });

  test("export of a box across the seam runs eastward through xarray's columns", async () => {
    const url = `${srv.url}/api/export/forecast~dateline/npy?var=t2m&time_index=0&lead_start=1&lead_stop=1&lat_min=50&lat_max=60&lon_min=175&lon_max=-175`;
    const r = await get(url, H());
    assert.equal(r.status, 200, r.body.toString());
    // Columns 176, 178, -180, -178, -176 (indexes 3..7); rows ascend south to north.
    const [x] = await xread([{ store: store("dateline"), var: "t2m", isel: { time: 0, step: 1 } }]);
    const body = new Float32Array(r.body.buffer.slice(r.body.byteOffset + r.body.length - 6 * 5 * 4));
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 5; j++) assert.equal(body[(5 - i) * 5 + j], Math.fround(x.values[i * 36 + 3 + j] as number));
    }
  });

  test("/data gives xarray the stored longitudes and values", async () => {
    const [over, from] = await xread([
      { store: `${srv.url}/data/datasets/forecast~dateline/zarr/`, headers: H(), var: "t2m", isel: { lead_time: 1 } },
      { store: store("dateline"), var: "t2m", isel: { step: 1 } },
    ]);
    assert.deepEqual(over.values, from.values);
    assert.deepEqual(over.coords.lon, from.coords.longitude);
  });

  test("maps: tiles each side of the antimeridian show xarray's values", async () => {
    {
      const current = realpathSync(join(await built(), "current"));
      const manifest = JSON.parse(readFileSync(join(current, "manifest.json"), "utf8")) as { layers: LayerSpec[] };
      const spec = manifest.layers.find((l) => l.id === "dateline.t2m")!;
      const [x] = await xread([{ store: store("dateline"), var: "t2m", isel: { time: 0, step: 0 } }]);
      const group = await new Store(store("dateline")).forecastGroup("forecast/dateline");
      const p = buildPalette(spec.style);
      const lf = withAxis({ group, field: Float32Array.from(x.values as number[]), rgba: p.rgba, lut: p.lut }, p);
      const lastRun = spec.runs.at(-1)!;
      const lead = lastRun.leads[0];
      for (const tx of [0, 3]) {
        const file = join(
          current,
          "tiles",
          spec.id,
          runPart(lastRun.token, spec.drawing),
          String(lead.hours),
          "2",
          String(tx),
          "1.png",
        );
        const img = await decodeRgba(readFileSync(file));
        let drawn = 0;
        for (let row = 1; row < 256; row += 5) {
          for (let col = 2; col < 256; col += 5) {
            const want = expectedPixels(lf as never, 2, tx, 1, col, row);
            const got = pixel(img.data, row * 256 + col);
            if (want[0][3] === 0) assert.equal(got[3], 0, `tile ${tx} ${col},${row}`);
            else {
              assert.ok(
                want.some((w) => w.join() === got.join()),
                `tile ${tx} ${col},${row}: ${got}`,
              );
              drawn++;
            }
          }
        }
        assert.ok(drawn > 20, `tile ${tx}: ${drawn} pixels drawn`);
      }
    }
  });
});

test("CMIP plev in Pa: levels are hPa on /point, listings and /data", async () => {
  const models = (await get(`${srv.url}/api/models`)).json();
  const g = models.forecast.find((m: { id: string }) => m.id === "forecast/cmip");
  assert.deepEqual(g.levels, [850, 500]);
  const [x] = await xread([{ store: store("cmip"), var: "ta", isel: { time: 1, plev: 0, lat: 5, lon: 4 } }]);
  const p = (await get(`${srv.url}/point?lat=20&lon=120&var=ta&level=850&group=forecast/cmip&run=1`, H())).json();
  assert.equal(p.level, 850);
  assert.deepEqual(p.values, f32s(x));
  const wrong = await get(`${srv.url}/point?lat=20&lon=120&var=ta&level=85000&group=forecast/cmip`, H());
  assert.equal(wrong.status, 400);
  assert.equal(wrong.json().param, "level");
  const [over] = await xread([
    { store: `${srv.url}/data/datasets/forecast~cmip/zarr/`, headers: H(), var: "t", isel: { time: 1, level: 0 } },
  ]);
  assert.deepEqual(over.coords.level, [850, 500]);
});

test("zarr 3 appended to a fill-less v2 store: the unwritten chunk is zeros as zarr 3 reads it, the rest is xarray's", async (t) => {
  if (!py3) {
    t.skip("xarray + zarr 3 unavailable");
    return;
  }
  const meta = JSON.parse(readFileSync(join(store("appended"), "t2m", ".zarray"), "utf8"));
  assert.equal(meta.fill_value, null);
  const q = (lat: number, r: number) =>
    get(`${srv.url}/point?lat=${lat}&lon=4&var=t2m&group=forecast/appended&run=${r}`, H()).then((x) => x.json());
  const xs = await xread(
    [
      { store: store("appended"), var: "t2m", isel: { time: 3, latitude: 0, longitude: 2 } },
      { store: store("appended"), var: "t2m", isel: { time: 2, latitude: 5, longitude: 2 } },
      { store: store("appended"), var: "t2m", isel: { time: 3, latitude: 5 } },
    ],
    py3,
  );
  assert.deepEqual((await q(50, 3)).values, f32s(xs[0]));
  assert.deepEqual((await q(40, 2)).values, f32s(xs[1]));
  // The southern chunk of the last time was never written: zarr 3 reads its default 0 there, as
  // gridcast does (zarr 3 leaves out every chunk equal to 0 when it writes; zarr 2 reads whatever
  // memory held).
  assert.ok(xs[2].values.every((v) => v === 0));
  assert.deepEqual((await q(40, 3)).values, [0]);
  const exp = await get(
    `${srv.url}/api/export/forecast~appended/npy?var=t2m&time_index=3&lead_start=0&lead_stop=0&lat_min=40&lat_max=50&lon_min=0&lon_max=10`,
    H(),
  );
  assert.equal(exp.status, 200, exp.body.toString());
  const body = new Float32Array(exp.body.buffer.slice(exp.body.byteOffset + exp.body.length - 36 * 4));
  // Rows ascend: the first three (40..46 N) are the unwritten chunk.
  assert.ok(body.slice(0, 18).every((v) => v === 0));
  assert.ok(body.slice(18).every((v) => v > 0));
});

describe("a time value that cannot be decoded fails its group alone", () => {
  test("listings, /readyz and the data listing name it with the reason; the others serve", async () => {
    const models = await get(`${srv.url}/api/models`);
    assert.equal(models.status, 200, models.body.toString());
    const ids = models.json().forecast.map((g: { id: string }) => g.id);
    assert.ok(ids.includes("forecast/era5_cds") && ids.includes("forecast/dateline"));
    assert.ok(!ids.includes("forecast/bad_value"));
    const why = Object.fromEntries(
      models.json().unavailable.map((u: { id: string; reason: string }) => [u.id, u.reason]),
    );
    assert.match(why["forecast/bad_value"], /time coordinate's value 1000000000000000 at index 1/);
    const ready = (await get(`${srv.url}/readyz`)).json();
    const bad = ready.groups.find((g: { id: string }) => g.id === "forecast/bad_value");
    assert.equal(bad.ok, false);
    assert.ok(ready.groups.some((g: { id: string; ok: boolean }) => g.id === "forecast/cmip" && g.ok));
    const data = (await get(`${srv.url}/data/datasets`, H())).json();
    assert.deepEqual(
      data.unavailable.map((u: { id: string }) => u.id),
      ["forecast~bad_value"],
    );
    const r = await get(`${srv.url}/point?lat=42&lon=4&var=t2m&group=forecast/bad_value`, H());
    assert.equal(r.status, 503);
  });

  test("inspect and build name it and go on with the rest", async () => {
    const cli = (args: string[]) =>
      run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT, encoding: "utf8" }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    const text = await cli(["inspect", "--store", combo]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /skipped forecast\/bad_value: .*not a date gridcast can represent/);
    assert.match(text.stdout, /forecast\/dateline {2}\(regional/);
    const out = tempDir("gridcast-layouts-cli-");
    try {
      const args = ["build", "--store", combo, "--out", out, "--max-zoom", "0", "--groups", "cmip,bad_value"];
      // Named in --groups, the unreadable group fails the build by name (nothing built) ...
      const strict = await cli(args);
      assert.equal(strict.code, 2, strict.stderr);
      assert.match(strict.stderr, /forecast\/bad_value cannot be read.*not a date.*--allow-missing-groups/);
      assert.equal(existsSync(join(out, "current")), false, "nothing published");
      // ... unless the operator says to build the others: then it is skipped by name (exit 3).
      const b = await cli([...args, "--allow-missing-groups"]);
      assert.equal(b.code, 3, b.stderr);
      assert.match(b.stdout, /skipped forecast\/bad_value: .*not a date/);
      assert.match(b.stdout, /published/);
    } finally {
      cleanup(out);
    }
  });
});

describe("GFS tp in 6-hour buckets (cfgrib accum, resetting every 6 h)", () => {
  const at = (h: number) => new Date(Date.UTC(2024, 5, 1, h)).toISOString().slice(0, 19);
  // Leads 0, 3, ... 24: the bucket of lead h starts at the last multiple of 6 before it.
  const want = [0, 3, 6, 9, 12, 15, 18, 21, 24].map((h) => ({
    start: at(h === 0 ? 0 : Math.floor((h - 1) / 6) * 6),
    end: at(h),
  }));

  test("/point: the values are xarray's and each states its own bucket", async () => {
    const [x] = await xread([{ store: store("gfs_buckets"), var: "tp", isel: { latitude: 2, longitude: 4 } }]);
    // The data itself shows the resets: the series falls after 6 h at some point of the grid.
    const p = (await get(`${srv.url}/point?lat=45&lon=10&var=tp&group=forecast/gfs_buckets`, H())).json();
    assert.equal(p.units, "m");
    p.values.forEach((v: number, k: number) => {
      assert.ok(Math.abs(v - (x.values[k] as number) / 1000) < 1e-9, `tp[${k}]: ${v}`);
    });
    assert.equal(p.temporal.window, "since_reset");
    assert.equal(p.temporal.reset_hours, 6);
    assert.equal(p.temporal.source, "data");
    assert.match(p.temporal.description, /since the last reset \(every 6 h/);
    assert.deepEqual(p.intervals, want);
  });

  test("the map click and the catalog state the bucket each map shows", async () => {
    const click = (await get(`${srv.url}/api/forecast/value?layer=gfs_buckets.tp&lat=45&lon=10&lead=15`)).json();
    assert.deepEqual(click.interval, { start: at(12), end: at(15) });
    const current = realpathSync(join(await built(), "current"));
    const catalog = JSON.parse(readFileSync(join(current, "catalog.json"), "utf8"));
    const layer = catalog.layers.find((l: { id: string }) => l.id === "gfs_buckets.tp");
    assert.equal(layer.temporal.window, "since_reset");
    const leads = layer.runs[0].leads;
    assert.deepEqual(
      leads.map((l: { interval: unknown }) => l.interval),
      want.filter((_, i) => leads.some((l: { hours: number }) => l.hours === i * 3)),
    );
    assert.ok(leads.some((l: { hours: number }) => l.hours === 9));
  });
});

test("dynamical.org's ingested_forecast_length: leads not yet ingested are missing and not mapped", async (t) => {
  if (!py3) {
    t.skip("xarray + zarr 3 unavailable");
    return;
  }
  const [early, late] = await xread(
    [0, 1].map((r) => ({
      store: store("dynamical"),
      var: "temperature_2m",
      isel: { init_time: r, latitude: 2, longitude: 4 },
    })),
    py3,
  );
  const q = (r: number) =>
    get(`${srv.url}/point?lat=45&lon=10&var=t2m&group=forecast/dynamical&run=${r}`, H()).then((x) => x.json());
  const kelvin = (r: Read) => r.values.map((v) => (v === null ? null : Math.fround(Math.fround(v as number) + 273.15)));
  const full = await q(0);
  assert.equal(full.ingested_lead_hours, 12);
  full.values.forEach((v: number, i: number) => {
    assert.ok(Math.abs(v - kelvin(early)[i]!) < 1e-3, `run 0 lead ${i}`);
  });
  const latest = await q(1);
  assert.equal(latest.ingested_lead_hours, 6);
  assert.deepEqual(latest.values.slice(3), [null, null]);
  assert.deepEqual(late.values.slice(3), [-999, -999]); // what xarray reads there, with no warning
  latest.values.slice(0, 3).forEach((v: number, i: number) => {
    assert.ok(Math.abs(v - kelvin(late)[i]!) < 1e-3);
  });
  // Export and the map click refuse those leads rather than hand out the leftovers.
  const box = (stop: number) =>
    get(
      `${srv.url}/api/export/forecast~dynamical/npy?var=t2m&time_index=1&lead_start=0&lead_stop=${stop}&lat_min=40&lat_max=50&lon_min=0&lon_max=20`,
      H(),
    );
  assert.equal((await box(2)).status, 200);
  const past = await box(3);
  assert.equal(past.status, 404);
  assert.equal(past.json().param, "lead_stop");
  assert.equal(past.json().ingested_lead_hours, 6);
  const click = await get(`${srv.url}/api/forecast/value?layer=dynamical.t2m&lat=45&lon=10&lead=9`);
  assert.equal(click.status, 404);
  assert.equal(click.json().param, "lead");
  assert.equal((await get(`${srv.url}/api/forecast/value?layer=dynamical.t2m&lat=45&lon=10&lead=6`)).status, 200);
  const current = realpathSync(join(await built(), "current"));
  const catalog = JSON.parse(readFileSync(join(current, "catalog.json"), "utf8"));
  const layer = catalog.layers.find((l: { id: string }) => l.id === "dynamical.t2m");
  const hours = (r: { leads: { hours: number }[] }) => r.leads.map((l) => l.hours);
  // The build maps the latest run: only the leads it has so far.
  assert.deepEqual(layer.runs.map(hours), [[0, 3, 6]]);
  assert.equal(layer.runs[0].run, "2025-01-01T06:00:00");
});
