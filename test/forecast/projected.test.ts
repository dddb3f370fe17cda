// Projected and rotated grids, written by the real writers: an HRRR-like Lambert conformal store
// in Zarr v3 (xarray + zarr 3, x/y in metres, 2-D latitude/longitude, spatial_ref with crs_wkt
// and the CF parameters, winds relative to the grid) and a COSMO-like rotated-pole store in Zarr
// v2 (Debian's xarray + zarr 2, rlat/rlon, rotated_latitude_longitude). Every answer is compared
// with what xarray + pyproj compute from the same store (test/forecast/projected/reference.py):
// /point's node (nearest by distance) and values, export windows and values, map pixels at known
// points, wind directions turned to true north, and the CRS-mismatch refusal.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { registry } from "../../src/registry/registry.ts";
import { arrowSites, arrowSpacing } from "../../src/render/arrows.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";
import { bilinearAt, pyprojReference, type Reference } from "./projected/reference.ts";

const execFileAsync = promisify(execFile);
const HERE = join(import.meta.dirname, "projected");
let dir: string;
let venv: string;
const stores = { lcc: "", rot: "" };
const servers: Record<string, TestServer> = {};
const keys: Record<string, string> = {};

function reference(store: keyof typeof stores, req: Record<string, unknown>): Reference {
  const axes = store === "lcc" ? ["x", "y", "latitude", "longitude"] : ["rlon", "rlat", "lat", "lon"];
  const variable = store === "lcc" ? "temperature_2m" : "t_2m";
  return pyprojReference(venv, { store: stores[store], var: variable, axes, ...req });
}

const write = (py: string, ...args: string[]) =>
  execFileSync(py, [join(HERE, "write_stores.py"), ...args], { stdio: ["ignore", "pipe", "ignore"] });

before(async () => {
  venv = requireZarr3Python("projected grids");
  dir = tempDir("gridcast-projected-");
  stores.lcc = join(dir, "hrrr.zarr");
  stores.rot = join(dir, "cosmo.zarr");
  write(venv, "lcc", stores.lcc);
  write(venv, "rotated-coords", join(dir, "rot.npz"));
  write(PYTHON, "rotated", stores.rot, join(dir, "rot.npz"));
  for (const name of ["lcc", "rot"] as const) {
    servers[name] = await testServer(stores[name]);
    keys[name] = await servers[name].key(["weather"]);
  }
});
after(async () => {
  for (const s of Object.values(servers)) await s.close();
  cleanup(dir);
});

const H = (name: string) => ({ "X-API-Key": keys[name] });
const K = 273.15;

describe("/point on projected grids", () => {
  const cases = {
    lcc: {
      group: "forecast/hrrr",
      points: [
        [40, -100],
        [33.3, -112.1],
        [45.52, -84.7],
        [37.77, -97.5],
      ],
      toK: (v: number) => Math.fround(v + K),
    },
    rot: {
      group: "forecast/cosmo",
      points: [
        [50, 10],
        [47.3, 0.2],
        [55.1, 20.7],
        [44.2, 12.9],
      ],
      toK: (v: number) => v,
    },
  } as const;
  for (const name of ["lcc", "rot"] as const) {
    test(`${name}: the node nearest by distance answers, with its own lat/lon and xarray's values`, async () => {
      const c = cases[name];
      const ref = reference(name, { points: c.points });
      for (const [k, [lat, lon]] of c.points.entries()) {
        const r = await get(`${servers[name].url}/point?lat=${lat}&lon=${lon}&var=t2m`, H(name));
        assert.equal(r.status, 200, r.body.toString());
        const p = r.json();
        const want = ref.points[k];
        assert.equal(p.group, c.group);
        assert.ok(
          Math.abs(p.grid_lat - want.lat) < 1e-6,
          `${name} ${lat},${lon}: grid_lat ${p.grid_lat} vs ${want.lat}`,
        );
        assert.ok(
          Math.abs(p.grid_lon - want.lon) < 1e-6,
          `${name} ${lat},${lon}: grid_lon ${p.grid_lon} vs ${want.lon}`,
        );
        assert.equal(p.units, "K");
        p.values.forEach((v: number, i: number) => {
          assert.ok(Math.abs(v - c.toK(want.values[i])) < 1e-3, `${v} vs ${c.toK(want.values[i])}`);
        });
      }
    });
  }

  test("a point outside the projected domain but inside its bounding box is refused (400)", async () => {
    // South-west of the rotated domain's corner: inside its lat/lon bbox, outside its cells.
    const models = (await get(`${servers.rot.url}/api/models`)).json();
    const [west, south] = models.forecast[0].bbox;
    const r = await get(`${servers.rot.url}/point?lat=${south + 0.5}&lon=${west + 0.5}&var=t2m`, H("rot"));
    assert.equal(r.status, 400);
    assert.match(r.json().detail, /outside the coverage/);
    const far = await get(`${servers.lcc.url}/point?lat=10&lon=10&var=t2m`, H("lcc"));
    assert.equal(far.status, 400);
  });
});

describe("export windows", () => {
  const boxes = {
    lcc: [
      [35, 42, -105, -95],
      [28, 31, -116, -110],
    ],
    rot: [
      [45, 50, 5, 12],
      [52, 56, 15, 25],
    ],
  } as const;
  for (const name of ["lcc", "rot"] as const) {
    test(`${name}: a lat/lon box exports the index window covering it, (lead, y, x), as xarray reads it`, async () => {
      const ref = reference(name, { boxes: boxes[name] });
      const id = name === "lcc" ? "forecast~hrrr" : "forecast~cosmo";
      for (const [k, [la0, la1, lo0, lo1]] of boxes[name].entries()) {
        const want = ref.boxes[k];
        const url =
          `${servers[name].url}/api/export/${id}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2` +
          `&lat_min=${la0}&lat_max=${la1}&lon_min=${lo0}&lon_max=${lo1}`;
        const r = await get(url, H(name));
        assert.equal(r.status, 200, r.body.toString());
        const field = JSON.parse(r.headers.get("x-svc-field")!);
        assert.deepEqual(field.dims, ["lead_time", "y", "x"]);
        assert.deepEqual(field.window, { y: want.rows, x: want.cols });
        // Every node whose lat/lon lies in the box is in the window.
        assert.ok(want.rows[0] <= want.inside_rows[0] && want.inside_rows[1] < want.rows[1]);
        assert.ok(want.cols[0] <= want.inside_cols[0] && want.inside_cols[1] < want.cols[1]);
        assert.equal(field.y.count, want.y.length);
        assert.ok(Math.abs(field.y.first - want.y[0]) < 1e-6 && Math.abs(field.x.first - want.x[0]) < 1e-6);
        assert.ok(Math.abs(field.x.step - (want.x[1] - want.x[0])) < 1e-6);
        assert.equal(
          field.crs.grid_mapping_name,
          name === "lcc" ? "lambert_conformal_conic" : "rotated_latitude_longitude",
        );
        const npy = r.body;
        const hlen = npy.readUInt16LE(8);
        const data = new Float32Array(npy.buffer.slice(npy.byteOffset + 10 + hlen, npy.byteOffset + npy.length));
        assert.deepEqual(field.shape, [3, want.rows[1] - want.rows[0], want.cols[1] - want.cols[0]]);
        const toK = name === "lcc" ? (v: number) => Math.fround(v + K) : (v: number) => v;
        assert.equal(data.length, want.field.length);
        for (let i = 0; i < data.length; i++) assert.ok(Math.abs(data[i] - toK(want.field[i])) < 1e-3, `value ${i}`);
      }
    });
  }

  test("x_min..y_max selects in the grid's own units; a box off the grid is 400", async () => {
    const base = `${servers.lcc.url}/api/export/forecast~hrrr/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0`;
    const r = await get(`${base}&x_min=-100000&x_max=100000&y_min=0&y_max=150000`, H("lcc"));
    assert.equal(r.status, 200, r.body.toString());
    const field = JSON.parse(r.headers.get("x-svc-field")!);
    // x nodes every 60 km from -1440 km: -60, 0, 60 (and the cells reaching ±100 km: -120, 120).
    assert.deepEqual([field.x.first, field.x.step, field.x.count], [-120000, 60000, 5]);
    assert.deepEqual([field.y.first, field.y.count], [0, 3]); // 180 km's cell starts at 150 km: left out
    const off = await get(`${base}&lat_min=-40&lat_max=-30&lon_min=10&lon_max=20`, H("lcc"));
    assert.equal(off.status, 400);
  });
});

describe("map tiles of projected grids", () => {
  let tiles: string;
  before(async () => {
    tiles = join(dir, "tiles");
    await build({
      store: stores.lcc,
      out: tiles,
      maxZoom: 5,
      vars: ["t2m", "wind_arrows"],
      leads: [0],
      rootGroupName: "hrrr",
    });
  });

  test("t2m pixels at known points have the colour of xarray's field bilinearly sampled where pyproj puts them", async () => {
    const z = 5;
    const style = registry.lookup("t2m")!.style!;
    const { lut, rgba } = buildPalette(style);
    const field = JSON.parse(
      execFileSync(
        venv,
        [
          "-c",
          "import sys, json, xarray as xr; ds = xr.open_zarr(sys.argv[1], consolidated=False); " +
            "print(json.dumps(ds.temperature_2m.isel(init_time=0, lead_time=0).values.astype(float).ravel().tolist()))",
          stores.lcc,
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
      ),
    ) as number[];
    const nx = 48;
    const ny = 30;
    // Pixels: inside the domain at several places, and just outside its cells.
    const probes: [number, number, number, number][] = [
      [7, 12, 40, 77],
      [7, 12, 200, 30],
      [6, 12, 250, 140],
      [8, 11, 100, 220],
      [5, 13, 10, 10],
    ];
    const lats = probes.map(([x, y, c, r]) => [pixelLat(z, y, r), pixelLon(z, x, c)]);
    const pos = reference("lcc", { positions: lats }).positions;
    let inside = 0;
    let outside = 0;
    for (const [k, [x, y, c, r]] of probes.entries()) {
      const [fx, fy] = pos[k];
      const file = tileFile(tiles, "hrrr.t2m", z, x, y);
      const img = file ? await decodeRgba(readFileSync(file)) : undefined;
      const px = img ? Array.from(img.data.subarray((r * 256 + c) * 4, (r * 256 + c) * 4 + 4)) : [0, 0, 0, 0];
      const v = bilinearAt(field, nx, ny, fx, fy, K);
      if (v === undefined) {
        assert.equal(px[3], 0, `pixel ${z}/${x}/${y} (${c},${r}) off the grid must be transparent`);
        outside++;
        continue;
      }
      const idx = lut(v);
      const near = [idx - 1, idx, idx + 1].map((i) => Array.from(rgba.subarray(i * 4, i * 4 + 4)).join(","));
      assert.ok(near.includes(px.join(",")), `pixel ${z}/${x}/${y} (${c},${r}): ${px} not the colour of ${v}`);
      inside++;
    }
    assert.ok(inside >= 3 && outside >= 1, `probes inside ${inside}, outside ${outside}`);
  });

  test("wind arrows point the true way: grid-relative components turned by the grid's bearing (hand computation)", async () => {
    // The store's wind is (2, 10) m/s along the grid's (+x, +y) everywhere.
    const z = 5;
    // The build's lattice at z 5 (the grid's cells are far finer than 40 px there).
    const spacing = arrowSpacing(40, z, 0);
    // A lattice point far west of the central meridian (near 41° N, 111° W), where grid north leans
    // well off true north.
    const world = 2 ** z * 256;
    const merc = Math.log(Math.tan(Math.PI / 4 + (41 * Math.PI) / 360));
    const near = { x: ((-111 + 180) / 360) * world, y: ((1 - merc / Math.PI) / 2) * world };
    const site = arrowSites(spacing, [near.x - spacing, near.y - spacing, near.x + spacing, near.y + spacing]).sort(
      (a, b) => Math.hypot(a.x - near.x, a.y - near.y) - Math.hypot(b.x - near.x, b.y - near.y),
    )[0];
    const col = site.x;
    const row = site.y;
    const tx = Math.floor(col / 256);
    const ty = Math.floor(row / 256);
    const lat = pixelLat(z, ty, row % 256);
    const lon = pixelLon(z, tx, col % 256);
    const ref = reference("lcc", { positions: [[lat, lon]] });
    const [fx, fy] = ref.positions[0];
    const node: [number, number] = [Math.round(fy), Math.round(fx)];
    const beta = (reference("lcc", { nodes: [node] }).bearings[0] * Math.PI) / 180;
    assert.ok(
      Math.abs(beta) > (5 * Math.PI) / 180,
      `the test point must sit where grid north is off true north (${beta})`,
    );
    const ue = 2 * Math.cos(beta) + 10 * Math.sin(beta);
    const vn = -2 * Math.sin(beta) + 10 * Math.cos(beta);
    // The value route's direction (where the wind comes from) at the same spot.
    const v = (await get(`${servers.lcc.url}/api/forecast/value?layer=hrrr.wind_arrows&lat=${lat}&lon=${lon}`)).json();
    const from = ((Math.atan2(-ue, -vn) * 180) / Math.PI + 360) % 360;
    const diff = Math.abs(((v.direction_deg - from + 540) % 360) - 180);
    assert.ok(diff <= 1.5, `direction ${v.direction_deg} vs hand-computed ${from.toFixed(1)}`);
    // The arrow drawn there: its line pixels' main axis lies along the true direction on screen.
    const file = tileFile(tiles, "hrrr.wind_arrows", z, tx, ty)!;
    const img = await decodeRgba(readFileSync(file));
    const cx = (col % 256) + 0.5;
    const cy = (row % 256) + 0.5;
    let sxx = 0;
    let syy = 0;
    let sxy = 0;
    let ahead = 0;
    const sx = ue / Math.hypot(ue, vn);
    const sy = -vn / Math.hypot(ue, vn);
    for (let r = 0; r < 256; r++) {
      for (let c = 0; c < 256; c++) {
        const dx = c + 0.5 - cx;
        const dy = r + 0.5 - cy;
        if (dx * dx + dy * dy > 15 * 15) continue;
        const k = (r * 256 + c) * 4;
        // The arrow's dark core (the halo is light, its anti-aliased rim faint).
        if (!(img.data[k + 3] >= 200 && img.data[k] < 100)) continue;
        sxx += dx * dx;
        syy += dy * dy;
        sxy += dx * dy;
        // Pixels off the shaft belong to the head, which is at the downwind end.
        if (Math.abs(dx * sy - dy * sx) >= 1.5) ahead += Math.sign(dx * sx + dy * sy);
      }
    }
    const axis = 0.5 * Math.atan2(2 * sxy, sxx - syy);
    const want = Math.atan2(sy, sx);
    const off = Math.abs(((((((axis - want) * 180) / Math.PI + 90) % 180) + 180) % 180) - 90);
    assert.ok(
      off <= 4,
      `arrow axis ${((axis * 180) / Math.PI).toFixed(1)}° vs ${((want * 180) / Math.PI).toFixed(1)}°`,
    );
    assert.ok(ahead > 0, "the arrow head lies downwind");
  });
});

describe("/data republishes projected grids with their CF grid mapping", () => {
  // Asynchronous: the server answering the client lives in this process.
  const check = async (py: string, name: "lcc" | "rot", stored: string) =>
    JSON.parse(
      (
        await execFileAsync(
          py,
          [
            join(HERE, "data_check.py"),
            `${servers[name].url}/data/datasets/${name === "lcc" ? "forecast~hrrr" : "forecast~cosmo"}/zarr/`,
            keys[name],
            stores[name],
            "t2m",
            stored,
          ],
          { encoding: "utf8" },
        )
      ).stdout,
    );

  test("HRRR-like (xarray + zarr 3): t2m(y, x) with grid_mapping spatial_ref, whose CRS pyproj reads back equal", async () => {
    const r = await check(venv, "lcc", "temperature_2m");
    assert.deepEqual(r.dims, ["time", "lead_time", "y", "x"]);
    assert.equal(r.grid_mapping, "spatial_ref");
    assert.equal(r.mapping_attrs.grid_mapping_name, "lambert_conformal_conic");
    assert.match(r.mapping_attrs.crs_wkt, /^PROJCRS/);
    assert.equal(r.crs_equal, true);
    assert.deepEqual(r.lat_dims, ["y", "x"]);
    assert.equal(r.north_up, true, "a south-to-north store is published north-up");
    assert.ok(r.lat_equal && r.x_equal && r.y_equal && r.values_equal, JSON.stringify(r));
  });

  test("rotated pole (Debian xarray + zarr 2 reading the v2 view): rotated_latitude_longitude and 2-D lat/lon", async () => {
    const r = await check(PYTHON, "rot", "t_2m");
    assert.deepEqual(r.dims, ["time", "lead_time", "y", "x"]);
    assert.equal(r.mapping_attrs.grid_mapping_name, "rotated_latitude_longitude");
    assert.equal(r.mapping_attrs.grid_north_pole_latitude, 40);
    assert.equal(r.north_up, true, "a south-to-north store is published north-up");
    assert.ok(r.lat_equal && r.x_equal && r.y_equal && r.values_equal, JSON.stringify(r));
  });
});

describe("a projected patch over a global group", () => {
  let srv: TestServer;
  let key: string;
  before(async () => {
    const store = join(dir, "patched");
    write(venv, "lcc", store, "patch");
    srv = await testServer(store, { default_forecast_group: "forecast/global" });
    key = await srv.key(["weather"]);
  });
  after(() => srv?.close());

  test("the patch answers where its cells cover the point, the global group just outside them (not by bbox)", async () => {
    const at = async (lat: number, lon: number) =>
      (await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, { "X-API-Key": key })).json();
    const inside = await at(40, -100);
    assert.equal(inside.group, "forecast/hrrr");
    assert.equal(inside.source, "regional");
    // The domain's south-west: inside its lat/lon bounding box, outside its cells.
    const bbox = (await get(`${srv.url}/api/models`))
      .json()
      .forecast.find((g: { id: string }) => g.id === "forecast/hrrr").bbox;
    const pos = reference("lcc", { positions: [[bbox[1] + 0.3, bbox[0] + 0.3]] }).positions[0];
    assert.ok(pos[0] < -0.5 || pos[1] < -0.5, "the probe lies outside the patch's cells");
    const outside = await at(bbox[1] + 0.3, bbox[0] + 0.3);
    assert.equal(outside.group, "forecast/global");
    assert.deepEqual(outside.values, [250, 250, 250]);
  });

  test("models and export catalogue describe the projected grid and its geographic bounds", async () => {
    const models = (await get(`${srv.url}/api/models`)).json();
    const g = models.forecast.find((e: { id: string }) => e.id === "forecast/hrrr");
    assert.equal(g.kind, "regional");
    assert.equal(g.grid.kind, "projected");
    assert.equal(g.grid.grid_mapping_name, "lambert_conformal_conic");
    assert.deepEqual([g.grid.x.first, g.grid.x.step, g.grid.x.count], [-1440000, 60000, 48]);
    const want = reference("lcc", { bounds: true }).bounds;
    g.bbox.forEach((v: number, i: number) => {
      assert.ok(Math.abs(v - want[i]) < 0.01, `bbox ${g.bbox} vs ${want}`);
    });
    const exp = (await get(`${srv.url}/api/export`, { "X-API-Key": key })).json();
    const e = exp.groups.find((x: { group: string }) => x.group === "forecast/hrrr");
    assert.deepEqual(e.fields.find((f: { name: string }) => f.name === "t2m").dims, ["time", "lead_time", "y", "x"]);
    assert.equal(e.coordinates.y.count, 30);
  });
});

describe("refused grids", () => {
  test("a grid mapping that disagrees with the stored latitude/longitude is refused, naming it (503)", async () => {
    const store = join(dir, "wrong.zarr");
    cpSync(stores.lcc, store, { recursive: true });
    write(venv, "wrong-crs", store);
    const srv = await testServer(store);
    try {
      const key = await srv.key(["weather"]);
      const r = await get(`${srv.url}/point?lat=40&lon=-100&var=t2m`, { "X-API-Key": key });
      assert.equal(r.status, 503);
      const models = (await get(`${srv.url}/api/models`)).json();
      assert.equal(models.forecast.length, 0);
      assert.match(models.unavailable[0].reason, /CRS of grid mapping spatial_ref .* cells from the stored latitude/);
    } finally {
      await srv.close();
    }
  });

  test("a curvilinear grid without a CRS (2-D lat/lon only) is served from its nodes (curvilinear.test.ts has the rest)", async () => {
    const store = join(dir, "curvi.zarr");
    write(PYTHON, "curvilinear", store);
    const srv = await testServer(store);
    try {
      const models = (await get(`${srv.url}/api/models`)).json();
      assert.deepEqual(models.unavailable, []);
      assert.equal(models.forecast[0].grid.kind, "curvilinear");
      assert.deepEqual([models.forecast[0].grid.rows, models.forecast[0].grid.columns], [12, 15]);
    } finally {
      await srv.close();
    }
  });
});

/** The z/x/y file of a layer's only run and lead in a build, or undefined where no tile was written. */
function tileFile(out: string, layer: string, z: number, x: number, y: number): string | undefined {
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const l = catalog.layers.find((e: { id: string }) => e.id === layer);
  const rel = l.runs[0].leads[0].tiles.replace("{z}", z).replace("{x}", x).replace("{y}", y);
  const path = join(out, "current", rel);
  try {
    readFileSync(path);
    return path;
  } catch {
    return undefined;
  }
}
