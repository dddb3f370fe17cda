// The small layout rules producers write (issue 52), each store written by its producer's own
// writer (test/python/rule_stores.py; nothing renamed afterwards): a v2 store written by xarray +
// zarr 3 with chunks equal to the default left out, MEPS after ds.squeeze(), WeatherBench2's IFS
// ENS without a control member, EERIE HEALPix (time, cell) with "nest", a kerchunk valid_time
// concat, a store named like a wrfout file and Utah's HRRR-Zarr. Where served, /point, the export
// and /data must answer what xarray reads; where not, every surface says why.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build, listFiles } from "../pipeline/build-fixture.ts";

const SCRIPT = resolve(import.meta.dirname, "../python/rule_stores.py");
const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
/** The layouts served from one store below forecast/, each under its own name. */
const GROUPS = [
  "damaged",
  "plev_squeezed",
  "icon_v2",
  "meps",
  "meps_squeezed",
  "wb2_ens",
  "eerie",
  "kerchunk",
  "kerchunk_an",
];

/** A store named like the wrfout file it was converted from, as WRF names them. */
const WRFOUT = "wrfout_d01_2026-11-22_00:00:00";
const WRFOUT_ID = "forecast/wrfout_d01_2026-11-22_00-00-00";

let dir: string;
let combo: string;
let py3: string;
let srv: TestServer;
let key: string;
const H = () => ({ "X-API-Key": key });
const store = (name: string) => join(dir, `${name}.zarr`);

interface Read {
  values: (number | string | null)[];
  dims: string[];
  coords: Record<string, (number | string)[]>;
}
const xread = (
  qs: { store: string; var: string; isel?: Record<string, number>; headers?: object }[],
  python = PYTHON,
) => pythonJson<Read[]>(python, SCRIPT, ["read"], qs);
const f32s = (r: Read) => r.values.map((v) => (v === null ? null : Math.fround(v as number)));
const point = async (q: string) => {
  const r = await get(`${srv.url}/point?${q}`, H());
  assert.equal(r.status, 200, r.body.toString());
  return r.json();
};

before(async () => {
  dir = tempDir("gridcast-rules-");
  py3 = requireZarr3Python("the zarr-3-written v2 layout");
  await Promise.all([
    run(PYTHON, [SCRIPT, "write", dir], { timeout: 120_000 }),
    run(py3, [SCRIPT, "zarr3", dir], { timeout: 120_000 }),
  ]);
  combo = join(dir, "combo");
  mkdirSync(join(combo, "forecast"), { recursive: true });
  writeFileSync(join(combo, ".zgroup"), '{"zarr_format": 2}');
  writeFileSync(join(combo, "forecast", ".zgroup"), '{"zarr_format": 2}');
  for (const n of GROUPS) cpSync(store(n), join(combo, "forecast", n), { recursive: true });
  cpSync(join(dir, WRFOUT), join(combo, "forecast", WRFOUT), { recursive: true });
  srv = await testServer(combo);
  key = await srv.key(["weather"]);
});
after(async () => {
  await srv?.close();
  cleanup(dir);
});

describe("a v2 store written by xarray + zarr 3: a chunk left out is zeros, as zarr-python 3 reads it", () => {
  test("the stores leave out the time's chunk and tp's lead 0 (fill_value null)", () => {
    const meta = (a: string) => JSON.parse(readFileSync(join(store("icon_v2"), a, ".zarray"), "utf8"));
    assert.equal(meta("time").fill_value, null);
    assert.equal(meta("tp").fill_value, null);
    assert.equal(existsSync(join(store("icon_v2"), "time", "0")), false);
    assert.equal(existsSync(join(store("icon_v2"), "tp", "0.0.0.0")), false);
    assert.equal(existsSync(join(store("icon_v2"), "tp", "0.1.0.0")), true);
  });

  test("/point, export and /data answer what xarray + zarr 3 reads", async () => {
    const [tp, t2m] = await xread(
      [
        { store: store("icon_v2"), var: "tp", isel: { time: 0, latitude: 2, longitude: 4 } },
        { store: store("icon_v2"), var: "t2m", isel: { time: 0, latitude: 2, longitude: 4 } },
      ],
      py3,
    );
    assert.deepEqual(tp.coords.time, ["2026-11-22T00:00:00"]);
    assert.equal(tp.values[0], 0);
    const p = await point("lat=45&lon=10&var=tp&group=forecast/icon_v2");
    assert.equal(p.run, "2026-11-22T00:00:00");
    assert.equal(p.units, "m"); // kg m**-2 as stored
    assert.equal(p.values[0], 0);
    f32s(tp).forEach((x, i) => {
      assert.ok(Math.abs(p.values[i] - (x as number) / 1000) < 1e-9, `tp[${i}]`);
    });
    const t = await point("lat=45&lon=10&var=t2m&group=forecast/icon_v2");
    assert.deepEqual(t.values, f32s(t2m));
    // The map click at lead 0 and 6: the value xarray + zarr 3 reads there (in m).
    for (const [lead, i] of [
      [0, 0],
      [6, 1],
    ]) {
      const v = await get(`${srv.url}/api/forecast/value?layer=icon_v2.tp&lat=45&lon=10&lead=${lead}`);
      assert.equal(v.status, 200, v.body.toString());
      assert.ok(Math.abs(v.json().value - (f32s(tp)[i] as number) / 1000) < 1e-9, `value at lead ${lead}`);
    }
    const exp = await get(
      `${srv.url}/api/export/forecast~icon_v2/npy?var=tp&time_index=0&lead_start=0&lead_stop=0&lat_min=40&lat_max=50&lon_min=0&lon_max=20`,
      H(),
    );
    assert.equal(exp.status, 200, exp.body.toString());
    const body = new Float32Array(exp.body.buffer.slice(exp.body.byteOffset + exp.body.length - 45 * 4));
    assert.ok(body.every((x) => x === 0));
    const [over, from] = await xread(
      [
        { store: `${srv.url}/data/datasets/forecast~icon_v2/zarr/`, headers: H(), var: "tp", isel: { lat: 2 } },
        { store: store("icon_v2"), var: "tp", isel: { latitude: 2 } },
      ],
      py3,
    );
    assert.deepEqual(over.values, from.values);
  });
});

test("a chunk that does not decode is refused naming the array and what the decode met", async () => {
  // Cut the second time's chunk short in the served copy: 3 bytes where 180 belong.
  const chunk = join(combo, "forecast", "damaged", "t2m", "1.0.0");
  writeFileSync(chunk, readFileSync(chunk).subarray(0, 3));
  const ok = await point("lat=45&lon=10&var=t2m&group=forecast/damaged&run=0");
  assert.equal(ok.values.length, 1);
  const r = await get(`${srv.url}/point?lat=45&lon=10&var=t2m&group=forecast/damaged&run=1`, H());
  assert.ok(r.status >= 500, `${r.status} ${r.body}`);
  const detail = r.json().detail as string;
  assert.match(
    detail,
    /array forecast\/damaged\/t2m: a stored chunk does not decode with its codecs: .*3 bytes, 180 expected/,
  );
  assert.doesNotMatch(detail, /\/tmp|gridcast-rules/);
});

test("MEPS after ds.squeeze(): the winds find their 10 m height among the scalar coordinates", async () => {
  // xarray writes the squeezed heights into the group's `coordinates`; the name says 10 m.
  const attrs = JSON.parse(readFileSync(join(store("meps_squeezed"), ".zattrs"), "utf8"));
  assert.match(attrs.coordinates, /height7/);
  for (const v of ["u10", "v10", "t2m"]) {
    const squeezed = await point(`lat=63.3&lon=15&var=${v}&group=forecast/meps_squeezed`);
    const whole = await point(`lat=63.3&lon=15&var=${v}&group=forecast/meps`);
    assert.equal(squeezed.units, whole.units);
    assert.deepEqual(squeezed.values, whole.values, v);
  }
  const models = (await get(`${srv.url}/api/models`)).json();
  const g = models.forecast.find((m: { id: string }) => m.id === "forecast/meps_squeezed");
  assert.deepEqual(g.unregistered, []);
});

test("a pressure level squeezed to a scalar coordinate: the variable is served at that level and says so", async () => {
  const [x] = await xread([{ store: store("plev_squeezed"), var: "t", isel: { time: 1, latitude: 2, longitude: 4 } }]);
  assert.deepEqual(x.values.length, 1);
  for (const q of ["", "&level=850"]) {
    const p = await point(`lat=45&lon=10&var=t&group=forecast/plev_squeezed&run=1${q}`);
    assert.equal(p.level, 850);
    assert.deepEqual(p.values, f32s(x));
  }
  const other = await get(`${srv.url}/point?lat=45&lon=10&var=t&group=forecast/plev_squeezed&level=500`, H());
  assert.equal(other.status, 400);
  assert.match(other.json().detail, /t is stored at level 850 only/);
  const v = await get(`${srv.url}/api/forecast/value?layer=plev_squeezed.t.850&lat=45&lon=10&run=2026-11-22T06:00:00`);
  assert.equal(v.status, 200, v.body.toString());
  assert.equal(v.json().level, 850);
  assert.equal(v.json().value, f32s(x)[0]);
  const models = (await get(`${srv.url}/api/models`)).json();
  assert.deepEqual(models.forecast.find((m: { id: string }) => m.id === "forecast/plev_squeezed").variables, ["t"]);
});

test("WeatherBench2 IFS ENS (members 1..50): member 1 is drawn as the first, never called the control", async () => {
  const out = tempDir("gridcast-rules-build-");
  try {
    const report = await build({ store: combo, out, maxZoom: 0, concurrency: 1, groups: ["wb2_ens"] });
    assert.deepEqual(report.skipped, []);
    const texts = listFiles(out)
      .filter((f) => f.endsWith(".json"))
      .map((f) => readFileSync(join(out, f), "utf8"))
      .filter((s) => s.includes('"choice"'));
    assert.ok(texts.length > 0, "the build describes the member it draws");
    for (const s of texts) {
      assert.doesNotMatch(s, /"choice":\s*"control"/);
      assert.match(s, /"member":\s*\{\s*"value":\s*1,\s*"choice":\s*"first"/);
    }
  } finally {
    cleanup(out);
  }
  const [x] = await xread([
    { store: store("wb2_ens"), var: "2m_temperature", isel: { time: 0, number: 0, latitude: 2, longitude: 4 } },
  ]);
  const p = await point("lat=45&lon=10&var=t2m&group=forecast/wb2_ens");
  assert.equal(p.member, 1);
  assert.deepEqual(p.values, f32s(x));
});

describe("a kerchunk concat along valid_time: run and lead from the time and step along it", () => {
  test("one run: step varies along valid_time and gives the leads", async () => {
    const [x] = await xread([{ store: store("kerchunk"), var: "t2m", isel: { latitude: 2, longitude: 4 } }]);
    const p = await point("lat=45&lon=10&var=t2m&group=forecast/kerchunk");
    assert.equal(p.run, "2026-11-22T00:00:00");
    assert.deepEqual(p.lead_hours, [0, 6, 12, 18]);
    assert.deepEqual(p.times, x.coords.valid_time);
    assert.deepEqual(p.values, f32s(x));
    const [over, from] = await xread([
      { store: `${srv.url}/data/datasets/forecast~kerchunk/zarr/`, headers: H(), var: "t2m", isel: { lat: 2 } },
      { store: store("kerchunk"), var: "t2m", isel: { latitude: 2 } },
    ]);
    assert.deepEqual(over.values, from.values);
  });

  test("analyses: time varies with step 0 throughout, each entry a run", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    const g = models.forecast.find((m: { id: string }) => m.id === "forecast/kerchunk_an");
    assert.ok(g, JSON.stringify(models.unavailable));
    assert.equal(g.analysis, true);
    assert.equal(g.runs.length, 4);
    const [x] = await xread([
      { store: store("kerchunk_an"), var: "t2m", isel: { valid_time: 2, latitude: 2, longitude: 4 } },
    ]);
    const p = await point("lat=45&lon=10&var=t2m&group=forecast/kerchunk_an&run=2");
    assert.equal(p.run, "2026-11-22T12:00:00");
    assert.deepEqual(p.values, f32s(x));
  });
});

describe('EERIE HEALPix: (time, cell), no lead, healpix_order "nest"', () => {
  test("below forecast/ and opened at its own root: an analysis on cells, xarray's values at the cell", async () => {
    // An analysis: each time a run with lead 0, one value each.
    const runs = await Promise.all(
      [0, 1, 2].map((r) => point(`lat=-30&lon=120&var=t2m&group=forecast/eerie&run=${r}`)),
    );
    assert.deepEqual(
      runs.map((r) => [r.run, r.values.length]),
      [0, 1, 2].map((d) => [`2026-11-2${d}T00:00:00`, 1]),
    );
    const [all] = await xread([{ store: store("eerie"), var: "tas" }]);
    const n = all.values.length / 3;
    // A stored cell whose column is the series (north and south mirror each other in the fixture).
    const cells = [...Array(n).keys()].filter((i) =>
      [0, 1, 2].every((t) => Math.fround(all.values[t * n + i] as number) === runs[t].values[0]),
    );
    assert.ok(cells.length >= 1, "the series is a stored cell's column");
    const root = await testServer(store("eerie_root"));
    try {
      const k = await root.key(["weather"]);
      const r = await get(`${root.url}/point?lat=-30&lon=120&var=t2m&group=forecast/eerie_root&run=1`, {
        "X-API-Key": k,
      });
      assert.equal(r.status, 200, r.body.toString());
      assert.deepEqual(r.json().values, runs[1].values);
    } finally {
      await root.close();
    }
  });
});

test("a store named like its wrfout file: a URL-safe id, the stored name kept beside it", async () => {
  const [x] = await xread([{ store: join(dir, WRFOUT), var: "t2m", isel: { time: 1, latitude: 2, longitude: 4 } }]);
  const models = (await get(`${srv.url}/api/models`)).json();
  const g = models.forecast.find((m: { id: string }) => m.id === WRFOUT_ID);
  assert.ok(g, JSON.stringify(models.forecast.map((m: { id: string }) => m.id)));
  assert.equal(g.stored_name, WRFOUT);
  const p = await point(`lat=45&lon=10&var=t2m&group=${WRFOUT_ID}&run=1`);
  assert.deepEqual(p.values, f32s(x));
  const [over] = await xread([
    {
      store: `${srv.url}/data/datasets/${WRFOUT_ID.replace("/", "~")}/zarr/`,
      headers: H(),
      var: "t2m",
      isel: { time: 1, lat: 2, lon: 4 },
    },
  ]);
  assert.deepEqual(over.values, x.values);
  // The build's catalog keeps the stored name beside the id.
  const out = tempDir("gridcast-rules-wrf-");
  try {
    const report = await build({ store: combo, out, maxZoom: 0, concurrency: 1, groups: [WRFOUT_ID] });
    assert.deepEqual(report.skipped, []);
    const catalog = listFiles(out).find((f) => f.endsWith("catalog.json"));
    assert.ok(catalog, listFiles(out).join(" "));
    const layers = JSON.parse(readFileSync(join(out, catalog), "utf8")).layers;
    const t2m = layers.find((l: { group: string }) => l.group === WRFOUT_ID);
    assert.equal(t2m.group_stored_name, WRFOUT);
  } finally {
    cleanup(out);
  }
  // Opened at its own root, the dataset takes the same id.
  const root = await testServer(join(dir, WRFOUT));
  try {
    const k = await root.key(["weather"]);
    const r = await get(`${root.url}/point?lat=45&lon=10&var=t2m&group=${WRFOUT_ID}&run=1`, { "X-API-Key": k });
    assert.equal(r.status, 200, r.body.toString());
    assert.deepEqual(r.json().values, p.values);
    const m = (await get(`${root.url}/api/models`)).json().forecast[0];
    assert.equal(m.stored_name, WRFOUT);
  } finally {
    await root.close();
  }
});

describe("Utah's HRRR-Zarr (a group per level/variable, data in a nested sub-group, no CRS) is never ignored silently", () => {
  const WHY = /not served: no CRS — its arrays \(TMP\) lie on projection_y_coordinate, projection_x_coordinate/;

  test("inspect, /api/models and the build output name each data group with the reason", async () => {
    const hrrr = store("hrrr");
    const cli = (args: string[]) =>
      run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    const text = await cli(["inspect", "--store", hrrr]);
    assert.match(text.stdout, new RegExp(`2m_above_ground/TMP/2m_above_ground: ${WHY.source}`));
    assert.match(text.stdout, /surface\/PRES\/surface: not served: no CRS/);
    const json = JSON.parse((await cli(["inspect", "--store", hrrr, "--json"])).stdout);
    assert.deepEqual(
      json.not_served.map((n: { path: string }) => n.path),
      ["2m_above_ground/TMP/2m_above_ground", "surface/PRES/surface"],
    );
    const srvH = await testServer(hrrr);
    try {
      const models = (await get(`${srvH.url}/api/models`)).json();
      assert.deepEqual(models.forecast, []);
      assert.match(models.not_served[0].reason, WHY);
      assert.match(models.not_served[0].reason, /add one, e\.g\. HRRR's lambert_conformal_conic/);
    } finally {
      await srvH.close();
    }
    // The combined store: a nested sub-group inside a served group is named too.
    const nested = join(dir, "nested");
    cpSync(combo, nested, { recursive: true });
    cpSync(join(hrrr, "2m_above_ground"), join(nested, "forecast", "kerchunk", "2m_above_ground"), { recursive: true });
    const out = tempDir("gridcast-rules-hrrr-");
    try {
      const report = await build({ store: nested, out, maxZoom: 0, concurrency: 1, groups: ["kerchunk"] });
      assert.ok(
        report.warnings.some((w) =>
          /^forecast\/kerchunk\/2m_above_ground\/TMP\/2m_above_ground: not served: a sub-group of forecast\/kerchunk/.test(
            w,
          ),
        ),
        JSON.stringify(report.warnings),
      );
    } finally {
      cleanup(out);
    }
  });
});
