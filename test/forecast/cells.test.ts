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
let dir = "";
const servers: Record<string, TestServer> = {};
const keys: Record<string, string> = {};

interface Tie {
  lat: number;
  lon: number;
  values: number[];
}
interface RefPoint extends Tie {
  cell: number;
  dist: number;
  ties: Tie[];
}
interface Ref {
  n: number;
  points?: RefPoint[];
  lat?: number[];
  lon?: number[];
  values?: number[];
  /** Per lead, lat, lon: the values of every cell tied for nearest. */
  grid?: number[][][][];
}

const stores = (name: string) => join(dir, `${name}.zarr`);

/** Everything the tests compare with, asked of xarray + numpy in one call once the answers are in. */
const asked: Record<string, unknown>[] = [];
const refs: Ref[] = [];
function ask(req: Record<string, unknown>): () => Ref {
  const k = asked.push(req) - 1;
  return () => refs[k];
}

/** The answer matches one of the cells tied for nearest: its centre and its values. */
function matchesTie(
  got: { grid_lat: number; grid_lon: number; values: number[] },
  want: RefPoint,
  values: (t: Tie) => number[],
) {
  const tie = want.ties.find((t) => Math.abs(t.lat - got.grid_lat) < 1e-6 && Math.abs(t.lon - got.grid_lon) < 1e-6);
  assert.ok(
    tie,
    `cell ${got.grid_lat},${got.grid_lon} is not nearest (${JSON.stringify(want.ties.map((t) => [t.lat, t.lon]))})`,
  );
  const series = values(tie);
  assert.equal(got.values.length, series.length);
  for (const [i, v] of got.values.entries()) assert.ok(Math.abs(v - series[i]) < 1e-3, `${v} vs ${series[i]}`);
}

/** Work each describe block needs done before the one reference call (builds, exports). */
const preparations: (() => Promise<void>)[] = [];

before(async () => {
  dir = tempDir("gridcast-cells-");
  execFileSync(PYTHON, [SCRIPT, "write", dir], { stdio: ["ignore", "pipe", "inherit"] });
  for (const name of ["cells", "anemoi", "icon-d2"]) {
    servers[name] = await testServer(stores(name));
    keys[name] = await servers[name].key(["weather"]);
  }
  for (const prepare of preparations) await prepare();
  // Store paths are known only now (the temp dir): requests name them under STORES.
  const resolved = asked.map((r) => ({ ...r, store: join(dir, `${String(r.store).slice("STORES/".length)}`) }));
  refs.push(...(await pythonJson<Ref[]>(PYTHON, SCRIPT, ["ref"], resolved)));
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
    const ref = ask({ store: `STORES/${c.store}.zarr`, group: c.path, var: c.stored, points: POINTS });
    test(`${name}: /point answers the nearest cell by great-circle distance, its centre and xarray's values`, async () => {
      const srv = servers[c.store];
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const r = await get(`${srv.url}/point?lat=${lat}&lon=${lon}&var=t2m&group=${c.group}`, {
          "X-API-Key": keys[c.store],
        });
        assert.equal(r.status, 200, r.body.toString());
        // anemoi-datasets holds analyses: each date is a run of its own, the latest one answers.
        matchesTie(r.json(), ref().points![k], (t) => (name === "anemoi" ? t.values.slice(-1) : t.values));
      }
    });
  }

  for (const [name, c] of Object.entries(LAYOUTS)) {
    const ref = ask({ store: `STORES/${c.store}.zarr`, group: c.path, var: c.stored, points: POINTS });
    test(`${name}: the click value reads the same cell as /point`, async () => {
      // anemoi-datasets: one lead (0) of the latest date; the others: lead 6 of the run.
      const lead = name === "anemoi" ? 0 : 6;
      for (const [k, [lat, lon]] of POINTS.entries()) {
        const layer = `${c.group.slice("forecast/".length)}.t2m`;
        const r = await get(
          `${servers[c.store].url}/api/forecast/value?layer=${layer}&lat=${lat}&lon=${lon}&lead=${lead}`,
        );
        assert.equal(r.status, 200, r.body.toString());
        const v = r.json();
        matchesTie({ grid_lat: v.grid_lat, grid_lon: v.grid_lon, values: [v.value] }, ref().points![k], (t) => [
          name === "anemoi" ? t.values[t.values.length - 1] : t.values[1],
        ]);
      }
    });
  }

  const d2 = ask({ store: "STORES/icon-d2.zarr", var: "t_2m", points: [[50.1, 8.7]] });
  test("a point outside a regional unstructured domain is refused (400), one inside answers", async () => {
    const srv = servers["icon-d2"];
    const H = { "X-API-Key": keys["icon-d2"] };
    const inside = await get(`${srv.url}/point?lat=50.1&lon=8.7&var=t2m`, H);
    assert.equal(inside.status, 200, inside.body.toString());
    matchesTie(inside.json(), d2().points![0], (t) => t.values);
    // North of the patch inside its bounding box's reach, and far outside.
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

interface ExportField {
  cells: { resampled: string; step_deg: number };
  lat: { first: number; step: number; count: number };
  lon: { first: number; step: number; count: number };
}

describe("export of a box from unstructured grids", () => {
  // Across the antimeridian, as a box with lon_min > lon_max.
  const Q = "var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=-31&lat_max=-15&lon_min=170&lon_max=-172";
  for (const [name, c] of Object.entries(LAYOUTS)) {
    const got: { field?: ExportField; lats: number[]; lons: number[]; npy?: ReturnType<typeof parseNpy> } = {
      lats: [],
      lons: [],
    };
    const grid: [number[], number[]] = [got.lats, got.lons];
    const ref = ask({ store: `STORES/${c.store}.zarr`, group: c.path, var: c.stored, grid });
    preparations.push(async () => {
      const r = await get(`${servers[c.store].url}/api/export/${c.group.replace("/", "~")}/npy?${Q}`, {
        "X-API-Key": keys[c.store],
      });
      assert.equal(r.status, 200, r.body.toString());
      const field = JSON.parse(r.headers.get("x-svc-field")!);
      got.field = field;
      got.npy = parseNpy(r.body);
      const step = field.cells.step_deg;
      for (let i = 0; i < field.lat.count; i++) got.lats.push(field.lat.first + i * step);
      for (let i = 0; i < field.lon.count; i++) got.lons.push(field.lon.first + i * step);
    });
    test(`${name}: a regular grid at the cells' step, each node its nearest cell's value`, () => {
      const { field, lats, lons, npy } = got;
      assert.equal(field!.cells.resampled, "nearest cell");
      assert.equal(field!.lat.step, field!.cells.step_deg);
      assert.ok(lats[0] >= -31 && lats.at(-1)! <= -15 && lons[0] >= 170 && lons.at(-1)! <= 188, JSON.stringify(field));
      assert.deepEqual(npy!.shape, [1, lats.length, lons.length]);
      const want = ref().grid!;
      // time_index 0: the first run (for anemoi-datasets, the first date), its first lead.
      const lead = 0;
      for (let i = 0; i < lats.length; i++) {
        for (let j = 0; j < lons.length; j++) {
          const v = npy!.data[i * lons.length + j];
          const tied = want[lead][i][j];
          assert.ok(
            tied.some((w) => Math.abs(v - w) < 1e-3),
            `${name} ${lats[i]},${lons[j]}: ${v} vs ${tied}`,
          );
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

describe("map tiles of unstructured grids", () => {
  // Zoom 2 keeps the builds small; the tables are the same at every zoom (resample-cells.test.ts).
  const Z = 2;
  // Pixels (tile x, tile y, column, row) at zoom Z: Europe, the tropics, the seam, the far south.
  const PROBES: [number, number, number, number][] = [
    [2, 1, 30, 150],
    [2, 2, 13, 20],
    [3, 2, 200, 128],
    [3, 1, 255, 3],
    [0, 2, 0, 64],
    [1, 3, 77, 100],
  ];
  const outs: Record<string, string> = {};
  preparations.push(async () => {
    for (const name of ["cells", "anemoi", "icon-d2"]) {
      outs[name] = join(dir, `tiles-${name}`);
      // Each store's own layers (a build refuses a layer no group has).
      const vars = { cells: ["t2m", "isobars"], anemoi: ["t2m", "isobars", "wind_arrows"], "icon-d2": ["t2m"] }[name];
      await build({ store: stores(name), out: outs[name], maxZoom: Z, vars });
    }
  });

  for (const [name, c] of Object.entries(LAYOUTS)) {
    const points = PROBES.map(([x, y, col, row]) => [pixelLat(Z, y, row), pixelLon(Z, x, col)]);
    const ref = ask({ store: `STORES/${c.store}.zarr`, group: c.path, var: c.stored, points });
    test(`${name}: a pixel has the colour of its nearest cell's value`, async () => {
      const { lut, rgba } = buildPalette(registry.lookup("t2m")!.style!);
      const layer = `${c.group.slice("forecast/".length)}.t2m`;
      const colour = (i: number) => Array.from(rgba.subarray(i * 4, i * 4 + 4)).join(",");
      for (const [k, [x, y, col, row]] of PROBES.entries()) {
        const file = tileFile(outs[c.store], layer, Z, x, y);
        assert.ok(file, `${layer} ${Z}/${x}/${y} written`);
        const img = await decodeRgba(readFileSync(file));
        const px = Array.from(img.data.subarray((row * 256 + col) * 4, (row * 256 + col) * 4 + 4)).join(",");
        const colours = ref().points![k].ties.map((t) =>
          colour(lut(t.values[name === "anemoi" ? t.values.length - 1 : 0])),
        );
        assert.ok(colours.includes(px), `${name} pixel ${Z}/${x}/${y} (${col},${row}): ${px} vs ${colours}`);
      }
    });
  }

  test("isobars and wind arrows are drawn on cells; a regional grid's tiles are transparent away from its cells", async () => {
    const catalog = JSON.parse(readFileSync(join(outs.cells, "current", "catalog.json"), "utf8"));
    const ids = catalog.layers.map((l: { id: string }) => l.id);
    for (const id of ["icon.isobars", "octa.isobars"]) assert.ok(ids.includes(id), `${id} in ${ids}`);
    const arrows = JSON.parse(readFileSync(join(outs.anemoi, "current", "catalog.json"), "utf8"));
    assert.ok(arrows.layers.some((l: { id: string }) => l.id === "anemoi.wind_arrows"));
    // An isobar tile over the mid-latitudes holds drawn (opaque) pixels; so does an arrow tile.
    const isobars = await decodeRgba(readFileSync(tileFile(outs.cells, "octa.isobars", Z, 2, 1)!));
    assert.ok(
      isobars.data.some((v, i) => i % 4 === 3 && v > 200),
      "isobar lines drawn",
    );
    const wind = await decodeRgba(readFileSync(tileFile(outs.anemoi, "anemoi.wind_arrows", Z, 2, 1)!));
    assert.ok(
      wind.data.some((v, i) => i % 4 === 3 && v > 200),
      "arrows drawn",
    );
    // ICON-D2-like patch: written only around central Europe; a pixel far from its cells is clear.
    assert.equal(tileFile(outs["icon-d2"], "icon-d2.t2m", Z, 0, 0), undefined);
    const edge = await decodeRgba(readFileSync(tileFile(outs["icon-d2"], "icon-d2.t2m", Z, 2, 1)!));
    // In tile 2/2/1 (0..90° E): column 8 lies at 2.8° E inside the patch (0..17° E), column 64 at
    // 22.5° E east of it; the row nearest 50° N.
    let row = 0;
    for (let r = 0; r < 256; r++) if (Math.abs(pixelLat(Z, 1, r) - 50) < Math.abs(pixelLat(Z, 1, row) - 50)) row = r;
    assert.equal(edge.data[(row * 256 + 64) * 4 + 3], 0, "east of the patch: transparent");
    assert.equal(edge.data[(row * 256 + 8) * 4 + 3], 255, "inside the patch: opaque");
  });
});

/** The file of tile z/x/y of a layer's latest run and first lead in a build, undefined when not written. */
function tileFile(out: string, layer: string, z: number, x: number, y: number): string | undefined {
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const l = catalog.layers.find((e: { id: string }) => e.id === layer);
  assert.ok(l, `layer ${layer} in the catalog`);
  const path = join(out, "current", l.runs.at(-1).leads[0].tiles.replace("{z}", z).replace("{x}", x).replace("{y}", y));
  return existsSync(path) ? path : undefined;
}
