// Unstructured and reduced grids, written by Debian's xarray as the producers lay them out
// (test/forecast/cells/stores.py): ICON's clat/clon in radians over the triangles of a subdivided
// icosahedron, an octahedral reduced Gaussian O32 with its real rows (4i + 16 points), an
// anemoi-datasets dataset (data(dates, variables, ensemble, cells)), a nested HEALPix grid with
// only its grid mapping, and a regional ICON patch. Every answer is compared with the nearest cell
// by great-circle distance that numpy finds by brute force over xarray's reading of the store.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { registry } from "../../src/registry/registry.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { cleanup, get, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { pythonJson } from "../helpers/python-json.ts";
import { build } from "../pipeline/build-fixture.ts";
import { decodeRgba } from "../render/decode.ts";

const SCRIPT = join(import.meta.dirname, "cells", "stores.py");
let dir: string;
const servers: Record<string, TestServer> = {};
const keys: Record<string, string> = {};

interface RefPoint {
  cell: number;
  lat: number;
  lon: number;
  dist: number;
  values: number[];
}
interface Ref {
  n: number;
  points?: RefPoint[];
  grid?: number[][][];
}

const stores = (name: string) => join(dir, `${name}.zarr`);
const reference = (req: Record<string, unknown>) => pythonJson<Ref>(PYTHON, SCRIPT, ["ref"], req);

before(async () => {
  dir = tempDir("gridcast-cells-");
  execFileSync(PYTHON, [SCRIPT, "write", dir], { stdio: ["ignore", "pipe", "inherit"] });
  for (const name of ["cells", "anemoi", "icon-d2"]) {
    servers[name] = await testServer(stores(name));
    keys[name] = await servers[name].key(["weather"]);
  }
});
after(async () => {
  for (const s of Object.values(servers)) await s.close();
  cleanup(dir);
});

/** Each layout: the store, its group, the stored variable, the registry name, and points to ask. */
const LAYOUTS = {
  icon: { store: "cells", group: "forecast/icon", path: "forecast/icon", stored: "t_2m" },
  octa: { store: "cells", group: "forecast/octa", path: "forecast/octa", stored: "t2m" },
  healpix: { store: "cells", group: "forecast/healpix", path: "forecast/healpix", stored: "t2m" },
  anemoi: { store: "anemoi", group: "forecast/anemoi", path: undefined, stored: "2t" },
} as const;

// Points everywhere: the poles, the seam, mid-latitudes, and points between cells.
const POINTS: [number, number][] = [
  [89.99, 10.5],
  [-89.9, 123],
  [0, 179.99],
  [0.3, -179.7],
  [47.37, 8.54],
  [-33.9, 18.4],
  [64.1, -21.9],
  [12.3456, 101.2345],
  [-71.5, -60.2],
  [35, 359.5],
];

describe("/point and value on unstructured grids", () => {
  for (const [name, c] of Object.entries(LAYOUTS)) {
    test(`${name}: /point answers the nearest cell by great-circle distance, its centre and xarray's values`, async () => {
      const ref = await reference({ store: stores(c.store), group: c.path, var: c.stored, points: POINTS });
      const srv = servers[c.store];
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m&group=${c.group}`, {
          "X-API-Key": keys[c.store],
        });
        assert.equal(r.status, 200, r.body.toString());
        const p = r.json();
        const want = ref.points![k];
        assert.ok(
          Math.abs(p.grid_lat - want.lat) < 1e-6,
          `${name} ${lat},${lon}: grid_lat ${p.grid_lat} vs ${want.lat}`,
        );
        assert.ok(
          Math.abs(p.grid_lon - want.lon) < 1e-6,
          `${name} ${lat},${lon}: grid_lon ${p.grid_lon} vs ${want.lon}`,
        );
        // anemoi-datasets holds analyses: each date is a run of its own, the latest one answers.
        const series = name === "anemoi" ? want.values.slice(-1) : want.values;
        assert.equal(p.values.length, series.length);
        for (const [i, v] of (p.values as number[]).entries()) {
          assert.ok(Math.abs(v - series[i]) < 1e-3, `${v} vs ${series[i]}`);
        }
      }
    });
  }

  test("the click value reads the same cell as /point", async () => {
    const ref = await reference({ store: stores("cells"), group: "forecast/octa", var: "t2m", points: POINTS });
    for (const [k, [lat, lon]] of POINTS.entries()) {
      const r = await get(`${servers.cells.url}/api/forecast/value?layer=octa.t2m&lat=${lat}&lon=${lon}&lead=6`);
      assert.equal(r.status, 200, r.body.toString());
      const v = r.json();
      assert.ok(Math.abs(v.grid_lat - ref.points![k].lat) < 1e-6);
      assert.ok(Math.abs(v.value - ref.points![k].values[1]) < 1e-3, `${v.value} vs ${ref.points![k].values[1]}`);
    }
  });

  test("a point outside a regional unstructured domain is refused (400), one inside answers", async () => {
    const srv = servers["icon-d2"];
    const H = { "X-API-Key": keys["icon-d2"] };
    const inside = await get(`${srv.url}/point?lat=50.1&lon=8.7&var=t2m`, H);
    assert.equal(inside.status, 200, inside.body.toString());
    const ref = await reference({ store: stores("icon-d2"), var: "t_2m", points: [[50.1, 8.7]] });
    assert.ok(Math.abs(inside.json().grid_lat - ref.points![0].lat) < 1e-6);
    assert.deepEqual(
      inside.json().values.map((v: number) => Math.round(v * 1e3)),
      ref.points![0].values.map((v) => Math.round(v * 1e3)),
    );
    // Inside the bounding box's corner but well away from every cell, and far outside.
    for (const [lat, lon] of [
      [60, 8],
      [-10, 50],
      [50, 25],
    ]) {
      const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m`, H);
      assert.equal(r.status, 400, `${lat},${lon}: ${r.body.toString()}`);
      assert.match(r.json().detail, /outside the coverage/);
    }
  });
});

describe("recognition of cell axes", () => {
  test("the listing names each layout and its cell count", async () => {
    const models = (await get(`${servers.cells.url}/api/models`)).json();
    const ids = models.forecast.map((g: { id?: string; group?: string }) => g.id ?? g.group);
    for (const g of ["forecast/icon", "forecast/octa", "forecast/healpix"])
      assert.ok(JSON.stringify(ids).includes(g), g);
  });

  test("a cell axis in a layout gridcast does not know is refused by name", async () => {
    const bad = join(dir, "unknown.zarr");
    execFileSync(PYTHON, ["-c", UNKNOWN_CELLS, bad], { stdio: ["ignore", "pipe", "inherit"] });
    const srv = await testServer(bad);
    try {
      const r = await get(`${srv.url}/point?lat=10&lon=10&var=t2m&group=forecast/mesh`, {
        "X-API-Key": await srv.key(["weather"]),
      });
      assert.equal(r.status, 503, r.body.toString());
      assert.match(r.json().detail, /cell axis nod2/);
      assert.doesNotMatch(r.body.toString(), /\/tmp\//);
    } finally {
      await srv.close();
    }
  });
});

// A FESOM-like mesh: per-node lat/lon with nothing saying which grid it is.
const UNKNOWN_CELLS = `
import sys, numpy as np, xarray as xr
n = 500
rng = np.random.default_rng(0)
ds = xr.Dataset({"t2m": (("time", "nod2"), rng.normal(280, 5, (1, n)).astype("float32"), {"units": "K"})},
                coords={"time": np.array(["2025-06-01"], dtype="datetime64[ns]"),
                        "lat": ("nod2", rng.uniform(-80, 80, n)), "lon": ("nod2", rng.uniform(-180, 180, n))})
ds.to_zarr(sys.argv[1], group="forecast/mesh", mode="w")
`;

function parseNpy(buf: Buffer): { shape: number[]; data: Float32Array } {
  const hlen = buf.readUInt16LE(8);
  const header = buf.subarray(10, 10 + hlen).toString("latin1");
  const shape = /'shape': \(([^)]*)\)/
    .exec(header)![1]
    .split(",")
    .filter((s) => s.trim())
    .map(Number);
  return { shape, data: new Float32Array(new Uint8Array(buf.subarray(10 + hlen)).buffer) };
}

describe("export of a box from unstructured grids", () => {
  for (const [name, c] of Object.entries(LAYOUTS)) {
    test(`${name}: a regular grid at the cells' step, each node its nearest cell's value`, async () => {
      const srv = servers[c.store];
      // Across the antimeridian, as a box with lon_min > lon_max.
      const q = "var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=-31&lat_max=-15&lon_min=170&lon_max=-172";
      const r = await get(`${srv.url}/api/export/${c.group.replace("/", "~")}/npy?${q}`, {
        "X-API-Key": keys[c.store],
      });
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      assert.equal(field.cells.resampled, "nearest cell");
      const step = field.cells.step_deg;
      assert.equal(field.lat.step, step);
      const lats = Array.from({ length: field.lat.count }, (_, i) => field.lat.first + i * step);
      const lons = Array.from({ length: field.lon.count }, (_, i) => field.lon.first + i * step);
      assert.ok(lats[0] >= -31 && lats.at(-1)! <= -15 && lons[0] >= 170 && lons.at(-1)! <= 188, JSON.stringify(field));
      const { shape, data } = parseNpy(r.body);
      assert.deepEqual(shape, [1, lats.length, lons.length]);
      const ref = await reference({ store: stores(c.store), group: c.path, var: c.stored, grid: [lats, lons] });
      const lead = name === "anemoi" ? ref.grid!.length - 1 : 0;
      for (let i = 0; i < lats.length; i++) {
        for (let j = 0; j < lons.length; j++) {
          const want = ref.grid![lead][i][j];
          const got = data[i * lons.length + j];
          assert.ok(Math.abs(got - want) < 1e-3, `${name} ${lats[i]},${lons[j]}: ${got} vs ${want}`);
        }
      }
    });
  }

  test("the size limit holds before any cell is located (413)", async () => {
    const srv = await testServer(stores("cells"), { field_export_max_mb: 0.001 } as never);
    try {
      const q = "var=t2m&time_index=0&lead_start=0&lead_stop=2&lat_min=-90&lat_max=90&lon_min=-180&lon_max=180";
      const r = await get(`${srv.url}/api/export/forecast~octa/npy?${q}`, { "X-API-Key": await srv.key(["weather"]) });
      assert.equal(r.status, 413, r.body.toString());
    } finally {
      await srv.close();
    }
  });
});

/** The file of tile z/x/y of a layer's first run and lead in a build, undefined when not written. */
function tileFile(out: string, layer: string, z: number, x: number, y: number): string | undefined {
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const l = catalog.layers.find((e: { id: string }) => e.id === layer);
  assert.ok(l, `layer ${layer} in the catalog`);
  const path = join(out, "current", l.runs.at(-1).leads[0].tiles.replace("{z}", z).replace("{x}", x).replace("{y}", y));
  return existsSync(path) ? path : undefined;
}

describe("map tiles of unstructured grids", () => {
  const Z = 4;
  // Pixels (tile x, tile y, column, row) at zoom Z: Europe, the tropics, the seam, the far south.
  const PROBES: [number, number, number, number][] = [
    [8, 5, 100, 37],
    [8, 5, 13, 201],
    [12, 7, 250, 128],
    [15, 8, 255, 3],
    [0, 9, 0, 64],
    [5, 12, 77, 190],
  ];
  const outs: Record<string, string> = {};
  before(async () => {
    for (const name of ["cells", "anemoi", "icon-d2"]) {
      outs[name] = join(dir, `tiles-${name}`);
      await build({ store: stores(name), out: outs[name], maxZoom: Z, vars: ["t2m", "isobars", "wind_arrows"] });
    }
  });

  for (const [name, c] of Object.entries(LAYOUTS)) {
    test(`${name}: a pixel has the colour of its nearest cell's value`, async () => {
      const { lut, rgba } = buildPalette(registry.lookup("t2m")!.style!);
      const points = PROBES.map(([x, y, col, row]) => [pixelLat(Z, y, row), pixelLon(Z, x, col)]);
      const ref = await reference({ store: stores(c.store), group: c.path, var: c.stored, points });
      const layer = `${c.group.slice("forecast/".length)}.t2m`;
      for (const [k, [x, y, col, row]] of PROBES.entries()) {
        const file = tileFile(outs[c.store], layer, Z, x, y);
        assert.ok(file, `${layer} ${Z}/${x}/${y} written`);
        const img = await decodeRgba(readFileSync(file));
        const px = Array.from(img.data.subarray((row * 256 + col) * 4, (row * 256 + col) * 4 + 4)).join(",");
        const want = ref.points![k].values[name === "anemoi" ? ref.points![k].values.length - 1 : 0];
        const colour = (i: number) => Array.from(rgba.subarray(i * 4, i * 4 + 4)).join(",");
        assert.equal(px, colour(lut(want)), `${name} pixel ${Z}/${x}/${y} (${col},${row}) vs ${want}`);
      }
    });
  }

  test("isobars and wind arrows are drawn on cells; a regional grid's tiles are transparent away from its cells", async () => {
    const catalog = JSON.parse(readFileSync(join(outs.cells, "current", "catalog.json"), "utf8"));
    const ids = catalog.layers.map((l: { id: string }) => l.id);
    for (const id of ["icon.isobars", "octa.isobars"]) assert.ok(ids.includes(id), `${id} in ${ids}`);
    const arrows = JSON.parse(readFileSync(join(outs.anemoi, "current", "catalog.json"), "utf8"));
    assert.ok(arrows.layers.some((l: { id: string }) => l.id === "anemoi.wind_arrows"));
    // An isobar tile over the mid-latitudes holds drawn (opaque) pixels.
    const isobars = await decodeRgba(readFileSync(tileFile(outs.cells, "octa.isobars", 2, 2, 1)!));
    assert.ok(isobars.data.some((v, i) => i % 4 === 3 && v > 200), "isobar lines drawn");
    // ICON-D2-like patch: written only around central Europe; a pixel far from its cells is clear.
    assert.equal(tileFile(outs["icon-d2"], "icon-d2.t2m", Z, 2, 2), undefined);
    const edge = await decodeRgba(readFileSync(tileFile(outs["icon-d2"], "icon-d2.t2m", Z, 8, 5)!));
    // Column 255 of tile 8 sits at 22.5° E, well east of the patch (0..17° E); column 64 at 5.6° E inside it.
    assert.equal(edge.data[(100 * 256 + 255) * 4 + 3], 0, "east of the patch: transparent");
    assert.equal(edge.data[(100 * 256 + 64) * 4 + 3], 255, "inside the patch: opaque");
  });
});
