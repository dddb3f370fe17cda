// Resampling of a projected or rotated grid onto mercator tiles. Each pixel centre's position in
// the grid (fractional column and row) is solved once per tile and kept in lookup tables that
// every lead and every layer of the grid reuses: the projection of a tile's pixels does not
// change with the field. A tile's positions are projected exactly on a 17 × 17 lattice and
// interpolated between; a lattice cell whose centre the interpolation misses by more than
// LATTICE_TOLERANCE cells or PIXEL_TOLERANCE pixels, whichever is larger (strong curvature, the
// CRS's cut meridian), is projected pixel by pixel.
// Pixels beyond half a cell past the outer nodes are transparent, as for a lat/lon patch.
import { InvalidParameterError } from "../errors.ts";
import { nativeAddon } from "../native.ts";
import { PALETTE_COLORS, type Palette } from "./colormap.ts";
import type { LevelSampler, Resample } from "./resample.ts";
import { type BBox, SAMPLE_MAX_ZOOM, TILE_SIZE, tilesCovering, validateTile } from "./tiles.ts";

export interface ProjectedGridSpec {
  nx: number;
  ny: number;
  /** Geographic bounds of the grid's cells (west may exceed east's wrap: east up to west + 360). */
  bbox: BBox;
  /** Fractional storage column and row of a geographic point, written to out; NaN where the CRS cannot place it. */
  toIndex(lon: number, lat: number, out: Float64Array): void;
}

/** Interpolated positions may miss the exact ones by this much (in grid cells) before pixels are projected one by one. */
export const LATTICE_TOLERANCE = 0.02;
/** ... or by this fraction of a pixel, where a pixel spans more than a cell. */
export const PIXEL_TOLERANCE = 0.1;
/** Bytes of per-tile lookup tables kept per grid and zoom level (least recently used dropped first). */
export const PROJECTED_TABLE_MB = 512;

const LATTICE = 16;
const N = TILE_SIZE / LATTICE + 1;
const PIXELS = TILE_SIZE * TILE_SIZE;
const W_ONE = 65535;

/**
 * A tile's nearest nodes as runs of pixels (row-major, across row ends) that share one: run r is
 * lengths[r] + 1 pixels of node nodes[r]. Zoomed in, where a cell spans several pixels, this is a
 * few times smaller than a node per pixel (5 bytes a run against 4 a pixel), and the gather
 * writes a run at a time.
 */
export interface NearestRuns {
  nodes: Int32Array;
  lengths: Uint8Array;
}

/** A tile's positions and the tables made from them on first use. */
interface TileTables {
  fx: Float32Array;
  fy: Float32Array;
  covered: boolean;
  /** Nearest node per pixel (off-grid pixels: nx * ny), kept as runs where that is smaller. */
  nearest?: Int32Array | NearestRuns;
  base?: Int32Array;
  wx?: Uint16Array;
  wy?: Uint16Array;
  bytes: number;
}

type Field = Float32Array | Float64Array;

/** A bounded least-recently-used cache of tile tables, by bytes. */
class TableCache {
  #map = new Map<number, TileTables>();
  #bytes = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  get(k: number): TileTables | undefined {
    const t = this.#map.get(k);
    if (t) {
      this.#map.delete(k);
      this.#map.set(k, t);
    }
    return t;
  }
  set(k: number, t: TileTables): void {
    this.#map.set(k, t);
    this.#bytes += t.bytes;
    this.trim();
  }
  grow(t: TileTables, bytes: number): void {
    t.bytes += bytes;
    this.#bytes += bytes;
    this.trim();
  }
  trim(): void {
    for (const [k, t] of this.#map) {
      if (this.#bytes <= this.limit || this.#map.size <= 1) break;
      this.#map.delete(k);
      this.#bytes -= t.bytes;
    }
  }
}

// Per field and palette: the palette index of every node and a last 0 for off-grid pixels
// (nearest sampling gathers from it). A buffer refilled with other values is caught by a strided
// sample kept beside it.
const colourCache = new WeakMap<Field, Map<Palette, { colours: Uint8Array; probe: Float64Array }>>();
const PROBES = 64;

function probeOf(field: Field): Float64Array {
  const out = new Float64Array(PROBES);
  const step = Math.max(1, Math.floor(field.length / PROBES));
  for (let i = 0; i < PROBES; i++) out[i] = field[Math.min(field.length - 1, i * step)];
  return out;
}

/** Whether the field still holds the values `probe` was taken from (no allocation: called per tile). */
function sameProbe(probe: Float64Array, field: Field): boolean {
  const step = Math.max(1, Math.floor(field.length / PROBES));
  for (let i = 0; i < PROBES; i++) if (!Object.is(probe[i], field[Math.min(field.length - 1, i * step)])) return false;
  return true;
}

/** Per field and palette, the palette index of every node and a last transparent entry (shared with the cell sampler). */
export function nodeColours(field: Field, palette: Palette): Uint8Array {
  let byPalette = colourCache.get(field);
  if (!byPalette) {
    byPalette = new Map();
    colourCache.set(field, byPalette);
  }
  const known = byPalette.get(palette);
  if (known && sameProbe(known.probe, field)) return known.colours;
  // One entry more than nodes, left 0 (transparent): the off-grid pixels' entry.
  const colours = new Uint8Array(field.length + 1);
  // The field is on the palette's axis (a stepped ramp's class axis), like every renderer's.
  const lut = palette.axisLut;
  for (let i = 0; i < field.length; i++) colours[i] = lut(field[i]);
  byPalette.set(palette, { colours, probe: probeOf(field) });
  return colours;
}

/** Longest run of a NearestRuns (its lengths are bytes, less one). */
const MAX_RUN = 256;

/** Where the addon writes a table's runs before they are copied out at their size. */
let runScratch = { nodes: new Int32Array(0), lengths: new Uint8Array(0) };

/** `nodes` (one per pixel) as runs of equal nodes, or undefined where the runs would take as many bytes or more. */
export function nearestRuns(nodes: Int32Array): NearestRuns | undefined {
  const addon = nativeAddon();
  if (addon?.runsOf) {
    if (runScratch.nodes.length < nodes.length) {
      runScratch = { nodes: new Int32Array(nodes.length), lengths: new Uint8Array(nodes.length) };
    }
    const count = addon.runsOf(nodes, runScratch.nodes, runScratch.lengths);
    if (count * 5 >= nodes.length * 4) return undefined;
    return { nodes: runScratch.nodes.slice(0, count), lengths: runScratch.lengths.slice(0, count) };
  }
  let count = 0;
  for (let k = 0, len = 0; k < nodes.length; k++, len++) {
    if (k === 0 || nodes[k] !== nodes[k - 1] || len === MAX_RUN) {
      count++;
      len = 0;
    }
  }
  if (count * 5 >= nodes.length * 4) return undefined;
  const runs = { nodes: new Int32Array(count), lengths: new Uint8Array(count) };
  let r = -1;
  for (let k = 0, len = 0; k < nodes.length; k++, len++) {
    if (k === 0 || nodes[k] !== nodes[k - 1] || len === MAX_RUN) {
      r++;
      runs.nodes[r] = nodes[k];
      len = 0;
    }
    runs.lengths[r] = len;
  }
  return runs;
}

/** The node of every pixel, from a table kept either way. */
/** A tile's palette indices gathered through its nearest-node table (per pixel, or as runs). */
export function gatherNearest(colours: Uint8Array, table: Int32Array | NearestRuns, out: Uint8Array): Uint8Array {
  const addon = nativeAddon();
  if (table instanceof Int32Array) {
    if (addon) addon.gatherTile(colours, table, out);
    else for (let k = 0; k < PIXELS; k++) out[k] = colours[table[k]];
    return out;
  }
  if (addon?.gatherRuns) {
    addon.gatherRuns(colours, table.nodes, table.lengths, out);
    return out;
  }
  for (let r = 0, k = 0; r < table.nodes.length; r++) {
    const end = k + table.lengths[r] + 1;
    out.fill(colours[table.nodes[r]], k, end);
    k = end;
  }
  return out;
}

export function nodesOf(table: Int32Array | NearestRuns, pixels = PIXELS): Int32Array {
  if (table instanceof Int32Array) return table;
  const out = new Int32Array(pixels);
  for (let r = 0, k = 0; r < table.nodes.length; r++) {
    const end = k + table.lengths[r] + 1;
    out.fill(table.nodes[r], k, end);
    k = end;
  }
  return out;
}

/** The palette's arithmetic as the addon takes it: scale, offset, below, top. */
const paletteArgs = new Float64Array(4);

/** A projected level's sampler, and (for tests) the nearest node of every pixel of a tile as it keeps them. */
export interface ProjectedLevelSampler extends LevelSampler {
  /** undefined for a tile the grid does not cover; `runs` says whether the table is kept as runs. */
  nearestNodes(x: number, y: number): { nodes: Int32Array; runs: boolean } | undefined;
}

/**
 * `runs` false keeps every tile's nearest table as a node per pixel (tests compare the two
 * forms); by default a tile's table is kept as runs wherever they are smaller.
 */
export function createProjectedSampler(
  spec: ProjectedGridSpec,
  z: number,
  tableMb = PROJECTED_TABLE_MB,
  runs = true,
): ProjectedLevelSampler {
  validateTile(z, 0, 0, SAMPLE_MAX_ZOOM);
  const { nx, ny } = spec;
  if (nx < 2 || ny < 2) throw new InvalidParameterError("grid", "a projected grid needs at least 2 × 2 nodes");
  const n = 2 ** z;
  const candidates = new Set(tilesCovering(spec.bbox, z).map((t) => t.x * n + t.y));
  const cache = new TableCache(tableMb * 1024 * 1024);
  const p = new Float64Array(2);

  const project = (lon: number, lat: number): [number, number] => {
    spec.toIndex(lon, lat, p);
    return [p[0], p[1]];
  };

  function positions(x: number, y: number): TileTables {
    const fx = new Float32Array(PIXELS);
    const fy = new Float32Array(PIXELS);
    // The lattice: pixel corners every LATTICE pixels, in world pixel coordinates of this level.
    const lx = new Float64Array(N * N);
    const ly = new Float64Array(N * N);
    const lonAt = (c: number) => ((x * TILE_SIZE + c) / (n * TILE_SIZE)) * 360 - 180;
    const latAt = (r: number) =>
      (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y * TILE_SIZE + r)) / (n * TILE_SIZE)))) * 180) / Math.PI;
    for (let j = 0; j < N; j++) {
      for (let i = 0; i < N; i++) {
        [lx[j * N + i], ly[j * N + i]] = project(lonAt(i * LATTICE + 0.5), latAt(j * LATTICE + 0.5));
      }
    }
    let covered = false;
    for (let j = 0; j < N - 1; j++) {
      for (let i = 0; i < N - 1; i++) {
        const k00 = j * N + i;
        const k01 = k00 + 1;
        const k10 = k00 + N;
        const k11 = k10 + 1;
        const corners = [lx[k00], lx[k01], lx[k10], lx[k11], ly[k00], ly[k01], ly[k10], ly[k11]];
        let exact = !corners.every(Number.isFinite);
        if (!exact) {
          const [cx, cy] = project(lonAt(i * LATTICE + LATTICE / 2 + 0.5), latAt(j * LATTICE + LATTICE / 2 + 0.5));
          const ix = (lx[k00] + lx[k01] + lx[k10] + lx[k11]) / 4;
          const iy = (ly[k00] + ly[k01] + ly[k10] + ly[k11]) / 4;
          // Zoomed out, a pixel spans many cells: a miss well inside one pixel changes nothing.
          const pixel = Math.hypot(lx[k01] - lx[k00], ly[k01] - ly[k00]) / LATTICE;
          const tol = Math.max(LATTICE_TOLERANCE, PIXEL_TOLERANCE * pixel);
          exact = !(Math.abs(cx - ix) <= tol && Math.abs(cy - iy) <= tol);
        }
        for (let r = 0; r < LATTICE; r++) {
          const row = j * LATTICE + r;
          const v = r / LATTICE;
          for (let c = 0; c < LATTICE; c++) {
            const col = i * LATTICE + c;
            const k = row * TILE_SIZE + col;
            let gx: number;
            let gy: number;
            if (exact) {
              [gx, gy] = project(lonAt(col + 0.5), latAt(row + 0.5));
            } else {
              const u = c / LATTICE;
              gx = (lx[k00] * (1 - u) + lx[k01] * u) * (1 - v) + (lx[k10] * (1 - u) + lx[k11] * u) * v;
              gy = (ly[k00] * (1 - u) + ly[k01] * u) * (1 - v) + (ly[k10] * (1 - u) + ly[k11] * u) * v;
            }
            const inside = gx >= -0.5 && gx <= nx - 0.5 && gy >= -0.5 && gy <= ny - 0.5;
            fx[k] = inside ? gx : Number.NaN;
            fy[k] = inside ? gy : Number.NaN;
            if (inside) covered = true;
          }
        }
      }
    }
    return { fx, fy, covered, bytes: PIXELS * 8 };
  }

  function tables(x: number, y: number): TileTables | undefined {
    const key = x * n + y;
    if (!candidates.has(key)) return undefined;
    let t = cache.get(key);
    if (!t) {
      t = positions(x, y);
      cache.set(key, t);
    }
    return t;
  }

  // The per-pixel table is made here and kept only where runs do not pay.
  const nodeScratch = new Int32Array(PIXELS);

  function nearestTable(t: TileTables): Int32Array | NearestRuns {
    if (t.nearest) return t.nearest;
    const out = nodeScratch;
    // Off-grid pixels name the entry after the last node, which nodeColours keeps transparent:
    // the gather needs no test per pixel.
    const off = nx * ny;
    for (let k = 0; k < PIXELS; k++) {
      const gx = t.fx[k];
      if (Number.isNaN(gx)) {
        out[k] = off;
        continue;
      }
      // Exact halves go to the lower index, as for lat/lon grids.
      const ix = Math.min(nx - 1, Math.max(0, Math.ceil(gx - 0.5)));
      const iy = Math.min(ny - 1, Math.max(0, Math.ceil(t.fy[k] - 0.5)));
      out[k] = iy * nx + ix;
    }
    const kept = (runs && nearestRuns(out)) || out.slice();
    t.nearest = kept;
    cache.grow(t, kept instanceof Int32Array ? kept.byteLength : kept.nodes.byteLength + kept.lengths.byteLength);
    return kept;
  }

  function bilinearTables(t: TileTables): { base: Int32Array; wx: Uint16Array; wy: Uint16Array } {
    if (t.base) return { base: t.base, wx: t.wx!, wy: t.wy! };
    const base = new Int32Array(PIXELS);
    const wx = new Uint16Array(PIXELS);
    const wy = new Uint16Array(PIXELS);
    for (let k = 0; k < PIXELS; k++) {
      const gx = t.fx[k];
      if (Number.isNaN(gx)) {
        base[k] = -1;
        continue;
      }
      const gy = t.fy[k];
      // Edge cells hold their outer node's value out to half a cell (weights clamp to 0 or 1).
      const x0 = Math.min(nx - 2, Math.max(0, Math.floor(gx)));
      const y0 = Math.min(ny - 2, Math.max(0, Math.floor(gy)));
      base[k] = y0 * nx + x0;
      wx[k] = Math.round(Math.min(1, Math.max(0, gx - x0)) * W_ONE);
      wy[k] = Math.round(Math.min(1, Math.max(0, gy - y0)) * W_ONE);
    }
    t.base = base;
    t.wx = wx;
    t.wy = wy;
    cache.grow(t, PIXELS * 8);
    return { base, wx, wy };
  }

  /** Bilinear value at one pixel; a missing corner gives the nearest corner's value. */
  function bilinearAt(f: Field, b: number, wxq: number, wyq: number): number {
    const wx = wxq / W_ONE;
    const wy = wyq / W_ONE;
    const p00 = f[b];
    const p01 = f[b + 1];
    const p10 = f[b + nx];
    const p11 = f[b + nx + 1];
    const v = (p00 + (p01 - p00) * wx) * (1 - wy) + (p10 + (p11 - p10) * wx) * wy;
    if (!Number.isNaN(v)) return v;
    return f[b + (wy <= 0.5 ? 0 : nx) + (wx <= 0.5 ? 0 : 1)];
  }

  return {
    z,
    covers(x, y) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      return tables(x, y)?.covered ?? false;
    },
    valueAt(col, row, field) {
      const size = n * TILE_SIZE;
      if (!(col >= 0 && col < size && row >= 0 && row < size)) return Number.NaN;
      const t = tables(Math.floor(col / TILE_SIZE), Math.floor(row / TILE_SIZE));
      if (!t?.covered) return Number.NaN;
      const { base, wx, wy } = bilinearTables(t);
      const k = (row % TILE_SIZE) * TILE_SIZE + (col % TILE_SIZE);
      return base[k] < 0 ? Number.NaN : bilinearAt(field, base[k], wx[k], wy[k]);
    },
    renderTile(x, y, field, palette, out = new Uint8Array(PIXELS), method: Resample = "nearest") {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      if (field.length !== nx * ny) {
        throw new InvalidParameterError("field", `field has ${field.length} values, grid needs ${ny}×${nx}`);
      }
      if (out.length !== PIXELS) throw new RangeError(`out must hold ${PIXELS} indices`);
      const t = tables(x, y);
      if (!t?.covered) {
        out.fill(0);
        return out;
      }
      // The addon runs the same loops in C when it is built (native/raster.h, projectedTile and
      // gatherTile); the same indices either way.
      const addon = nativeAddon();
      if (method === "bilinear") {
        const { base, wx, wy } = bilinearTables(t);
        const { scale, offset, below } = palette;
        const top = PALETTE_COLORS;
        if (addon) {
          paletteArgs[0] = scale;
          paletteArgs[1] = offset;
          paletteArgs[2] = below;
          paletteArgs[3] = top;
          addon.projectedTile(field, nx, base, wx, wy, paletteArgs, out);
          return out;
        }
        const unit = 1 / W_ONE;
        for (let k = 0; k < PIXELS; k++) {
          const b = base[k];
          if (b < 0) {
            out[k] = 0;
            continue;
          }
          const fx = wx[k] * unit;
          const fy = wy[k] * unit;
          const p00 = field[b];
          const p01 = field[b + 1];
          const p10 = field[b + nx];
          const p11 = field[b + nx + 1];
          let v = (p00 + (p01 - p00) * fx) * (1 - fy) + (p10 + (p11 - p10) * fx) * fy;
          if (Number.isNaN(v)) v = bilinearAt(field, b, wx[k], wy[k]);
          const s = v * scale + offset;
          out[k] = !(v > below) ? 0 : s < 1 ? 1 : s >= top ? top : s | 0;
        }
        return out;
      }
      // Palette index per node, once per field and palette: a tile is then a gather.
      return gatherNearest(nodeColours(field, palette), nearestTable(t), out);
    },
    nearestNodes(x, y) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      const t = tables(x, y);
      if (!t?.covered) return undefined;
      const near = nearestTable(t);
      return { nodes: nodesOf(near).slice(), runs: !(near instanceof Int32Array) };
    },
  };
}
