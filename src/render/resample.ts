// Resampling of a regular lat/lon grid onto mercator tiles: nearest node (categorical fields) or
// bilinear (continuous ones). All geometry is solved once per zoom level: tables from world pixel
// column to lon index (or the two bracketing indices and a weight) and from world pixel row to the
// offset of a lat row in the field. A tile is then table slices, a few multiplies per pixel and a
// palette lookup.
import { InvalidParameterError } from "../errors.ts";
import { nativeAddon } from "../native.ts";
import { PALETTE_COLORS, type Palette } from "./colormap.ts";
import { pixelLat, pixelLon, TILE_SIZE, validateTile } from "./tiles.ts";

export interface LatLonGrid {
  /** Node latitudes, strictly ascending or strictly descending. */
  lat: ArrayLike<number>;
  /** Node longitudes, monotonic in either direction; 0..360, -180..180, or a patch crossing the antimeridian. */
  lon: ArrayLike<number>;
}

export interface LevelSampler {
  readonly z: number;
  /** Whether any pixel of the tile falls on the grid (false: the tile is fully transparent). */
  covers(x: number, y: number): boolean;
  /** Palette indices of tile (x, y), row-major; `field` is in (lat, lon) C order. */
  renderTile(
    x: number,
    y: number,
    field: Float32Array | Float64Array,
    palette: Palette,
    out?: Uint8Array,
    method?: Resample,
  ): Uint8Array;
  /**
   * Bilinear value at world pixel centre (col, row) of this level (fractional positions allowed
   * only through the tables' pixel grid, so integers), NaN off the grid. A cell with a missing
   * corner gives its nearest corner's value, as the smooth tiles do.
   */
  valueAt(col: number, row: number, field: Float32Array | Float64Array): number;
}

export type Resample = "nearest" | "bilinear";

type Field = Float32Array | Float64Array;

/** An axis sorted ascending, with the storage index of each sorted node and its coverage limits. */
interface SortedAxis {
  values: Float64Array;
  index: Int32Array;
  /** Pixel centres within [lo, hi] (half a cell beyond the end nodes) lie on the grid. */
  lo: number;
  hi: number;
}

function sortAxis(param: string, storage: ArrayLike<number>): SortedAxis {
  const n = storage.length;
  if (n === 0) throw new InvalidParameterError(param, `${param} coordinate is empty`);
  const descending = n > 1 && storage[1] < storage[0];
  const values = new Float64Array(n);
  const index = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const i = descending ? n - 1 - k : k;
    values[k] = storage[i];
    index[k] = i;
    if (!Number.isFinite(values[k])) throw new InvalidParameterError(param, `${param}[${i}] is not a finite number`);
    if (k > 0 && !(values[k] > values[k - 1])) {
      throw new InvalidParameterError(param, `${param} coordinate is not strictly monotonic at index ${i}`);
    }
  }
  const halfLo = n > 1 ? (values[1] - values[0]) / 2 : 0;
  const halfHi = n > 1 ? (values[n - 1] - values[n - 2]) / 2 : 0;
  return { values, index, lo: values[0] - halfLo, hi: values[n - 1] + halfHi };
}

/** Longitudes made continuous (a patch stored as 170..180, -180..-170 becomes 170..190). */
function unwrapLon(lon: ArrayLike<number>): Float64Array {
  const n = lon.length;
  const out = new Float64Array(n);
  // Checked here as well as in sortAxis: the loops below would never end on an infinity.
  for (let i = 0; i < n; i++)
    if (!Number.isFinite(lon[i])) throw new InvalidParameterError("lon", `lon[${i}] is not a finite number`);
  if (n === 0) return out;
  out[0] = lon[0];
  let dir = 0;
  for (let i = 1; i < n; i++) {
    const step = ((((lon[i] - lon[i - 1] + 180) % 360) + 360) % 360) - 180;
    if (dir === 0) dir = Math.sign(step);
    let v = lon[i];
    while (dir > 0 && v <= out[i - 1]) v += 360;
    while (dir > 0 && v - out[i - 1] >= 360) v -= 360;
    while (dir < 0 && v >= out[i - 1]) v -= 360;
    while (dir < 0 && out[i - 1] - v >= 360) v += 360;
    out[i] = v;
  }
  return out;
}

/** Position of the node nearest to `v` in ascending `s`; an exact tie goes to the lower (west/south) node. */
function nearestSorted(s: Float64Array, v: number): number {
  let lo = 0;
  let hi = s.length - 1;
  if (v <= s[0]) return 0;
  if (v >= s[hi]) return hi;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (s[mid] <= v) lo = mid;
    else hi = mid;
  }
  return v - s[lo] <= s[hi] - v ? lo : hi;
}

/** World pixel column → lon index in storage order, -1 off the grid. */
function columnTable(lon: ArrayLike<number>, z: number): Int32Array {
  const axis = sortAxis("lon", unwrapLon(lon));
  const s = axis.values;
  const n = s.length;
  const step = n > 1 ? s[1] - s[0] : 0;
  // Global when the nodes and one more step span the circle; then nearest wraps across the seam.
  const global = n > 1 && s[n - 1] - s[0] + step >= 360 - 1e-9 * 360;
  let values = s;
  let index = axis.index;
  let start = axis.lo;
  if (global) {
    values = new Float64Array(n + 2);
    values.set(s, 1);
    values[0] = s[n - 1] - 360;
    values[n + 1] = s[0] + 360;
    index = new Int32Array(n + 2);
    index.set(axis.index, 1);
    index[0] = axis.index[n - 1];
    index[n + 1] = axis.index[0];
    start = s[0];
  }
  const table = new Int32Array(2 ** z * TILE_SIZE);
  for (let c = 0; c < table.length; c++) {
    const lon = pixelLon(z, 0, c); // column c of the world, counted from tile x = 0
    // Bring the pixel into the grid's own 360° window before searching.
    const v = lon - 360 * Math.floor((lon - start) / 360);
    table[c] = global || v <= axis.hi ? index[nearestSorted(values, v)] : -1;
  }
  return table;
}

/** World pixel row → offset of the nearest lat row in the field (lat index × nlon), -1 off the grid. */
function rowTable(lat: ArrayLike<number>, nlon: number, z: number): Int32Array {
  const axis = sortAxis("lat", lat);
  const table = new Int32Array(2 ** z * TILE_SIZE);
  for (let r = 0; r < table.length; r++) {
    const v = pixelLat(z, 0, r);
    table[r] = v >= axis.lo && v <= axis.hi ? axis.index[nearestSorted(axis.values, v)] * nlon : -1;
  }
  return table;
}

/** Position k with s[k] <= v < s[k + 1], for s[0] <= v < s[n - 1]. */
function bracket(s: Float64Array, v: number): number {
  let lo = 0;
  let hi = s.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (s[mid] <= v) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Per world pixel: the two bracketing nodes (storage order, or field offsets) and the weight of the second. */
interface PairTable {
  a: Int32Array;
  b: Int32Array;
  w: Float32Array;
}

function pairTable(size: number): PairTable {
  return { a: new Int32Array(size).fill(-1), b: new Int32Array(size).fill(-1), w: new Float32Array(size) };
}

/**
 * Bracketing lon nodes per world pixel column. Global grids interpolate across the seam between
 * the last and the first node; a patch holds its edge node's value out to half a cell beyond it
 * (where nearest sampling shows it too) and is off the grid past that.
 */
function columnPairs(lon: ArrayLike<number>, z: number): PairTable {
  const axis = sortAxis("lon", unwrapLon(lon));
  const s = axis.values;
  const n = s.length;
  const step = n > 1 ? s[1] - s[0] : 0;
  const global = n > 1 && s[n - 1] - s[0] + step >= 360 - 1e-9 * 360;
  const t = pairTable(2 ** z * TILE_SIZE);
  const start = global ? s[0] : axis.lo;
  for (let c = 0; c < t.a.length; c++) {
    const lonC = pixelLon(z, 0, c);
    const v = lonC - 360 * Math.floor((lonC - start) / 360);
    if (global) {
      if (v >= s[n - 1]) {
        // Between the last node and the first one, 360° on.
        t.a[c] = axis.index[n - 1];
        t.b[c] = axis.index[0];
        t.w[c] = (v - s[n - 1]) / (s[0] + 360 - s[n - 1]);
        continue;
      }
    } else if (v > axis.hi) continue;
    if (v <= s[0] || n === 1) {
      t.a[c] = t.b[c] = axis.index[0];
    } else if (v >= s[n - 1]) {
      t.a[c] = t.b[c] = axis.index[n - 1];
    } else {
      const k = bracket(s, v);
      t.a[c] = axis.index[k];
      t.b[c] = axis.index[k + 1];
      t.w[c] = (v - s[k]) / (s[k + 1] - s[k]);
    }
  }
  return t;
}

/** Bracketing lat rows per world pixel row, as field offsets (index × nlon); the edge rows hold out half a cell. */
function rowPairs(lat: ArrayLike<number>, nlon: number, z: number): PairTable {
  const axis = sortAxis("lat", lat);
  const s = axis.values;
  const n = s.length;
  const t = pairTable(2 ** z * TILE_SIZE);
  for (let r = 0; r < t.a.length; r++) {
    const v = pixelLat(z, 0, r);
    if (!(v >= axis.lo && v <= axis.hi)) continue;
    if (v <= s[0] || n === 1) {
      t.a[r] = t.b[r] = axis.index[0] * nlon;
    } else if (v >= s[n - 1]) {
      t.a[r] = t.b[r] = axis.index[n - 1] * nlon;
    } else {
      const k = bracket(s, v);
      t.a[r] = axis.index[k] * nlon;
      t.b[r] = axis.index[k + 1] * nlon;
      t.w[r] = (v - s[k]) / (s[k + 1] - s[k]);
    }
  }
  return t;
}

/** Bilinear over one cell; a missing corner gives the nearest corner's value (ties west and south). */
function cellValue(f: Field, r0: number, r1: number, wy: number, c0: number, c1: number, wx: number): number {
  const p00 = f[r0 + c0];
  const p01 = f[r0 + c1];
  const p10 = f[r1 + c0];
  const p11 = f[r1 + c1];
  const v = (p00 + (p01 - p00) * wx) * (1 - wy) + (p10 + (p11 - p10) * wx) * wy;
  if (!Number.isNaN(v)) return v;
  return f[(wy <= 0.5 ? r0 : r1) + (wx <= 0.5 ? c0 : c1)];
}

/** The tile's columns cut into runs that share their two lon nodes (off-grid runs have a = -1). */
function columnRuns(cols: PairTable, col0: number): Int32Array {
  // Up to TILE_SIZE runs of (start, end, a, b).
  const runs = new Int32Array(TILE_SIZE * 4 + 1);
  let n = 0;
  for (let c = 0; c < TILE_SIZE; c++) {
    const a = cols.a[col0 + c];
    const b = cols.b[col0 + c];
    if (n > 0 && runs[(n - 1) * 4 + 2] === a && runs[(n - 1) * 4 + 3] === b) runs[(n - 1) * 4 + 1] = c + 1;
    else {
      runs[n * 4] = c;
      runs[n * 4 + 1] = c + 1;
      runs[n * 4 + 2] = a;
      runs[n * 4 + 3] = b;
      n++;
    }
  }
  runs[TILE_SIZE * 4] = n;
  return runs;
}

function renderBilinear(
  cols: PairTable,
  rows: PairTable,
  x: number,
  y: number,
  field: Field,
  palette: Palette,
  out: Uint8Array,
): void {
  const { scale, offset, below } = palette;
  const top = PALETTE_COLORS;
  const col0 = x * TILE_SIZE;
  const row0 = y * TILE_SIZE;
  const cw = cols.w;
  const runs = columnRuns(cols, col0);
  const nRuns = runs[TILE_SIZE * 4];
  for (let r = 0; r < TILE_SIZE; r++) {
    const o = r * TILE_SIZE;
    const R = row0 + r;
    const r0 = rows.a[R];
    if (r0 < 0) {
      out.fill(0, o, o + TILE_SIZE);
      continue;
    }
    const r1 = rows.b[R];
    const wy = rows.w[R];
    // Clamped edge rows (and zoomed-out levels) repeat a row exactly: copy it.
    if (r > 0 && r0 === rows.a[R - 1] && r1 === rows.b[R - 1] && wy === rows.w[R - 1]) {
      out.copyWithin(o, o - TILE_SIZE, o);
      continue;
    }
    for (let k = 0; k < nRuns; k++) {
      const from = runs[k * 4];
      const to = runs[k * 4 + 1];
      const a = runs[k * 4 + 2];
      const b = runs[k * 4 + 3];
      if (a < 0) {
        out.fill(0, o + from, o + to);
        continue;
      }
      // The two column values lerped in lat once per run; the value is linear along the run, so
      // equal indices at both ends mean one index throughout (the common case zoomed in).
      const va = field[r0 + a] * (1 - wy) + field[r1 + a] * wy;
      const dv = field[r0 + b] * (1 - wy) + field[r1 + b] * wy - va;
      if (!Number.isNaN(dv)) {
        const v0 = va + dv * cw[col0 + from];
        const v1 = va + dv * cw[col0 + to - 1];
        const t0 = v0 * scale + offset;
        const t1 = v1 * scale + offset;
        const i0 = !(v0 > below) ? 0 : t0 < 1 ? 1 : t0 >= top ? top : t0 | 0;
        const i1 = !(v1 > below) ? 0 : t1 < 1 ? 1 : t1 >= top ? top : t1 | 0;
        const same = i0 === i1 ? i0 : -1;
        if (same >= 0) {
          for (let c = o + from; c < o + to; c++) out[c] = same;
          continue;
        }
        for (let c = from; c < to; c++) {
          const v = va + dv * cw[col0 + c];
          const t = v * scale + offset;
          out[o + c] = !(v > below) ? 0 : t < 1 ? 1 : t >= top ? top : t | 0;
        }
        continue;
      }
      // A missing corner: each pixel takes the rule of cellValue.
      for (let c = from; c < to; c++) {
        const v = cellValue(field, r0, r1, wy, a, b, cw[col0 + c]);
        if (!(v > below)) out[o + c] = 0;
        else {
          const t = v * scale + offset;
          out[o + c] = t < 1 ? 1 : t >= top ? top : t | 0;
        }
      }
    }
  }
}

function anyCovered(table: Int32Array, from: number): boolean {
  for (let i = from; i < from + TILE_SIZE; i++) if (table[i] >= 0) return true;
  return false;
}

/** The palette's arithmetic as the addon takes it: scale, offset, below, top. */
const paletteArgs = new Float64Array(4);

export function createLevelSampler(grid: LatLonGrid, z: number): LevelSampler {
  validateTile(z, 0, 0);
  const nlat = grid.lat.length;
  const nlon = grid.lon.length;
  const cols = columnTable(grid.lon, z);
  const rows = rowTable(grid.lat, nlon, z);
  // Bilinear tables are made on first use: a categorical-only grid never needs them.
  let pairs: { cols: PairTable; rows: PairTable } | undefined;
  const smooth = () => {
    pairs ??= { cols: columnPairs(grid.lon, z), rows: rowPairs(grid.lat, nlon, z) };
    return pairs;
  };

  return {
    z,
    covers(x, y) {
      validateTile(z, x, y);
      return anyCovered(cols, x * TILE_SIZE) && anyCovered(rows, y * TILE_SIZE);
    },
    valueAt(col, row, field) {
      const { cols: cp, rows: rp } = smooth();
      if (!(col >= 0 && col < cp.a.length && row >= 0 && row < rp.a.length)) return Number.NaN;
      const r0 = rp.a[row];
      const c0 = cp.a[col];
      if (r0 < 0 || c0 < 0) return Number.NaN;
      return cellValue(field, r0, rp.b[row], rp.w[row], c0, cp.b[col], cp.w[col]);
    },
    renderTile(x, y, field, palette, out = new Uint8Array(TILE_SIZE * TILE_SIZE), method = "nearest") {
      validateTile(z, x, y);
      if (field.length !== nlat * nlon) {
        throw new InvalidParameterError("field", `field has ${field.length} values, grid needs ${nlat}×${nlon}`);
      }
      if (out.length !== TILE_SIZE * TILE_SIZE) throw new RangeError(`out must hold ${TILE_SIZE * TILE_SIZE} indices`);
      const lut = palette.axisLut;
      if (method === "bilinear") {
        const p = smooth();
        // The addon runs the same arithmetic in C when it is built (native/raster.h, bilinearTile).
        const addon = nativeAddon();
        if (addon) {
          const { scale, offset, below } = palette;
          paletteArgs[0] = scale;
          paletteArgs[1] = offset;
          paletteArgs[2] = below;
          paletteArgs[3] = PALETTE_COLORS;
          const { cols: c, rows: r } = p;
          addon.bilinearTile(field, c.a, c.b, c.w, r.a, r.b, r.w, x * TILE_SIZE, y * TILE_SIZE, paletteArgs, out);
        } else renderBilinear(p.cols, p.rows, x, y, field, palette, out);
        return out;
      }
      const col0 = x * TILE_SIZE;
      const row0 = y * TILE_SIZE;
      for (let r = 0; r < TILE_SIZE; r++) {
        const o = r * TILE_SIZE;
        const rowOffset = rows[row0 + r];
        // Zoomed in, several pixel rows share one lat row: copy instead of sampling again.
        if (r > 0 && rowOffset === rows[row0 + r - 1]) {
          out.copyWithin(o, o - TILE_SIZE, o);
          continue;
        }
        if (rowOffset < 0) {
          out.fill(0, o, o + TILE_SIZE);
          continue;
        }
        let lastCol = -2;
        let index = 0;
        for (let c = 0; c < TILE_SIZE; c++) {
          const col = cols[col0 + c];
          if (col !== lastCol) {
            lastCol = col;
            index = col < 0 ? 0 : lut(field[rowOffset + col]);
          }
          out[o + c] = index;
        }
      }
      return out;
    },
  };
}

/** True when every pixel has the same index, so one encoded PNG can stand for all such tiles. */
export function isUniform(indices: Uint8Array): boolean {
  const first = indices[0];
  // Compare four pixels at a time when the buffer is aligned for it.
  if (indices.byteOffset % 4 === 0 && indices.length % 4 === 0) {
    const words = new Uint32Array(indices.buffer, indices.byteOffset, indices.length / 4);
    const w = (first * 0x01010101) >>> 0;
    for (let i = 0; i < words.length; i++) if (words[i] !== w) return false;
    return true;
  }
  for (let i = 1; i < indices.length; i++) if (indices[i] !== first) return false;
  return true;
}
