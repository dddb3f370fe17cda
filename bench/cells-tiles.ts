// Tile cost of an octahedral reduced Gaussian grid against a regular lat/lon grid of about the same
// number of points, in one run on one core. The cells are an O320 as ECMWF's IFS writes it: 640
// Gaussian latitudes, row i from either pole holding 4i + 16 points (421,120 in all); the peer is
// a global 918 × 459 regular grid (421,362 nodes, 0.39°, what a 0.25° grid is over 40 % of the
// globe). Both render every tile of z0..maxZoom (sample + PNG encode, as a build does) for several
// leads of a synthetic field. The cells' sampler solves its per-tile nearest-cell tables on the
// first lead (and the spatial index with it) and reuses them after; that first lead is counted in
// the build's cost. Times are this process's CPU time (user + system), so other work on a shared
// machine does not land in either side of the ratio.
//   node bench/cells-tiles.ts [maxZoom=6] [leads=4] [N=320]
// CELLS_SEARCH_ONLY=1 solves the tables as before the walk (a search of the index per pixel the
// corners of a block do not settle), for a before/after in one tree.
import { buildPalette } from "../src/render/colormap.ts";
import { encodeIndexedPng } from "../src/render/png.ts";
import { createLevelSampler, type LevelSampler, type Resample } from "../src/render/resample.ts";
import { createCellSampler } from "../src/render/resample-cells.ts";
import { TILE_SIZE } from "../src/render/tiles.ts";
import { cellGridOf } from "../src/store/cell-grid.ts";
import type { CellAxes } from "../src/store/cell-layouts.ts";

const maxZoom = Number(process.argv[2] ?? 6);
const leads = Number(process.argv[3] ?? 4);
const N = Number(process.argv[4] ?? 320);

/** CPU milliseconds of this process so far. */
function now(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** The 2N Gaussian latitudes (degrees, north to south): the roots of the Legendre polynomial P_2N. */
function gaussianLatitudes(n2: number): Float64Array {
  const out = new Float64Array(n2);
  for (let k = 0; k < n2; k++) {
    let x = Math.cos((Math.PI * (k + 0.75)) / (n2 + 0.5));
    for (let it = 0; it < 100; it++) {
      let p0 = 1;
      let p1 = x;
      for (let l = 2; l <= n2; l++) {
        const p2 = ((2 * l - 1) * x * p1 - (l - 1) * p0) / l;
        p0 = p1;
        p1 = p2;
      }
      const dp = (n2 * (x * p1 - p0)) / (x * x - 1);
      const dx = p1 / dp;
      x -= dx;
      if (Math.abs(dx) < 1e-15) break;
    }
    out[k] = (Math.asin(x) * 180) / Math.PI;
  }
  return out;
}

function octahedral(n: number): { lat: Float64Array; lon: Float64Array } {
  const rows = gaussianLatitudes(2 * n);
  const lat: number[] = [];
  const lon: number[] = [];
  for (let r = 0; r < 2 * n; r++) {
    const i = r < n ? r + 1 : 2 * n - r;
    const m = 4 * i + 16;
    for (let j = 0; j < m; j++) {
      lat.push(rows[r]);
      lon.push((j * 360) / m);
    }
  }
  return { lat: Float64Array.from(lat), lon: Float64Array.from(lon) };
}

const smooth = (lat: number, lon: number, lead: number, noise: number) =>
  285 + 20 * Math.cos((lat * Math.PI) / 180) * Math.sin((lon * Math.PI) / 90 + lead) + noise;

function noise(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

const o = octahedral(N);
const NLON = 918;
const NLAT = 459;
const gLat = Float64Array.from({ length: NLAT }, (_, j) => -90 + ((j + 0.5) * 180) / NLAT);
const gLon = Float64Array.from({ length: NLON }, (_, i) => -180 + ((i + 0.5) * 360) / NLON);

// The cells as a group would hold them: centres through cellGridOf, as the store reads them. The
// stand-in's readValues gives what the store's does (store/array.ts: a Float64Array the decoded
// chunks are copied into); decoding the two 3.4 MB coordinate chunks themselves, a few
// milliseconds, is not counted.
const stored = (values: Float64Array) =>
  ({
    array: { shape: [values.length], readValues: async () => values.slice(), packing: { scale: 1, offset: 0 } },
    toDegrees: 1,
  }) as never;
const axes = {
  layout: "reduced_gaussian",
  dim: "values",
  lat: { name: "latitude", ...(stored(o.lat) as object) },
  lon: { name: "longitude", ...(stored(o.lon) as object) },
  auxiliary: [],
} as unknown as CellAxes;

const palette = buildPalette({ colormap: "thermal", min: 233.15, max: 313.15 } as never);

type Levels = { sampler: LevelSampler; tiles: [number, number][] }[];

function levels(make: (z: number) => LevelSampler): Levels {
  const out: Levels = [];
  for (let z = 0; z <= maxZoom; z++) {
    const sampler = make(z);
    const tiles: [number, number][] = [];
    for (let x = 0; x < 2 ** z; x++) for (let y = 0; y < 2 ** z; y++) if (sampler.covers(x, y)) tiles.push([x, y]);
    out.push({ sampler, tiles });
  }
  return out;
}

function renderLead(ls: Levels, f: Float32Array, method: Resample): number {
  const out = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const t0 = now();
  for (const { sampler, tiles } of ls) {
    for (const [x, y] of tiles) {
      sampler.renderTile(x, y, f, palette, out, method);
      encodeIndexedPng(out, TILE_SIZE, TILE_SIZE, palette.rgba);
    }
  }
  return now() - t0;
}

const cellFields = Array.from({ length: leads }, (_, l) => {
  const r = noise(7 + l);
  return Float32Array.from(o.lat, (f, k) => smooth(f, o.lon[k], l, r()));
});
const gridFields = Array.from({ length: leads }, (_, l) => {
  const r = noise(7 + l);
  const f = new Float32Array(NLAT * NLON);
  for (let j = 0; j < NLAT; j++) for (let i = 0; i < NLON; i++) f[j * NLON + i] = smooth(gLat[j], gLon[i], l, r());
  return f;
});

// The cells: geometry (centres, spacing, globality: what opening the group costs), coverage,
// then each lead; the first lead solves the tables.
const c0 = now();
const geo = await cellGridOf(axes);
const index = geo.cells.index();
const geoMs = now() - c0;
if (!process.env.CELLS_SEARCH_ONLY) index.neighbourhood();
const nbrMs = now() - c0 - geoMs;
const cellLevels = levels((z) =>
  createCellSampler(
    {
      n: geo.cells.n,
      bbox: geo.bbox,
      global: geo.global,
      nearest: (lat, lon) => index.nearest(lat, lon).cell,
      ...(process.env.CELLS_SEARCH_ONLY ? {} : { index, reach: Number.POSITIVE_INFINITY }),
    },
    z,
  ),
);
const cellSetup = now() - c0;
const g0 = now();
const gridLevels = levels((z) => createLevelSampler({ lat: gLat, lon: gLon }, z));
const gridSetup = now() - g0;
const tiles = cellLevels.reduce((a, l) => a + l.tiles.length, 0);
console.log(
  `O${N}: ${geo.cells.n} cells (global ${geo.global}, spacing ${geo.spacingDeg}°) vs regular ${NLAT}×${NLON} = ${NLAT * NLON}; ` +
    `z0..${maxZoom}: ${tiles} tiles each; ${leads} leads; setup ${cellSetup.toFixed(0)} (geometry ${geoMs.toFixed(0)}, neighbourhoods ${nbrMs.toFixed(0)}) vs ${gridSetup.toFixed(0)} ms`,
);
// Cells are drawn nearest whatever the layer's resampling; the regular grid is drawn both ways
// (continuous layers such as t2m default to bilinear). Leads alternate between the two grids.
const cellFirst = renderLead(cellLevels, cellFields[0], "nearest");
let cellSteady = 0;
const gridMs: Record<string, number> = { nearest: 0, bilinear: 0 };
for (let l = 0; l < leads; l++) {
  if (l > 0) cellSteady += renderLead(cellLevels, cellFields[l], "nearest");
  for (const m of ["nearest", "bilinear"] as Resample[]) gridMs[m] += renderLead(gridLevels, gridFields[l], m);
}
const perLead = leads > 1 ? cellSteady / (leads - 1) : cellFirst;
const cellBuild = cellSetup + cellFirst + cellSteady;
console.log(
  `cells: setup ${cellSetup.toFixed(0)} ms, first lead (solves the tables) ${cellFirst.toFixed(0)} ms, ` +
    `later leads ${perLead.toFixed(0)} ms each; build of ${leads} leads ${cellBuild.toFixed(0)} ms`,
);
for (const m of ["nearest", "bilinear"]) {
  const g = gridMs[m] / leads;
  // Leads after which the cells' one-off work (setup and tables) is paid down to 1.5× the regular build.
  const oneOff = cellSetup + cellFirst - perLead;
  const even = 1.5 * g > perLead ? Math.ceil(oneOff / (1.5 * g - perLead)) : Number.POSITIVE_INFINITY;
  console.log(
    `regular ${m}: ${g.toFixed(0)} ms a lead; build of ${leads} leads ${(gridSetup + gridMs[m]).toFixed(0)} ms; ` +
      `cost ratio cells/regular ${(cellBuild / (gridSetup + gridMs[m])).toFixed(2)} (target ≤ 1.5), ` +
      `later leads alone ${(perLead / g).toFixed(2)}; ≤ 1.5 from ${even} leads (or leads × layers) on`,
  );
}
