// Tile cost of a projected grid against a lat/lon grid of the same size, in one run on one core.
// The projected grid is HRRR's Lambert conformal (on its sphere) at 6 km, 450 × 750 nodes over the
// contiguous US; the peer is a regular lat/lon grid with the same node count over the same area.
// Both render the covered tiles of z0..maxZoom (sample + PNG encode, as a build does) for several
// leads of a synthetic field; the projected sampler builds its per-tile lookup tables on the first
// lead and reuses them after. Prints tiles/s and the cost ratio (projected / lat-lon per tile).
// Times are this process's CPU time (user + system), so other work on a shared machine does not
// land in either side of the ratio.
//   node bench/projected-tiles.ts [maxZoom=7] [leads=4]
import { constants, deflateSync } from "node:zlib";
import proj4 from "proj4";
import { nativeAddon } from "../src/native.ts";
import { buildPalette } from "../src/render/colormap.ts";
import { encodeIndexedPng } from "../src/render/png.ts";
import { createLevelSampler, type LevelSampler, type Resample } from "../src/render/resample.ts";
import { createProjectedSampler } from "../src/render/resample-projected.ts";
import { TILE_SIZE } from "../src/render/tiles.ts";

const maxZoom = Number(process.argv[2] ?? 7);
const leads = Number(process.argv[3] ?? 4);
const NX = 750;
const NY = 450;
const STEP = 6000;
const X0 = -2_250_000;
const Y0 = -1_350_000;
const lcc = "+proj=lcc +lat_1=38.5 +lat_2=38.5 +lat_0=38.5 +lon_0=-97.5 +R=6371229 +units=m +no_defs";
const conv = proj4("+proj=longlat +R=6371229 +no_defs", lcc);

/** CPU milliseconds of this process so far. */
function now(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function field(nx: number, ny: number, lead: number): Float32Array {
  const f = new Float32Array(nx * ny);
  let seed = 99 + lead;
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      f[j * nx + i] = 285 + 15 * Math.sin(i / 40 + lead) * Math.cos(j / 30) + (seed / 2 ** 32 - 0.5);
    }
  }
  return f;
}

// The projected domain's geographic bounds, for the lat/lon peer over the same area.
let west = 180;
let east = -180;
let south = 90;
let north = -90;
for (let k = 0; k <= 200; k++) {
  for (const [x, y] of [
    [X0 + (k / 200) * NX * STEP, Y0],
    [X0 + (k / 200) * NX * STEP, Y0 + NY * STEP],
    [X0, Y0 + (k / 200) * NY * STEP],
    [X0 + NX * STEP, Y0 + (k / 200) * NY * STEP],
  ]) {
    const [lon, lat] = conv.inverse([x, y]);
    west = Math.min(west, lon);
    east = Math.max(east, lon);
    south = Math.min(south, lat);
    north = Math.max(north, lat);
  }
}
const projectedSampler = (z: number) =>
  createProjectedSampler(
    {
      nx: NX,
      ny: NY,
      bbox: [west, south, east, north],
      toIndex(lon, lat, out) {
        const [x, y] = conv.forward([lon, lat]);
        out[0] = (x - X0) / STEP;
        out[1] = (y - Y0) / STEP;
      },
    },
    z,
  );
const lat = Float64Array.from({ length: NY }, (_, j) => south + ((j + 0.5) * (north - south)) / NY);
const lon = Float64Array.from({ length: NX }, (_, i) => west + ((i + 0.5) * (east - west)) / NX);
const latlonSampler = (z: number) => createLevelSampler({ lat, lon }, z);

const palette = buildPalette({ colormap: "thermal", min: 233.15, max: 313.15 } as never);

function levels(make: (z: number) => LevelSampler): { sampler: LevelSampler; tiles: [number, number][] }[] {
  const out = [];
  for (let z = 0; z <= maxZoom; z++) {
    const sampler = make(z);
    const tiles: [number, number][] = [];
    for (let x = 0; x < 2 ** z; x++) for (let y = 0; y < 2 ** z; y++) if (sampler.covers(x, y)) tiles.push([x, y]);
    out.push({ sampler, tiles });
  }
  return out;
}

/** Bytes of PNG written by the last renderLead of each grid. */
const written = new Map<ReturnType<typeof levels>, number>();

/** Milliseconds to sample and encode every covered tile of one lead (sampling alone when `encode` is false). */
function renderLead(ls: ReturnType<typeof levels>, f: Float32Array, method: Resample, encode = true): number {
  const out = new Uint8Array(TILE_SIZE * TILE_SIZE);
  let bytes = 0;
  const t0 = now();
  for (const { sampler, tiles } of ls) {
    for (const [x, y] of tiles) {
      sampler.renderTile(x, y, f, palette, out, method);
      if (encode) bytes += encodeIndexedPng(out, TILE_SIZE, TILE_SIZE, palette.rgba).length;
    }
  }
  const ms = now() - t0;
  if (encode) written.set(ls, bytes);
  return ms;
}

const t0 = now();
const proj = levels(projectedSampler);
const setupProj = now() - t0;
const t1 = now();
const ll = levels(latlonSampler);
const setupLl = now() - t1;
const count = (ls: ReturnType<typeof levels>) => ls.reduce((a, l) => a + l.tiles.length, 0);
const nProj = count(proj);
const nLl = count(ll);
console.log(
  `grids ${NY}×${NX} nodes; covered tiles z0..${maxZoom}: projected ${nProj}, lat/lon ${nLl}; ` +
    `coverage + tables setup: projected ${setupProj.toFixed(0)} ms, lat/lon ${setupLl.toFixed(0)} ms`,
);
const fields = Array.from({ length: leads }, (_, l) => field(NX, NY, l));
for (const method of ["bilinear", "nearest"] as Resample[]) {
  // First lead of each (projected: builds the bilinear/nearest tables), then steady leads, alternated.
  const firstProj = renderLead(proj, fields[0], method);
  const firstLl = renderLead(ll, fields[0], method);
  let p = 0;
  let q = 0;
  for (let l = 1; l < leads; l++) {
    p += renderLead(proj, fields[l], method);
    q += renderLead(ll, fields[l], method);
  }
  const perP = p / ((leads - 1) * nProj);
  const perQ = q / ((leads - 1) * nLl);
  let sp = 0;
  let sq = 0;
  for (let l = 1; l < leads; l++) {
    sp += renderLead(proj, fields[l], method, false);
    sq += renderLead(ll, fields[l], method, false);
  }
  const sampleRatio = sp / nProj / (sq / nLl);
  const samplePer = [sp / ((leads - 1) * nProj), sq / ((leads - 1) * nLl)];
  console.log(
    `${method}: projected ${(1000 / perP).toFixed(0)} tiles/s, lat/lon ${(1000 / perQ).toFixed(0)} tiles/s, ` +
      `cost ratio ${(perP / perQ).toFixed(2)} (first lead incl. tables: ${(firstProj / nProj / (firstLl / nLl)).toFixed(2)}; ` +
      `sampling alone: ${sampleRatio.toFixed(2)}, ${samplePer[0].toFixed(3)} vs ${samplePer[1].toFixed(3)} ms/tile; ` +
      `encoding ${(perP - samplePer[0]).toFixed(3)} vs ${(perQ - samplePer[1]).toFixed(3)} ms/tile; ` +
      `PNG ${Math.round(written.get(proj)! / nProj)} vs ${Math.round(written.get(ll)! / nLl)} B/tile)`,
  );
}

// The deflate alone: the addon's run-length coder against zlib's Z_RLE on the same filtered rows
// (those of the last method's tiles, lead 1), both grids.
const addon = nativeAddon();
if (addon) {
  for (const [name, ls] of [
    ["projected", proj],
    ["lat/lon", ll],
  ] as const) {
    const raws: Uint8Array[] = [];
    const out = new Uint8Array(TILE_SIZE * TILE_SIZE);
    for (const { sampler, tiles } of ls) {
      for (const [x, y] of tiles) {
        sampler.renderTile(x, y, fields[Math.min(1, leads - 1)], palette, out, "nearest");
        const raw = new Uint8Array((TILE_SIZE + 1) * TILE_SIZE);
        addon.pngRows(out, TILE_SIZE, TILE_SIZE, raw, new Uint8Array(256));
        raws.push(raw);
      }
    }
    const dst = new Uint8Array(raws[0].length * 3 + 1024);
    let ours = 0;
    let zlib = 0;
    let oursBytes = 0;
    let zlibBytes = 0;
    for (let round = 0; round < 3; round++) {
      let t = now();
      for (const r of raws) oursBytes += addon.deflateRle(r, dst);
      ours += now() - t;
      t = now();
      for (const r of raws) zlibBytes += deflateSync(r, { strategy: constants.Z_RLE }).length;
      zlib += now() - t;
    }
    const n = 3 * raws.length;
    console.log(
      `deflate of nearest ${name} tiles: addon ${(ours / n).toFixed(3)} ms/tile, zlib Z_RLE ${(zlib / n).toFixed(3)} ms/tile ` +
        `(ratio ${(ours / zlib).toFixed(2)}); ${Math.round(oursBytes / n)} vs ${Math.round(zlibBytes / n)} B/tile`,
    );
  }
}
