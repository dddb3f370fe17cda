// Resampling of an unstructured or reduced grid (ICON, reduced Gaussian, anemoi-datasets, HEALPix)
// onto mercator tiles: each pixel takes its nearest cell by great-circle distance. The nearest
// cell of every pixel of a tile is solved once, through the grid's spatial index, and kept as a
// lookup table (runs of pixels sharing a cell) that every lead and every layer of the grid reuses:
// a tile is then a gather of palette indices, as on a projected grid. Pixels farther than a cell
// spacing from every cell of a regional grid are transparent.
//
// A cell's Voronoi region on the sphere is convex, so once zoomed in far enough that a block's
// edges are as good as great-circle arcs, a block whose four corner pixels share a cell lies in
// that cell whole: its pixels are filled without a search each.
import { InvalidParameterError } from "../errors.ts";
import { nativeAddon } from "../native.ts";
import type { Palette } from "./colormap.ts";
import type { LevelSampler, Resample } from "./resample.ts";
import {
  gatherNearest,
  type NearestRuns,
  nearestRuns,
  nodeColours,
  nodesOf,
  PROJECTED_TABLE_MB,
} from "./resample-projected.ts";
import { type BBox, pixelLat, pixelLon, SAMPLE_MAX_ZOOM, TILE_SIZE, tilesCovering, validateTile } from "./tiles.ts";

/**
 * What a tile walk needs of a grid's spatial index (the store's cell index has it): the cells' unit
 * vectors, each cell's neighbours with the bounds that prove an answer, and a search for the start.
 */
export interface WalkableCells {
  readonly vectors: { x: Float64Array; y: Float64Array; z: Float64Array };
  neighbourhood(): { k: number; list: Int32Array; half: Float32Array; outer: Float64Array };
  nearest(lat: number, lon: number): { cell: number };
}

export interface CellGridSpec {
  /** Number of cells. */
  n: number;
  bbox: BBox;
  global: boolean;
  /** The nearest cell to (lat, lon) within the grid's reach; -1 beyond it. */
  nearest(lat: number, lon: number): number;
  /**
   * The grid's spatial index and reach (radians; Infinity for a global grid): with them, a tile's
   * pixels walk from cell to cell through the index's neighbourhoods, proving each answer with the
   * neighbourhood's bounds, and search (`nearest`) only where no proof holds.
   */
  index?: WalkableCells;
  reach?: number;
}

/** Blocks of at most this many pixels a side are filled whole when their corners share a cell. */
export const CELL_BLOCK = 16;
/** ... from this zoom on (coarser, a block's parallels bow away from great circles by a visible part of a pixel). */
export const CELL_BLOCK_MIN_ZOOM = 3;

const PIXELS = TILE_SIZE * TILE_SIZE;
const RAD = Math.PI / 180;
/** Steps a pixel's walk may take from the previous pixel's cell before it searches instead. */
const WALK_STEPS = 4;
/** Tiles whose cells stay unpacked for overlays' questions (a tile and its eight neighbours). */
const UNPACKED_TILES = 9;

/** Rows (or columns) of pixels whose coordinates a level keeps, at most (6 kB each). */
const AXES_KEPT = 512;

/** One tile row's pixel latitudes (or one tile column's longitudes), degrees, with their cosines and sines. */
interface PixelAxis {
  deg: Float64Array;
  cos: Float64Array;
  sin: Float64Array;
}

/** The axis kept under `key`, made with `at` (degrees of pixel i) when it is not. */
function axisOf(kept: Map<number, PixelAxis>, key: number, at: (i: number) => number): PixelAxis {
  let a = kept.get(key);
  if (a) {
    kept.delete(key);
    kept.set(key, a);
    return a;
  }
  a = { deg: new Float64Array(TILE_SIZE), cos: new Float64Array(TILE_SIZE), sin: new Float64Array(TILE_SIZE) };
  for (let i = 0; i < TILE_SIZE; i++) {
    const v = at(i);
    a.deg[i] = v;
    a.cos[i] = Math.cos(v * RAD);
    a.sin[i] = Math.sin(v * RAD);
  }
  if (kept.size >= AXES_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key, a);
  return a;
}

/** A level's sampler, plus (for tests) the nearest cell of every pixel and how many tables were solved. */
export interface CellLevelSampler extends LevelSampler {
  nearestNodes(x: number, y: number): Int32Array | undefined;
  /** Tile tables solved so far (each once, whatever the number of leads and layers drawn). */
  readonly tablesSolved: number;
}

export function createCellSampler(spec: CellGridSpec, z: number, tableMb = PROJECTED_TABLE_MB): CellLevelSampler {
  validateTile(z, 0, 0, SAMPLE_MAX_ZOOM);
  const n = 2 ** z;
  const off = spec.n;
  const candidates = spec.global ? undefined : new Set(tilesCovering(spec.bbox, z).map((t) => t.x * n + t.y));
  const cache = new Map<number, Int32Array | NearestRuns | null>();
  let bytes = 0;
  let solved = 0;
  const limit = tableMb * 1024 * 1024;
  const scratch = new Int32Array(PIXELS);
  const unpacked = new Map<number, Int32Array>();
  // The tile being solved: its pixel rows' latitudes and columns' longitudes, with their cosines
  // and sines. Every tile of a tile row shares the rows (every tile of a column the columns), so
  // they are kept per row and column of the level, the least recently used dropped past AXES_KEPT.
  const rowAxes = new Map<number, PixelAxis>();
  const colAxes = new Map<number, PixelAxis>();
  let lats: Float64Array = new Float64Array(TILE_SIZE);
  let lons = lats;
  let cosLat = lats;
  let sinLat = lats;
  let cosLon = lats;
  let sinLon = lats;

  /**
   * Every pixel's nearest cell, row by row, each walked to from the cell of the pixel before it
   * (the row's first from the pixel above): exact, since every step is proven by the index's
   * neighbourhood bounds, and a search answers wherever none holds.
   */
  function walk(index: WalkableCells, out: Int32Array): void {
    const { x: X, y: Y, z: Z } = index.vectors;
    const { k, list, half, outer } = index.neighbourhood();
    const reach = spec.reach ?? Number.POSITIVE_INFINITY;
    const bounded = Number.isFinite(reach);
    // The walk starts from the cell nearest the first pixel, however far (a regional grid's).
    const start = index.nearest(lats[0], lons[0]).cell;
    const addon = nativeAddon();
    if (addon?.walkCells) {
      const left = addon.walkCells(X, Y, Z, list, half, outer, cosLat, sinLat, cosLon, sinLon, start, reach, off, out);
      if (left > 0) {
        for (let p = 0; p < PIXELS; p++) {
          if (out[p] !== -2) continue;
          const near = spec.nearest(lats[p >> 8], lons[p & 255]);
          out[p] = near < 0 ? off : near;
        }
      }
      return;
    }
    let rowStart = start;
    for (let r = 0, p = 0; r < TILE_SIZE; r++) {
      const cf = cosLat[r];
      const qz = sinLat[r];
      let cur = rowStart;
      for (let c = 0; c < TILE_SIZE; c++, p++) {
        const qx = cf * cosLon[c];
        const qy = cf * sinLon[c];
        let found = -1;
        let foundDot = 0;
        if (cur >= 0) {
          let d = X[cur] * qx + Y[cur] * qy + Z[cur] * qz;
          for (let step = 0; step < WALK_STEPS; step++) {
            // Neighbours nearest first: once the point lies within half the way to the next one,
            // neither it nor any after it (nor any unlisted cell) is nearer than cur.
            let best = cur;
            let bestDot = d;
            let proven = false;
            for (let j = cur * k, end = j + k; ; j++) {
              if (j === end) {
                proven = d >= outer[cur];
                break;
              }
              if (d >= half[j]) {
                proven = d >= outer[cur];
                break;
              }
              const m = list[j];
              const dm = X[m] * qx + Y[m] * qy + Z[m] * qz;
              if (dm > bestDot || (dm === bestDot && m < best)) {
                best = m;
                bestDot = dm;
              }
            }
            if (proven) {
              found = best;
              foundDot = bestDot;
              break;
            }
            if (best === cur) break;
            cur = best;
            d = bestDot;
          }
        }
        if (found >= 0) {
          cur = found;
          out[p] = bounded && Math.acos(Math.min(1, Math.max(-1, foundDot))) > reach ? off : found;
        } else {
          const near = spec.nearest(lats[r], lons[c]);
          out[p] = near < 0 ? off : near;
        }
        if (c === 0) rowStart = cur;
      }
    }
  }

  /** The nearest cell of every pixel of tile (x, y); null when none lies on the grid. */
  function solve(x: number, y: number): Int32Array | NearestRuns | null {
    const rows = axisOf(rowAxes, y, (i) => pixelLat(z, y, i));
    const cols = axisOf(colAxes, x, (i) => pixelLon(z, x, i));
    ({ deg: lats, cos: cosLat, sin: sinLat } = rows);
    ({ deg: lons, cos: cosLon, sin: sinLon } = cols);
    const out = scratch;
    if (spec.index) {
      walk(spec.index, out);
      return finish(out);
    }
    out.fill(-2);
    const at = (r: number, c: number) => {
      const k = r * TILE_SIZE + c;
      if (out[k] === -2) {
        const cell = spec.nearest(lats[r], lons[c]);
        out[k] = cell < 0 ? off : cell;
      }
      return out[k];
    };
    const block = z >= CELL_BLOCK_MIN_ZOOM ? CELL_BLOCK : 1;
    const fill = (r0: number, c0: number, size: number) => {
      const r1 = r0 + size - 1;
      const c1 = c0 + size - 1;
      const a = at(r0, c0);
      if (size === 1) return;
      if (a === at(r0, c1) && a === at(r1, c0) && a === at(r1, c1)) {
        for (let r = r0; r <= r1; r++) out.fill(a, r * TILE_SIZE + c0, r * TILE_SIZE + c1 + 1);
        return;
      }
      const h = size >> 1;
      fill(r0, c0, h);
      fill(r0, c0 + h, h);
      fill(r0 + h, c0, h);
      fill(r0 + h, c0 + h, h);
    };
    for (let r = 0; r < TILE_SIZE; r += block) for (let c = 0; c < TILE_SIZE; c += block) fill(r, c, block);
    return finish(out);
  }

  function finish(out: Int32Array): Int32Array | NearestRuns | null {
    solved++;
    let covered = false;
    for (let k = 0; k < PIXELS; k++) {
      if (out[k] !== off) {
        covered = true;
        break;
      }
    }
    if (!covered) return null;
    return nearestRuns(out) ?? out.slice();
  }

  function table(x: number, y: number): Int32Array | NearestRuns | null {
    const key = x * n + y;
    if (candidates && !candidates.has(key)) return null;
    let t = cache.get(key);
    if (t === undefined) {
      t = solve(x, y);
      cache.set(key, t);
      bytes += t === null ? 0 : t instanceof Int32Array ? t.byteLength : t.nodes.byteLength + t.lengths.byteLength;
      // Oldest first, once over the budget (the build walks a level tile by tile, lead after lead).
      for (const [k, old] of cache) {
        if (bytes <= limit || cache.size <= 1) break;
        cache.delete(k);
        bytes -=
          old === null ? 0 : old instanceof Int32Array ? old.byteLength : old.nodes.byteLength + old.lengths.byteLength;
      }
    }
    return t;
  }

  return {
    z,
    get tablesSolved() {
      return solved;
    },
    covers(x, y) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      if (spec.global) return true;
      return table(x, y) !== null;
    },
    valueAt(col, row, field) {
      const size = n * TILE_SIZE;
      if (!(col >= 0 && col < size && row >= 0 && row < size)) return Number.NaN;
      const t = table(Math.floor(col / TILE_SIZE), Math.floor(row / TILE_SIZE));
      if (t === null) return Number.NaN;
      const key = Math.floor(col / TILE_SIZE) * n + Math.floor(row / TILE_SIZE);
      // Overlays ask about a tile and its neighbours (lines and arrows cross tile edges): the
      // cells of the last few tiles asked about stay unpacked.
      let cells = unpacked.get(key);
      if (!cells) {
        cells = t instanceof Int32Array ? t : nodesOf(t, PIXELS).slice();
        if (unpacked.size >= UNPACKED_TILES) unpacked.delete(unpacked.keys().next().value!);
        unpacked.set(key, cells);
      }
      const cell = cells[(row % TILE_SIZE) * TILE_SIZE + (col % TILE_SIZE)];
      return cell === off ? Number.NaN : field[cell];
    },
    renderTile(x, y, field, palette: Palette, out = new Uint8Array(PIXELS), _method?: Resample) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      if (field.length !== spec.n) {
        throw new InvalidParameterError("field", `field has ${field.length} values, the grid ${spec.n} cells`);
      }
      // Cells are drawn as they are (nearest cell), whatever the layer's resampling: there are no
      // rows and columns to interpolate along.
      const t = table(x, y);
      if (t === null) {
        out.fill(0);
        return out;
      }
      return gatherNearest(nodeColours(field, palette), t, out);
    },
    nearestNodes(x, y) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      const t = table(x, y);
      return t === null ? undefined : nodesOf(t).slice();
    },
  };
}
