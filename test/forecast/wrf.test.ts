// WRF output as its producers leave it (test/forecast/wrf/write_wrf.py, no renaming): a raw wrfout
// as xarray opens and writes it, on WRF's rotated latitude-longitude grid (MAP_PROJ 6, served from
// its nodes), the same without RAINNC, with WRF's bucket counters, without XTIME or as a moving
// nest, and a Lambert domain as xwrf's postprocess() and destagger() leave it (1-D x/y in metres,
// no CF grid mapping). Every answer is
// compared with xarray (+ pyproj for xwrf's x/y) reading the same store (wrf/reference.py): one run
// from SIMULATION_START_DATE with XTIME's leads (a date, or older xwrf's duration), RAINC + RAINNC
// as tp, Q2 as q2, U10/V10 turned to true north by the stored COSALPHA/SINALPHA (WRF's rule,
// computed by hand from the stored arrays). Export windows: over the xwrf Lambert grid, the stored
// x/y whose cells a box's outline reaches (pyproj); over the rotated grid, the rows and columns
// spanning every stored node inside the box. Tiles: each pixel the colour of xarray's field where
// pyproj puts it (the Lambert CRS of the globals; the rotated pole of POLE_LAT/POLE_LON).
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { registry } from "../../src/registry/registry.ts";
import { buildPalette, onAxis } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { cleanup, get, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";
import { bilinearAt } from "./projected/reference.ts";

const HERE = join(import.meta.dirname, "wrf");
const LEAD_TIMES = ["2024-07-01T00:00:00", "2024-07-01T03:00:00", "2024-07-01T06:00:00"];

interface RefPoint {
  iy: number;
  ix: number;
  lat: number;
  lon: number;
  t2: number[];
  q2: number[];
  psfc: number[];
  tp: number[] | null;
  u_grid: number[];
  v_grid: number[];
  u_earth: number[];
  v_earth: number[];
}
interface RefBox {
  rows: [number, number];
  cols: [number, number];
  inside_rows: [number, number];
  inside_cols: [number, number];
  x: number[];
  y: number[];
  t2: number[];
  tp: number[];
}
interface Ref {
  points: RefPoint[];
  boxes?: RefBox[];
  node_boxes?: { rows: [number, number]; cols: [number, number]; nodes: number; t2: number[]; tp: number[] }[];
  lattice_worst_cells?: number;
  shape?: [number, number];
  field_t2?: number[];
  window_tp?: number[];
  xy_worst_m?: number;
  x?: number[];
  y?: number[];
  positions?: [number, number][];
  field_tp?: number[];
  field_rainc?: number[];
}

/** Points inside both domains (centred on 39 N, 98 W), some far from the centre where the grid leans. */
const POINTS: [number, number][] = [
  [39, -98],
  [36.1, -104.2],
  [42.3, -92.5],
  [40, -100],
  [37.4, -94.1],
];

const close = (got: number[], want: number[], tol: number, what: string) => {
  assert.equal(got.length, want.length, `${what}: ${got.length} values, ${want.length} wanted`);
  for (const [i, v] of got.entries()) assert.ok(Math.abs(v - want[i]) <= tol, `${what}[${i}]: ${v} vs ${want[i]}`);
};

describe("WRF output as WRF, xarray and xwrf leave it", () => {
  let dir: string;
  let venv: string;
  const servers: Record<string, TestServer> = {};
  const keys: Record<string, string> = {};
  const store = (name: string) => join(dir, `${name}.zarr`);
  const reference = (name: string, req: Record<string, unknown>): Ref =>
    JSON.parse(
      execFileSync(venv, [join(HERE, "reference.py")], {
        input: JSON.stringify({ store: store(name), ...req }),
        encoding: "utf8",
        stdio: ["pipe", "pipe", "pipe"],
      }),
    );
  const point = async (name: string, v: string, lat: number, lon: number) => {
    const r = await get(`${servers[name].url}/point?lat=${lat}&lon=${lon}&var=${v}`, { "X-API-Key": keys[name] });
    assert.equal(r.status, 200, `${name} ${v} at ${lat},${lon}: ${r.body.toString()}`);
    return r.json();
  };

  before(async () => {
    venv = requireZarr3Python("WRF stores");
    dir = tempDir("gridcast-wrf-");
    for (const m of ["rotated", "onepart", "bucket", "xwrf", "xwrfdelta", "timesonly", "movingnest"]) {
      execFileSync(venv, [join(HERE, "write_wrf.py"), m, store(m)], { stdio: ["ignore", "pipe", "pipe"] });
      servers[m] = await testServer(store(m));
      keys[m] = await servers[m].key(["weather"]);
    }
  });
  after(async () => {
    for (const s of Object.values(servers)) await s.close();
    cleanup(dir);
  });

  for (const name of ["rotated", "xwrf"]) {
    test(`${name}: one run from SIMULATION_START_DATE whose leads are XTIME's minutes since the start`, async () => {
      const models = (await get(`${servers[name].url}/api/models`)).json();
      assert.deepEqual(models.unavailable, []);
      const g = models.forecast[0];
      assert.deepEqual(g.runs, ["2024-07-01T00:00:00"]);
      assert.deepEqual(g.lead_hours, [0, 3, 6]);
      assert.equal(g.analysis, false);
      assert.deepEqual(g.variables, ["q2", "sp", "t2m", "tp", "u10", "v10"]);
      assert.equal(g.grid.winds_turned_by, "COSALPHA/SINALPHA");
      const p = await point(name, "t2m", 39, -98);
      assert.deepEqual(p.times, LEAD_TIMES);
    });

    test(`${name}: t2m, q2, sp at the node nearest by great circle over XLAT/XLONG, with xarray's values`, async () => {
      const ref = reference(name, { points: POINTS });
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const want = ref.points[k];
        for (const [v, stored, units] of [
          ["t2m", want.t2, "K"],
          ["q2", want.q2, "kg kg-1"],
          ["sp", want.psfc, "Pa"],
        ] as const) {
          const p = await point(name, v, lat, lon);
          assert.ok(Math.abs(p.grid_lat - want.lat) < 1e-5, `${name} ${lat},${lon}: ${p.grid_lat} vs ${want.lat}`);
          assert.ok(Math.abs(p.grid_lon - want.lon) < 1e-5, `${name} ${lat},${lon}: ${p.grid_lon} vs ${want.lon}`);
          assert.equal(p.units, units);
          close(p.values, stored, Math.abs(stored[0]) * 1e-6, `${name} ${v} at ${lat},${lon}`);
        }
      }
    });

    test(`${name}: tp is RAINC + RAINNC (m), every lead, never one part alone`, async () => {
      const ref = reference(name, { points: POINTS });
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const want = ref.points[k].tp!;
        const p = await point(name, "tp", lat, lon);
        assert.equal(p.units, "m");
        close(p.values, want, 1e-7, `${name} tp at ${lat},${lon}`);
      }
      // Both parts are there at these nodes: the sum differs from either alone.
      assert.ok(
        ref.points.some((q) => q.tp![2] > 0.002),
        "the fixture rains",
      );
      const models = (await get(`${servers[name].url}/api/export`, { "X-API-Key": keys[name] })).json();
      const fields = JSON.stringify(models);
      assert.match(fields, /"summed_with":"RAINNC"/);
      // A part's own name does not answer with the total.
      const r = await get(`${servers[name].url}/point?lat=39&lon=-98&var=RAINC`, { "X-API-Key": keys[name] });
      assert.equal(r.status, 404, r.body.toString());
    });

    test(`${name}: u10/v10 are U10/V10 turned by the stored COSALPHA/SINALPHA (u cos a - v sin a, v cos a + u sin a)`, async () => {
      const ref = reference(name, { points: POINTS });
      let leaning = 0;
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const want = ref.points[k];
        // Where the grid leans, the turned wind is far from the stored one.
        if (Math.abs(want.u_earth[0] - want.u_grid[0]) > 0.3) leaning++;
        close((await point(name, "u10", lat, lon)).values, want.u_earth, 1e-5, `${name} u10 at ${lat},${lon}`);
        close((await point(name, "v10", lat, lon)).values, want.v_earth, 1e-5, `${name} v10 at ${lat},${lon}`);
      }
      assert.ok(leaning >= 2, `the grid leans at ${leaning} of the points`);
    });
  }

  test("rotated: the wind popup's speed and direction come from the winds turned by COSALPHA/SINALPHA", async () => {
    const ref = reference("rotated", { points: POINTS });
    let turned = 0;
    for (const [k, [lat, lon]] of POINTS.entries()) {
      const w = ref.points[k];
      const r = await get(
        `${servers.rotated.url}/api/forecast/value?layer=rotated.wind_speed&lat=${lat}&lon=${lon}&lead=0`,
      );
      assert.equal(r.status, 200, r.body.toString());
      const { value, direction_deg: direction } = r.json();
      const [u, v] = [w.u_earth[0], w.v_earth[0]];
      assert.ok(Math.abs(value - Math.hypot(u, v)) < 1e-4, `${value} vs ${Math.hypot(u, v)}`);
      // Where the wind comes from, clockwise from true north, in whole degrees.
      const want = Math.round(((Math.atan2(-u, -v) * 180) / Math.PI + 360) % 360);
      assert.equal(direction, want, `${lat},${lon}`);
      const asStored = Math.round(((Math.atan2(-w.u_grid[0], -w.v_grid[0]) * 180) / Math.PI + 360) % 360);
      if (asStored !== want) turned++;
    }
    assert.ok(turned >= 3, `the turning changes the direction at ${turned} points`);
  });

  test("xwrfdelta: XTIME as older xwrf leaves it (a duration since the start) gives the same run and leads", async () => {
    const g = (await get(`${servers.xwrfdelta.url}/api/models`)).json().forecast[0];
    assert.deepEqual([g.runs, g.lead_hours, g.analysis], [["2024-07-01T00:00:00"], [0, 3, 6], false]);
    const p = await point("xwrfdelta", "t2m", 39, -98);
    assert.deepEqual(p.times, LEAD_TIMES);
    assert.deepEqual(p.values, (await point("xwrf", "t2m", 39, -98)).values);
  });

  test("timesonly: a wrfout without XTIME takes its leads from the Times strings", async () => {
    const g = (await get(`${servers.timesonly.url}/api/models`)).json().forecast[0];
    assert.deepEqual([g.runs, g.lead_hours, g.analysis], [["2024-07-01T00:00:00"], [0, 3, 6], false]);
    const p = await point("timesonly", "t2m", 39, -98);
    assert.deepEqual(p.times, LEAD_TIMES);
    assert.deepEqual(p.values, (await point("rotated", "t2m", 39, -98)).values);
  });

  test("movingnest: XLAT that moves with Time refuses the group by name (503 problem+json), never placed at the start's nodes", async () => {
    const models = (await get(`${servers.movingnest.url}/api/models`)).json();
    assert.equal(models.forecast.length, 0);
    assert.match(models.unavailable[0].reason, /WRF's XLAT at node \(0, 0\) .*a moving nest/);
    const r = await get(`${servers.movingnest.url}/point?lat=39&lon=-98&var=t2m`, { "X-API-Key": keys.movingnest });
    assert.equal(r.status, 503, r.body.toString());
    assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
    assert.doesNotMatch(r.body.toString(), /\/tmp\/|at .*\.ts:/);
  });

  test("rotated: the click value and an export of tp read RAINC + RAINNC too, as xarray adds them", async () => {
    const ref = reference("rotated", { points: POINTS });
    for (const [k, [lat, lon]] of POINTS.entries()) {
      const r = await get(`${servers.rotated.url}/api/forecast/value?layer=rotated.tp&lat=${lat}&lon=${lon}&lead=6`);
      assert.equal(r.status, 200, r.body.toString());
      assert.ok(Math.abs(r.json().value - ref.points[k].tp![2]) < 1e-7, `${r.json().value} vs ${ref.points[k].tp![2]}`);
    }
    const url =
      `${servers.rotated.url}/api/export/forecast~rotated/npy?var=tp&time_index=0&lead_start=0&lead_stop=2` +
      "&lat_min=37&lat_max=40&lon_min=-101&lon_max=-96";
    const r = await get(url, { "X-API-Key": keys.rotated });
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    assert.equal(field.summed_with, "RAINNC");
    const want = reference("rotated", { window: [field.window.y, field.window.x] }).window_tp!;
    const hlen = r.body.readUInt16LE(8);
    const data = new Float32Array(
      r.body.buffer.slice(r.body.byteOffset + 10 + hlen, r.body.byteOffset + r.body.length),
    );
    close(Array.from(data), want, 1e-6, "exported tp");
  });

  test("xwrf: the stored x/y are the axes, in the projection the WRF globals state, where pyproj puts XLAT/XLONG", async () => {
    const ref = reference("xwrf", { proj: true });
    assert.ok(ref.xy_worst_m! < 1, `pyproj puts the nodes ${ref.xy_worst_m} m from the stored x/y`);
    const g = (await get(`${servers.xwrf.url}/api/models`)).json().forecast[0].grid;
    assert.equal(g.kind, "projected");
    assert.equal(g.grid_mapping_name, "lambert_conformal_conic");
    assert.equal(g.axes_recovered_from, null);
    assert.ok(Math.abs(g.x.first - ref.x![0]) < 1e-6 && Math.abs(g.y.first - ref.y![0]) < 1e-6);
    assert.ok(Math.abs(g.x.step - 30000) < 1e-6 && g.x.count === ref.x!.length && g.y.count === ref.y!.length);
    assert.ok(g.latlon_check_cells < 0.01, `${g.latlon_check_cells}`);
  });

  test("xwrf: /data republishes the grid as xarray + pyproj read it, RAINC and RAINNC under their own names (never tp)", async () => {
    const srv = servers.xwrf;
    const { stdout } = await promisify(execFile)(
      venv,
      [
        join(import.meta.dirname, "curvilinear", "data_check.py"),
        `${srv.url}/data/datasets/forecast~xwrf/zarr/`,
        keys.xwrf,
        store("xwrf"),
        "t2m",
        "T2",
        "XLAT",
      ],
      { encoding: "utf8" },
    );
    const r = JSON.parse(stdout);
    assert.deepEqual(r.dims.slice(-2), ["y", "x"]);
    assert.equal(r.grid_mapping, "spatial_ref");
    assert.ok(r.lat_equal && r.lon_equal && r.values_equal, stdout);
    assert.ok(r.xy_worst_m < 1, `nodes ${r.xy_worst_m} m from the published x/y`);
    const meta = await get(`${srv.url}/data/datasets/forecast~xwrf/zarr/.zmetadata`, { "X-API-Key": keys.xwrf });
    assert.equal(meta.status, 200, meta.body.toString());
    const names = Object.keys(meta.json().metadata);
    assert.ok(names.includes("RAINC/.zarray") && names.includes("RAINNC/.zarray"), names.join());
    assert.ok(!names.includes("tp/.zarray"), "the total is not a stored array /data can pass through");
  });

  test("xwrf: tp tiles have the colour of xarray's RAINC + RAINNC where pyproj puts each pixel (not RAINC's)", async () => {
    const z = 5;
    const out = join(dir, "tiles-xwrf");
    await build({ store: store("xwrf"), out, maxZoom: z, vars: ["tp"], leads: [6], hidpi: false });
    const probes: [number, number][] = [
      [38, -100],
      [40.5, -95],
      [36.5, -102],
      [41.5, -93.5],
      [39.2, -97.7],
      [37.3, -96.1],
      [30, -80],
    ];
    // Each probe's tile, pixel, and the pixel centre's latitude/longitude.
    const world = 256 * 2 ** z;
    const px = probes.map(([lat, lon]) => {
      const wx = ((lon + 180) / 360) * world;
      const wy = ((1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2) * world;
      const [x, y, c, r] = [Math.floor(wx / 256), Math.floor(wy / 256), Math.floor(wx) % 256, Math.floor(wy) % 256];
      return { x, y, c, r, at: [pixelLat(z, y, r), pixelLon(z, x, c)] };
    });
    const ref = reference("xwrf", { proj: true, lead: 2, positions: px.map((p) => p.at) });
    const palette = buildPalette(registry.lookup("tp")!.style!);
    const axis = (f: number[]) => onAxis(palette, Float64Array.from(f));
    const tp = axis(ref.field_tp!);
    const rainc = axis(ref.field_rainc!);
    // The colours a value may show: its class and what a hair of interpolation either side gives.
    const colours = (t: number) =>
      [t - 0.05, t, t + 0.05].map((u) =>
        Array.from(palette.rgba.subarray(palette.axisLut(u) * 4, palette.axisLut(u) * 4 + 4)).join(),
      );
    const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
    const tiles = catalog.layers.find((l: { id: string }) => l.id === "xwrf.tp").runs[0].leads[0].tiles as string;
    let inside = 0;
    let apart = 0;
    for (const [k, p] of px.entries()) {
      const file = join(
        out,
        "current",
        tiles.replace("{z}", String(z)).replace("{x}", String(p.x)).replace("{y}", String(p.y)),
      );
      const img = existsSync(file) ? await decodeRgba(readFileSync(file)) : undefined;
      const got = img
        ? Array.from(img.data.subarray((p.r * 256 + p.c) * 4, (p.r * 256 + p.c) * 4 + 4)).join()
        : "0,0,0,0";
      const [fx, fy] = ref.positions![k];
      const t = bilinearAt(tp, 40, 28, fx, fy);
      if (t === undefined) {
        assert.equal(got.split(",")[3], "0", `pixel at ${probes[k]} off the grid must be transparent`);
        continue;
      }
      assert.ok(colours(t).includes(got), `pixel at ${probes[k]}: ${got} is not the colour of tp ${t}`);
      if (!colours(bilinearAt(rainc, 40, 28, fx, fy)!).includes(got)) apart++;
      inside++;
    }
    assert.ok(inside >= 5, `${inside} probes inside`);
    assert.ok(apart >= 3, `RAINC alone would show another colour at only ${apart} probes`);
  });

  /** An export's values, float32 after the 10-byte preamble and the header. */
  const npyValues = (body: Buffer) => {
    const hlen = body.readUInt16LE(8);
    return Array.from(new Float32Array(body.buffer.slice(body.byteOffset + 10 + hlen, body.byteOffset + body.length)));
  };
  /** Row, column, tile and pixel of a lat/lon at zoom z, and the pixel centre's lat/lon. */
  const pixelOf = (z: number, lat: number, lon: number) => {
    const world = 256 * 2 ** z;
    const wx = ((lon + 180) / 360) * world;
    const wy = ((1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2) * world;
    const [x, y, c, r] = [Math.floor(wx / 256), Math.floor(wy / 256), Math.floor(wx) % 256, Math.floor(wy) % 256];
    return { x, y, c, r, at: [pixelLat(z, y, r), pixelLon(z, x, c)] as [number, number] };
  };

  // Boxes inside the Lambert domain: at its centre, in its south-west where the grid leans, in its north-east.
  const XWRF_BOXES: [number, number, number, number][] = [
    [37, 40, -101, -96],
    [34, 36, -106, -103],
    [41, 43.5, -95, -91],
  ];

  test("xwrf: a lat/lon box exports the window of stored x/y whose cells its outline reaches (pyproj), t2m as xarray's isel of it", async () => {
    const ref = reference("xwrf", { proj: true, boxes: XWRF_BOXES });
    for (const [k, [la0, la1, lo0, lo1]] of XWRF_BOXES.entries()) {
      const want = ref.boxes![k];
      const url =
        `${servers.xwrf.url}/api/export/forecast~xwrf/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2` +
        `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
      const r = await get(url, { "X-API-Key": keys.xwrf });
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.deepEqual(field.window, { y: want.rows, x: want.cols }, `box ${k}`);
      // Every node whose stored XLAT/XLONG lies in the box is in the window.
      assert.ok(want.rows[0] <= want.inside_rows[0] && want.inside_rows[1] < want.rows[1], `box ${k} rows`);
      assert.ok(want.cols[0] <= want.inside_cols[0] && want.inside_cols[1] < want.cols[1], `box ${k} columns`);
      assert.deepEqual(field.dims, ["lead_time", "y", "x"]);
      const [ny, nx] = [want.rows[1] - want.rows[0], want.cols[1] - want.cols[0]];
      assert.deepEqual(field.shape, [3, ny, nx]);
      // The window's axes are the stored x/y it covers, in metres of the WRF globals' Lambert.
      assert.deepEqual([field.x.count, field.y.count], [nx, ny]);
      assert.ok(Math.abs(field.x.first - want.x[0]) < 1e-6 && Math.abs(field.y.first - want.y[0]) < 1e-6);
      assert.ok(Math.abs(field.x.step - (want.x[1] - want.x[0])) < 1e-6);
      assert.ok(Math.abs(field.y.step - (want.y[1] - want.y[0])) < 1e-6);
      assert.equal(field.crs.grid_mapping_name, "lambert_conformal_conic");
      assert.equal(field.units, "K");
      close(npyValues(r.body), want.t2, 1e-3, `exported t2m, box ${k}`);
    }
  });

  test("xwrf: the tp export over a box is xarray's (RAINC + RAINNC) / 1000 over the same window, every lead", async () => {
    const ref = reference("xwrf", { proj: true, boxes: XWRF_BOXES });
    let rains = 0;
    for (const [k, [la0, la1, lo0, lo1]] of XWRF_BOXES.entries()) {
      const want = ref.boxes![k];
      const url =
        `${servers.xwrf.url}/api/export/forecast~xwrf/npy?var=tp&time_index=0&lead_start=0&lead_stop=2` +
        `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
      const r = await get(url, { "X-API-Key": keys.xwrf });
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.deepEqual(field.window, { y: want.rows, x: want.cols }, `box ${k}`);
      assert.equal(field.summed_with, "RAINNC");
      assert.equal(field.units, "m");
      close(npyValues(r.body), want.tp, 1e-7, `exported tp, box ${k}`);
      if (want.tp.some((v) => v > 0.002)) rains++;
    }
    assert.ok(rains >= 2, `it rains in ${rains} of the boxes`);
  });

  test("xwrf: the click value of t2m is xarray's at the node nearest by great circle over XLAT/XLONG", async () => {
    const ref = reference("xwrf", { points: POINTS });
    for (const [k, [lat, lon]] of POINTS.entries()) {
      const want = ref.points[k];
      for (const [lead, i] of [
        [0, 0],
        [3, 1],
        [6, 2],
      ]) {
        const r = await get(`${servers.xwrf.url}/api/forecast/value?layer=xwrf.t2m&lat=${lat}&lon=${lon}&lead=${lead}`);
        assert.equal(r.status, 200, r.body.toString());
        const v = r.json();
        assert.ok(Math.abs(v.grid_lat - want.lat) < 1e-5, `${lat},${lon}: grid_lat ${v.grid_lat} vs ${want.lat}`);
        assert.ok(Math.abs(v.grid_lon - want.lon) < 1e-5, `${lat},${lon}: grid_lon ${v.grid_lon} vs ${want.lon}`);
        assert.ok(Math.abs(v.value - want.t2[i]) < 1e-3, `${lat},${lon} lead ${lead}: ${v.value} vs ${want.t2[i]}`);
      }
    }
  });

  test("rotated: a box exports the rows and columns spanning every stored node inside it, t2m and tp as xarray's isel of them, no CRS claimed", async () => {
    // The grid leans: a lat/lon box's nodes span more rows and columns than lie wholly inside it.
    const boxes: [number, number, number, number][] = [
      [37, 40, -101, -96],
      [34.5, 37, -106, -102],
      [41, 44, -95, -90],
    ];
    const ref = reference("rotated", { node_boxes: boxes });
    for (const [k, [la0, la1, lo0, lo1]] of boxes.entries()) {
      const want = ref.node_boxes![k];
      assert.ok(want.nodes >= 4, `box ${k} holds ${want.nodes} nodes`);
      const [ny, nx] = [want.rows[1] - want.rows[0], want.cols[1] - want.cols[0]];
      for (const [v, values, tol] of [
        ["t2m", want.t2, 1e-3],
        ["tp", want.tp, 1e-7],
      ] as const) {
        const url =
          `${servers.rotated.url}/api/export/forecast~rotated/npy?var=${v}&time_index=0&lead_start=0&lead_stop=2` +
          `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
        const r = await get(url, { "X-API-Key": keys.rotated });
        assert.equal(r.status, 200, r.body.toString());
        const field = JSON.parse(r.headers.get("x-svc-field")!);
        assert.deepEqual(field.window, { y: want.rows, x: want.cols }, `${v} box ${k}`);
        assert.deepEqual(field.shape, [3, ny, nx]);
        // Index space, not a projection: the axes count columns and rows from the window's start.
        assert.equal(field.crs, null);
        assert.deepEqual([field.x.first, field.x.step, field.x.units], [want.cols[0], 1, "index"]);
        assert.deepEqual([field.y.first, field.y.count], [want.rows[0], ny]);
        close(npyValues(r.body), values, tol, `exported ${v}, box ${k}`);
      }
    }
  });

  test("rotated: t2m tiles drawn from the nodes have the colour of xarray's T2 where pyproj's rotated pole puts each pixel", async () => {
    const z = 5;
    const out = join(dir, "tiles-rotated");
    await build({ store: store("rotated"), out, maxZoom: z, vars: ["t2m"], leads: [3], hidpi: false });
    // A lattice of pixels over the grid (about 20 to a cell's width of 0.8 degrees) and the land around it.
    const probes: [number, number][] = [];
    for (let lat = 32; lat <= 46; lat += 0.37) for (let lon = -108; lon <= -88; lon += 0.53) probes.push([lat, lon]);
    const px = probes.map(([lat, lon]) => pixelOf(z, lat, lon));
    const ref = reference("rotated", { rotated: true, lead: 1, positions: px.map((p) => p.at) });
    // The stored nodes lie on the rotated pole's lattice, so its positions are where the nodes put each pixel.
    assert.ok(ref.lattice_worst_cells! < 1e-3, `nodes ${ref.lattice_worst_cells} cells off the lattice`);
    const [ny, nx] = ref.shape!;
    const palette = buildPalette(registry.lookup("t2m")!.style!);
    const t2 = onAxis(palette, Float64Array.from(ref.field_t2!));
    // The colours a value may show: its class (whole degrees), or a neighbour's within a hair of interpolation.
    const colours = (t: number) =>
      [t - 0.05, t, t + 0.05].map((u) =>
        Array.from(palette.rgba.subarray(palette.axisLut(u) * 4, palette.axisLut(u) * 4 + 4)).join(),
      );
    const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
    const tiles = catalog.layers.find((l: { id: string }) => l.id === "rotated.t2m").runs[0].leads[0].tiles as string;
    const images = new Map<string, Awaited<ReturnType<typeof decodeRgba>> | undefined>();
    const wrong: string[] = [];
    let inside = 0;
    let outside = 0;
    for (const [k, p] of px.entries()) {
      const file = join(
        out,
        "current",
        tiles.replace("{z}", String(z)).replace("{x}", String(p.x)).replace("{y}", String(p.y)),
      );
      if (!images.has(file)) images.set(file, existsSync(file) ? await decodeRgba(readFileSync(file)) : undefined);
      const img = images.get(file);
      const got = img
        ? Array.from(img.data.subarray((p.r * 256 + p.c) * 4, (p.r * 256 + p.c) * 4 + 4)).join()
        : "0,0,0,0";
      const [fx, fy] = ref.positions![k];
      const t = bilinearAt(t2, nx, ny, fx, fy);
      if (t === undefined) {
        if (got.split(",")[3] !== "0") wrong.push(`${probes[k]} off the grid is ${got}, not transparent`);
        outside++;
        continue;
      }
      if (!colours(t).includes(got)) wrong.push(`${probes[k]} (${fx.toFixed(2)}, ${fy.toFixed(2)}): ${got}, T2 ${t}`);
      inside++;
    }
    assert.deepEqual(wrong, [], `${wrong.length} of ${probes.length} pixels`);
    assert.ok(inside >= 500 && outside >= 100, `probes inside ${inside}, outside ${outside}`);
  });

  for (const [name, reason] of [
    ["onepart", /^tp refused: WRF's total precipitation is RAINC \+ RAINNC .*RAINNC is not in the group/],
    ["bucket", /^tp refused: .*I_RAINC and I_RAINNC count resets .*bucket_mm/],
  ] as const) {
    test(`${name}: tp is refused by name, RAINC listed with the reason, never served as one part`, async () => {
      const g = (await get(`${servers[name].url}/api/models`)).json().forecast[0];
      assert.ok(!g.variables.includes("tp"), g.variables.join());
      const why = Object.fromEntries(
        g.unregistered.map((u: { stored: string; reason: string }) => [u.stored, u.reason]),
      );
      assert.match(why.RAINC ?? "", reason);
      const r = await get(`${servers[name].url}/point?lat=39&lon=-98&var=tp`, { "X-API-Key": keys[name] });
      assert.equal(r.status, 404, r.body.toString());
      assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
    });
  }
});
