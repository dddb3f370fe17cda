// The tests of test/forecast/curvilinear.test.ts and projection-recovered.test.ts: grids stored with
// 2-D latitude/longitude and no x/y values, each written as its producer writes it
// (write_stores.py, no renaming): a cfgrib-opened HRRR GRIB written by xarray + zarr 2, Herbie's
// (the same plus a CF grid mapping, zarr 3), a kerchunk-combined HRRR (runs along time), a raw
// wrfout (scipy's netCDF opened by xarray, written to Zarr as is), and curvilinear stores with no
// projection stated. Every answer is compared with xarray + pyproj reading the same store
// (reference.py, data_check.py): /point's node (nearest by great circle over the stored
// latitude/longitude) and values, the click value, export windows and values, winds turned to
// true north, tiles, /data, staggered WRF fields listed as not served, and the refusal of a
// projection that puts the nodes elsewhere.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { registry } from "../../../src/registry/registry.ts";
import { buildPalette } from "../../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../../src/render/tiles.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../../helpers/harness.ts";
import { requireZarr3Python } from "../../helpers/zarr3-python.ts";
import { build } from "../../pipeline/build-fixture.ts";
import { decodeRgba } from "../../render/decode.ts";
import { bilinearAt } from "../projected/reference.ts";

const HERE = import.meta.dirname;
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
  // One WRF run from SIMULATION_START_DATE: every stored time is one of its leads.
  wrf: {
    t2m: "T2",
    lat: "XLAT",
    lon: "XLONG",
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

/**
 * The tests of one part: "recovered" (cfgrib, Herbie, kerchunk, WRF: projections read back) or
 * "nodes" (curvilinear grids served from their nodes). Two test files, each well under two minutes.
 */
export function curvilinearSuite(part: "recovered" | "nodes"): void {
  const recovered = part === "recovered";
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
    positions: [number, number][];
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
    // cfgrib's store in both parts: the nodes part's pyproj truth reads its (identical) nodes.
    const debian = recovered ? ["cfgrib", "kerchunk", "badgrib"] : ["cfgrib", "nocrs", "jitter"];
    for (const m of debian) write(PYTHON, m, store(m), coords);
    if (!recovered) return;
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

  if (recovered) {
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
          const lead = name === "wrf" ? 6 : 3;
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
  }

  if (recovered) {
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
  }

  if (recovered) {
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
            for (const got of r.json().values)
              assert.ok(Math.abs(got - want) < 2e-3, `${name} ${v}: ${got} vs ${want}`);
          }
        });
      }
    });
  }

  if (recovered) {
    describe("WRF's own names and fields", () => {
      test("T2, PSFC, Q2 are served as t2m, sp, q2; staggered U, V, W, PH are listed as not served, with the reason", async () => {
        const models = (await get(`${servers.wrf.url}/api/models`)).json();
        const g = models.forecast[0];
        // Q2 as q2; RAINC + RAINNC as tp (test/forecast/wrf.test.ts checks their values).
        assert.deepEqual(g.variables, ["q2", "sp", "t2m", "tp", "u10", "v10"]);
        assert.equal(g.grid.winds_turned_by, "COSALPHA/SINALPHA");
        // One run (SIMULATION_START_DATE), its leads from XTIME (0, 180, 360 minutes since the start).
        assert.deepEqual(g.runs, ["2024-07-01T00:00:00"]);
        assert.deepEqual(g.lead_hours, [0, 3, 6]);
        assert.equal(g.analysis, false);
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
  }

  if (!recovered) {
    describe("a curvilinear grid (2-D latitude/longitude, no projection stated) is served from its nodes", () => {
      let srv: TestServer;
      let key: string;
      const N = "nocrs";
      const ref = (req: Record<string, unknown>, sel?: Record<string, number>): Ref => {
        const out = execFileSync(venv, [join(HERE, "reference.py")], {
          input: JSON.stringify({ store: store(N), var: "t2m", lat: "latitude", lon: "longitude", ...req, sel }),
          encoding: "utf8",
          stdio: ["pipe", "pipe", "pipe"],
        });
        return JSON.parse(out);
      };
      before(async () => {
        srv = await testServer(store(N));
        key = await srv.key(["weather"]);
      });
      after(() => srv.close());

      test("the catalogue names it curvilinear, with the stored names and the node counts", async () => {
        const models = (await get(`${srv.url}/api/models`)).json();
        assert.deepEqual(models.unavailable, []);
        const g = models.forecast[0];
        assert.deepEqual(
          { ...g.grid, node_spacing_deg: undefined },
          {
            kind: "curvilinear",
            latitude: "latitude",
            longitude: "longitude",
            rows: 30,
            columns: 48,
            node_spacing_deg: undefined,
          },
        );
        assert.deepEqual(g.variables, ["t2m", "u10", "v10"]);
      });

      // Points between nodes, near the domain's edges and at a node's midpoints (where the nearest by
      // index and by distance part ways on a sheared grid).
      const points: [number, number][] = [
        ...HRRR_POINTS,
        [31.2, -112.4],
        [46.1, -84.2],
        [41.13, -90.77],
        [35.01, -101.52],
      ];
      test("/point and the click value answer the node nearest by great circle over the stored nodes, with xarray's values", async () => {
        const want = ref({ points });
        const click = ref({ points }, { step: 2 });
        for (const [k, [lat, lon]] of points.entries()) {
          const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, { "X-API-Key": key });
          assert.equal(r.status, 200, r.body.toString());
          const p = r.json();
          const w = want.points[k];
          assert.deepEqual(
            [p.grid_lat, p.grid_lon].map((v) => v.toFixed(6)),
            [w.lat, w.lon].map((v) => v.toFixed(6)),
          );
          for (const [i, v] of (p.values as number[]).entries()) assert.ok(Math.abs(v - w.values[i]) < 1e-3);
          const c = await get(`${srv.url}/api/forecast/value?layer=${N}.t2m&lat=${lat}&lon=${lon}&lead=6`);
          assert.equal(c.status, 200, c.body.toString());
          assert.ok(Math.abs(c.json().value - click.points[k].values[0]) < 1e-3, `${c.json().value}`);
        }
      });

      test("a point beyond the grid's cells is refused (400), nothing read", async () => {
        for (const [lat, lon] of [
          [10, 10],
          [50, -60],
          [25, -100],
        ]) {
          const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, { "X-API-Key": key });
          assert.equal(r.status, 400, `${lat},${lon}: ${r.body.toString()}`);
        }
      });

      test("a box exports the index window spanning every stored node inside it, named in the header, no CRS claimed", async () => {
        const boxes: [number, number, number, number][] = [
          [35, 42, -105, -95],
          [28, 31, -116, -110],
          [44, 47.5, -85, -78],
        ];
        const want = ref({ node_boxes: boxes }, { step: 0 });
        for (const [k, [la0, la1, lo0, lo1]] of boxes.entries()) {
          const url =
            `${srv.url}/api/export/forecast~${N}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0` +
            `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
          const r = await get(url, { "X-API-Key": key });
          assert.equal(r.status, 200, r.body.toString());
          const field = JSON.parse(r.headers.get("x-svc-field")!);
          const w = want.boxes[k];
          assert.deepEqual(field.window, { y: w.rows, x: w.cols });
          assert.equal(field.crs, null);
          assert.deepEqual([field.x.first, field.x.units], [w.cols[0], "index"]);
          const npy = r.body;
          const hlen = npy.readUInt16LE(8);
          const data = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + hlen, npy.byteOffset + npy.length));
          assert.equal(data.length, w.field.length);
          for (let i = 0; i < data.length; i++) assert.ok(Math.abs(data[i] - w.field[i]) < 1e-3, `value ${i}`);
        }
        // GeoTIFF needs a CRS the grid does not have: refused, not written in a made-up one.
        const tif = await get(
          `${srv.url}/api/export/forecast~${N}/tiff?var=t2m&time_index=0&lead_start=0&lead_stop=0` +
            "&lat_min=35&lat_max=42&lon_min=-105&lon_max=-95",
          { "X-API-Key": key },
        );
        assert.equal(tif.status, 400, tif.body.toString());
      });

      test("x_wind/y_wind are turned to true north by the grid's own bearing, which pyproj's projection confirms", async () => {
        const [lat, lon] = [45.52, -84.7];
        const node = ref({ points: [[lat, lon]] }).points[0];
        const beta = (reference("cfgrib", { nodes: [[node.iy, node.ix]] }).bearings[0] * Math.PI) / 180;
        const ue = 2 * Math.cos(beta) + 10 * Math.sin(beta);
        const vn = -2 * Math.sin(beta) + 10 * Math.cos(beta);
        for (const [v, want] of [
          ["u10", ue],
          ["v10", vn],
        ] as const) {
          const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=${v}`, { "X-API-Key": key });
          assert.equal(r.status, 200, r.body.toString());
          // The bearing between neighbouring nodes, not the projection's tangent: within 0.02 m/s at 60 km.
          for (const got of r.json().values) assert.ok(Math.abs(got - want) < 0.02, `${v}: ${got} vs ${want}`);
        }
      });
    });
  }

  if (!recovered) {
    describe("a curvilinear grid whose nodes are not smooth", () => {
      test("/point answers the node nearest by great circle over every stored node, not a corner of the cell it falls in", async () => {
        const srv = await testServer(store("jitter"));
        try {
          const key = await srv.key(["weather"]);
          // Points spread over the inside of the domain (HRRR's 60 km Lambert, kept off its edges).
          const points: [number, number][] = [];
          for (let a = 0; a < 10; a++)
            for (let b = 0; b < 10; b++) points.push([33.1 + a * 1.13, -108 + b * 2.61 + a * 0.23]);
          const out = execFileSync(venv, [join(HERE, "reference.py")], {
            input: JSON.stringify({ store: store("jitter"), var: "t2m", lat: "latitude", lon: "longitude", points }),
            encoding: "utf8",
            stdio: ["pipe", "pipe", "pipe"],
          });
          const want: Ref = JSON.parse(out);
          for (const [k, [lat, lon]] of points.entries()) {
            const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, { "X-API-Key": key });
            assert.equal(r.status, 200, r.body.toString());
            const p = r.json();
            const w = want.points[k];
            assert.deepEqual(
              [p.grid_lat.toFixed(6), p.grid_lon.toFixed(6), p.values[0].toFixed(3)],
              [w.lat.toFixed(6), w.lon.toFixed(6), w.values[0].toFixed(3)],
              `${lat},${lon}`,
            );
          }
        } finally {
          await srv.close();
        }
      });
    });
  }

  describe("/data republishes them as xarray and pyproj read them", () => {
    const execFileAsync = promisify(execFile);
    // Asynchronous: the server answering the client lives in this process.
    const check = async (name: string, lat: string, stored: string, srv: TestServer, key: string) =>
      JSON.parse(
        (
          await execFileAsync(
            venv,
            [
              join(HERE, "data_check.py"),
              `${srv.url}/data/datasets/forecast~${name}/zarr/`,
              key,
              store(name),
              "t2m",
              stored,
              lat,
            ],
            { encoding: "utf8" },
          )
        ).stdout,
      );
    for (const name of recovered ? ["cfgrib", "wrf"] : []) {
      test(`${name}: the recovered CF grid mapping puts the stored nodes at the published x/y (pyproj)`, async () => {
        const l = LAYOUTS[name];
        const r = await check(name, l.lat, l.t2m, servers[name], keys[name]);
        assert.deepEqual(r.dims.slice(-2), ["y", "x"]);
        assert.equal(r.grid_mapping, "spatial_ref");
        // WRF's XLAT/XLONG are per time: not republished as latitude(y, x) (the grid mapping places the nodes).
        if (name === "wrf") assert.deepEqual([r.lat_equal, r.lon_equal, r.values_equal], [null, null, true]);
        else assert.ok(r.lat_equal && r.lon_equal && r.values_equal, JSON.stringify(r));
        assert.ok(r.xy_worst_m < 1, `nodes ${r.xy_worst_m} m from the published x/y`);
      });
    }
    test("nocrs: latitude(y, x)/longitude(y, x) and the values, no grid mapping claimed", {
      skip: recovered,
    }, async () => {
      const srv = await testServer(store("nocrs"));
      try {
        const r = await check("nocrs", "latitude", "t2m", srv, await srv.key(["weather"]));
        assert.equal(r.grid_mapping, null);
        assert.equal(r.has_spatial_ref, false);
        assert.equal(r.x_attrs.standard_name, undefined);
        assert.ok(r.lat_equal && r.lon_equal && r.values_equal, JSON.stringify(r));
      } finally {
        await srv.close();
      }
    });
  });

  if (recovered) {
    describe("refusals", () => {
      test("a GRIB_LoV that puts the nodes elsewhere than the stored latitude/longitude: refused by name, 503 problem+json", async () => {
        const srv = await testServer(store("badgrib"));
        try {
          const models = (await get(`${srv.url}/api/models`)).json();
          assert.equal(models.forecast.length, 0);
          assert.match(
            models.unavailable[0].reason,
            /the projection read from the GRIB_\* keys \(GRIB_gridType lambert\) puts node .* cells from the stored latitude\/longitude/,
          );
          const key = await srv.key(["weather"]);
          const r = await get(`${srv.url}/point?lat=40&lon=-100&var=t2m`, { "X-API-Key": key });
          assert.equal(r.status, 503);
          assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
          assert.doesNotMatch(r.body.toString(), /\/tmp\/|at .*\.ts:/);
        } finally {
          await srv.close();
        }
      });
    });
  }

  describe("map tiles", () => {
    // Pixels inside the domain at several places, and one off its cells (HRRR's 60 km Lambert).
    const probes: [number, number, number, number][] = [
      [7, 12, 40, 77],
      [7, 12, 200, 30],
      [6, 12, 250, 140],
      [8, 11, 100, 220],
      [5, 13, 10, 10],
    ];
    // cfgrib: the recovered projection (colours exact to a palette step); nocrs: drawn from the nodes,
    // whose interpolation lies within a hundredth of a cell of the projection (a few palette steps).
    for (const [name, steps] of recovered ? ([["cfgrib", 1]] as const) : ([["nocrs", 3]] as const)) {
      test(`${name}: t2m pixels have the colour of xarray's field sampled where pyproj puts them`, async () => {
        const z = 5;
        const out = join(dir, `tiles-${name}`);
        await build({
          store: store(name),
          out,
          maxZoom: z,
          vars: ["t2m"],
          leads: [0],
          rootGroupName: name,
          hidpi: false,
        });
        const { lut, rgba } = buildPalette(registry.lookup("t2m")!.style!);
        const field = JSON.parse(
          execFileSync(
            venv,
            [
              "-c",
              "import sys, json, xarray as xr; ds = xr.open_zarr(sys.argv[1], consolidated=False); " +
                "print(json.dumps(ds.t2m.isel(step=0).values.astype(float).ravel().tolist()))",
              store(name),
            ],
            { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
          ),
        ) as number[];
        const pos = reference("cfgrib", {
          positions: probes.map(([x, y, c, r]) => [pixelLat(z, y, r), pixelLon(z, x, c)]),
        }).positions;
        let inside = 0;
        let outside = 0;
        for (const [k, [x, y, c, r]] of probes.entries()) {
          const file = tileFile(out, `${name}.t2m`, z, x, y);
          const img = file ? await decodeRgba(readFileSync(file)) : undefined;
          const px = img ? Array.from(img.data.subarray((r * 256 + c) * 4, (r * 256 + c) * 4 + 4)) : [0, 0, 0, 0];
          const v = bilinearAt(field, 48, 30, pos[k][0], pos[k][1]);
          if (v === undefined) {
            assert.equal(px[3], 0, `pixel ${z}/${x}/${y} (${c},${r}) off the grid must be transparent`);
            outside++;
            continue;
          }
          const idx = lut(v);
          const near: string[] = [];
          for (let i = idx - steps; i <= idx + steps; i++)
            near.push(Array.from(rgba.subarray(i * 4, i * 4 + 4)).join(","));
          assert.ok(near.includes(px.join(",")), `pixel ${z}/${x}/${y} (${c},${r}): ${px} not the colour of ${v}`);
          inside++;
        }
        assert.ok(inside >= 3 && outside >= 1, `probes inside ${inside}, outside ${outside}`);
      });
    }
  });
}

/** The z/x/y file of a layer's only run and lead in a build, or undefined where no tile was written. */
function tileFile(out: string, layer: string, z: number, x: number, y: number): string | undefined {
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const l = catalog.layers.find((e: { id: string }) => e.id === layer);
  const rel = l.runs[0].leads[0].tiles.replace("{z}", z).replace("{x}", x).replace("{y}", y);
  try {
    readFileSync(join(out, "current", rel));
    return join(out, "current", rel);
  } catch {
    return undefined;
  }
}
