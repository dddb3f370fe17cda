// Grids stored with 2-D latitude/longitude and no x/y values, each written as its producer writes
// it (test/forecast/curvilinear/write_stores.py, no renaming): a cfgrib-opened HRRR GRIB written
// by xarray + zarr 2, Herbie's (the same plus a CF grid mapping, zarr 3), a kerchunk-combined
// HRRR (runs along time) and a raw wrfout (scipy's netCDF opened by xarray, written to Zarr as
// is). Their projection is recovered (GRIB_* keys, the CF mapping, WRF's MAP_PROJ globals), the
// axes rebuilt and checked against the stored nodes; every answer is compared with xarray + pyproj
// reading the same store (test/forecast/curvilinear/reference.py): /point's node (nearest by great
// circle over the stored latitude/longitude) and values, the click value, export windows and
// values, winds turned to true north, staggered WRF fields listed as not served, and the refusals
// (no projection stated; one that puts the nodes elsewhere).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";

const HERE = join(import.meta.dirname, "curvilinear");
const HRRR_PROJ = "+proj=lcc +lat_1=38.5 +lat_2=38.5 +lat_0=38.5 +lon_0=262.5 +R=6371229 +units=m +no_defs";
const WRF_PROJ = "+proj=lcc +lat_1=30 +lat_2=60 +lat_0=39 +lon_0=-98 +R=6370000 +units=m +no_defs";

interface Layout {
  /** Stored names of the temperature and the 2-D latitude/longitude. */
  t2m: string;
  lat: string;
  lon: string;
  /** The stored entries /point answers with (isel of the non-grid dims); undefined: all of them. */
  sel?: Record<string, number>;
  proj4: string;
  /** What the catalogue says the projection was read from. */
  from: RegExp;
  points: [number, number][];
}

const HRRR_POINTS: [number, number][] = [
  [40, -100],
  [33.3, -112.1],
  [45.52, -84.7],
  [37.77, -97.5],
];
const LAYOUTS: Record<string, Layout> = {
  cfgrib: {
    t2m: "t2m",
    lat: "latitude",
    lon: "longitude",
    proj4: HRRR_PROJ,
    from: /^the GRIB_\* keys \(GRIB_gridType lambert\)$/,
    points: HRRR_POINTS,
  },
  herbie: {
    t2m: "t2m",
    lat: "latitude",
    lon: "longitude",
    proj4: HRRR_PROJ,
    from: /^the CF grid mapping gribfile_projection$/,
    points: HRRR_POINTS,
  },
  // Runs along time, one lead each: the latest run answers.
  kerchunk: {
    t2m: "t2m",
    lat: "latitude",
    lon: "longitude",
    sel: { time: 1 },
    proj4: HRRR_PROJ,
    from: /^the GRIB_\* keys/,
    points: HRRR_POINTS,
  },
  // Each of WRF's times is a time of its own (an analysis-like axis): the latest answers.
  wrf: {
    t2m: "T2",
    lat: "XLAT",
    lon: "XLONG",
    sel: { Time: 2 },
    proj4: WRF_PROJ,
    from: /^the WRF globals \(MAP_PROJ 1\)$/,
    points: [
      [39, -98],
      [36.1, -104.2],
      [42.3, -92.5],
      [40, -100],
    ],
  },
};

let dir: string;
let venv: string;
const servers: Record<string, TestServer> = {};
const keys: Record<string, string> = {};
const store = (name: string) => join(dir, `${name}.zarr`);
const write = (py: string, ...args: string[]) =>
  execFileSync(py, [join(HERE, "write_stores.py"), ...args], { stdio: ["ignore", "pipe", "pipe"] });

interface Ref {
  points: { iy: number; ix: number; lat: number; lon: number; values: number[] }[];
  boxes: {
    rows: [number, number];
    cols: [number, number];
    inside_rows: [number, number];
    inside_cols: [number, number];
    field: number[];
  }[];
  bearings: number[];
  axes: { x0: number; dx: number; y0: number; dy: number };
}

function reference(name: string, req: Record<string, unknown>, sel?: Record<string, number>): Ref {
  const l = LAYOUTS[name];
  const out = execFileSync(venv, [join(HERE, "reference.py")], {
    input: JSON.stringify({ store: store(name), var: l.t2m, lat: l.lat, lon: l.lon, proj4: l.proj4, ...req, sel }),
    encoding: "utf8",
    stdio: ["pipe", "pipe", "pipe"],
  });
  return JSON.parse(out);
}

before(async () => {
  venv = requireZarr3Python("curvilinear grids");
  dir = tempDir("gridcast-curvilinear-");
  const coords = join(dir, "coords.npz");
  write(venv, "coords", coords);
  for (const m of ["cfgrib", "kerchunk", "nocrs", "badgrib"]) write(PYTHON, m, store(m), coords);
  write(venv, "herbie", store("herbie"));
  write(PYTHON, "wrfout", store("wrf"), coords, join(dir, "wrfout_d01_2024-07-01_00:00:00"));
  for (const name of Object.keys(LAYOUTS)) {
    servers[name] = await testServer(store(name));
    keys[name] = await servers[name].key(["weather"]);
  }
});
after(async () => {
  for (const s of Object.values(servers)) await s.close();
  cleanup(dir);
});

const H = (name: string) => ({ "X-API-Key": keys[name] });

describe("the projection is recovered and the grid served as the projected grid it is", () => {
  for (const [name, l] of Object.entries(LAYOUTS)) {
    test(`${name}: the catalogue describes the rebuilt axes (pyproj's through the first node) and where the projection came from`, async () => {
      const models = (await get(`${servers[name].url}/api/models`)).json();
      assert.deepEqual(models.unavailable, []);
      const g = models.forecast[0].grid;
      assert.equal(g.kind, "projected");
      assert.equal(g.grid_mapping_name, "lambert_conformal_conic");
      assert.match(g.axes_recovered_from, l.from);
      const want = reference(name, {}).axes;
      assert.ok(Math.abs(g.x.first - want.x0) < 1, `x0 ${g.x.first} vs ${want.x0}`);
      assert.ok(Math.abs(g.y.first - want.y0) < 1, `y0 ${g.y.first} vs ${want.y0}`);
      assert.ok(Math.abs(g.x.step - want.dx) < 0.5 && Math.abs(g.y.step - want.dy) < 0.5);
      // Every checked node where the projection puts it, to a hundredth of a cell.
      assert.ok(g.latlon_check_cells < 0.01, `${g.latlon_check_cells}`);
    });

    test(`${name}: /point answers the node nearest by great circle over the stored lat/lon, with xarray's values`, async () => {
      const ref = reference(name, { points: l.points }, l.sel);
      for (const [k, [lat, lon]] of l.points.entries()) {
        const r = await get(`${servers[name].url}/point?lat=${lat}&lon=${lon}&var=t2m`, H(name));
        assert.equal(r.status, 200, r.body.toString());
        const p = r.json();
        const want = ref.points[k];
        assert.ok(
          Math.abs(p.grid_lat - want.lat) < 1e-5,
          `${name} ${lat},${lon}: grid_lat ${p.grid_lat} vs ${want.lat}`,
        );
        assert.ok(
          Math.abs(p.grid_lon - want.lon) < 1e-5,
          `${name} ${lat},${lon}: grid_lon ${p.grid_lon} vs ${want.lon}`,
        );
        assert.equal(p.units, "K");
        assert.equal(p.values.length, want.values.length);
        for (const [i, v] of (p.values as number[]).entries()) {
          assert.ok(Math.abs(v - want.values[i]) < 1e-3, `${v} vs ${want.values[i]}`);
        }
      }
    });
  }

  for (const name of ["cfgrib", "wrf"]) {
    test(`${name}: the click value reads the same node as xarray`, async () => {
      const l = LAYOUTS[name];
      const sel: Record<string, number> = name === "wrf" ? { Time: 2 } : { step: 1 };
      const ref = reference(name, { points: l.points }, sel);
      const lead = name === "wrf" ? 0 : 3;
      for (const [k, [lat, lon]] of l.points.entries()) {
        const r = await get(
          `${servers[name].url}/api/forecast/value?layer=${name}.t2m&lat=${lat}&lon=${lon}&lead=${lead}`,
        );
        assert.equal(r.status, 200, r.body.toString());
        const v = r.json();
        assert.ok(Math.abs(v.grid_lat - ref.points[k].lat) < 1e-5, `${v.grid_lat} vs ${ref.points[k].lat}`);
        assert.ok(Math.abs(v.value - ref.points[k].values[0]) < 1e-3, `${v.value} vs ${ref.points[k].values[0]}`);
      }
    });
  }
});

describe("export windows", () => {
  const boxes: Record<string, [number, number, number, number][]> = {
    cfgrib: [
      [35, 42, -105, -95],
      [28, 31, -116, -110],
    ],
    wrf: [
      [37, 40, -101, -96],
      [34, 36, -106, -103],
    ],
  };
  for (const [name, list] of Object.entries(boxes)) {
    test(`${name}: a lat/lon box exports the index window covering it, named in the header, with xarray's values`, async () => {
      const sel: Record<string, number> = name === "wrf" ? { Time: 0 } : { step: 0 };
      const ref = reference(name, { boxes: list }, sel);
      for (const [k, [la0, la1, lo0, lo1]] of list.entries()) {
        const want = ref.boxes[k];
        const url =
          `${servers[name].url}/api/export/forecast~${name}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0` +
          `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
        const r = await get(url, H(name));
        assert.equal(r.status, 200, r.body.toString());
        const field = JSON.parse(r.headers.get("x-svc-field")!);
        assert.deepEqual(field.window, { y: want.rows, x: want.cols });
        // Every node whose stored lat/lon lies in the box is inside the window.
        assert.ok(want.rows[0] <= want.inside_rows[0] && want.inside_rows[1] < want.rows[1]);
        assert.ok(want.cols[0] <= want.inside_cols[0] && want.inside_cols[1] < want.cols[1]);
        const npy = r.body;
        const hlen = npy.readUInt16LE(8);
        const data = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + hlen, npy.byteOffset + npy.length));
        assert.equal(data.length, want.field.length);
        for (let i = 0; i < data.length; i++) assert.ok(Math.abs(data[i] - want.field[i]) < 1e-3, `value ${i}`);
      }
    });
  }
});

describe("winds along the grid are answered turned to true north", () => {
  // Every layout stores (2, 10) m/s along the grid's (+x, +y): cfgrib's GRIB_uvRelativeToGrid,
  // WRF's U10/V10 (grid-relative by WRF's own convention, no flag).
  for (const name of ["cfgrib", "herbie", "wrf"]) {
    test(`${name}: u10/v10 at a node far from the central meridian are the grid winds turned by pyproj's bearing of grid north`, async () => {
      const [lat, lon] = name === "wrf" ? [36.1, -104.2] : [45.52, -84.7];
      const ref = reference(name, { points: [[lat, lon]] });
      const node = ref.points[0];
      const beta = (reference(name, { nodes: [[node.iy, node.ix]] }).bearings[0] * Math.PI) / 180;
      assert.ok(Math.abs(beta) > 0.05, `the grid leans ${beta} rad there`);
      const ue = 2 * Math.cos(beta) + 10 * Math.sin(beta);
      const vn = -2 * Math.sin(beta) + 10 * Math.cos(beta);
      for (const [v, want] of [
        ["u10", ue],
        ["v10", vn],
      ] as const) {
        const r = await get(`${servers[name].url}/point?lat=${lat}&lon=${lon}&var=${v}`, H(name));
        assert.equal(r.status, 200, r.body.toString());
        for (const got of r.json().values) assert.ok(Math.abs(got - want) < 2e-3, `${name} ${v}: ${got} vs ${want}`);
      }
    });
  }
});

describe("WRF's own names and fields", () => {
  test("T2 and PSFC are served as t2m and sp; staggered U, V, W, PH are listed as not served, with the reason", async () => {
    const models = (await get(`${servers.wrf.url}/api/models`)).json();
    const g = models.forecast[0];
    assert.deepEqual(g.variables, ["sp", "t2m", "u10", "v10"]);
    assert.deepEqual(g.runs, ["2024-07-01T00:00:00", "2024-07-01T03:00:00", "2024-07-01T06:00:00"]);
    const reasons = Object.fromEntries(
      g.unregistered.map((u: { stored: string; reason: string }) => [u.stored, u.reason]),
    );
    for (const [name, dim] of [
      ["U", "west_east_stag"],
      ["V", "south_north_stag"],
      ["W", "bottom_top_stag"],
      ["PH", "bottom_top_stag"],
    ]) {
      assert.match(reasons[name] ?? "", new RegExp(`^staggered on ${dim} .*not served`), name);
    }
    const r = await get(`${servers.wrf.url}/point?lat=39&lon=-98&var=psfc`, H("wrf"));
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(r.json().units, "Pa");
  });
});

describe("refusals", () => {
  for (const [name, reason] of [
    ["nocrs", /a curvilinear grid \(2-D latitude\/longitude on y, x, no y\/x values\) with no projection stated/],
    [
      "badgrib",
      /the projection read from the GRIB_\* keys \(GRIB_gridType lambert\) puts node .* cells from the stored latitude\/longitude/,
    ],
  ] as const) {
    test(`${name}: refused by name in the catalogue, 503 problem+json at /point, nothing served`, async () => {
      const srv = await testServer(store(name));
      try {
        const models = (await get(`${srv.url}/api/models`)).json();
        assert.equal(models.forecast.length, 0);
        assert.match(models.unavailable[0].reason, reason);
        const key = await srv.key(["weather"]);
        const r = await get(`${srv.url}/point?lat=40&lon=-100&var=t2m`, { "X-API-Key": key });
        assert.equal(r.status, 503);
        assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
        assert.doesNotMatch(r.body.toString(), /\/tmp\/|at .*\.ts:/);
      } finally {
        await srv.close();
      }
    });
  }
});
