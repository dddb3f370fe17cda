// The geometry of resampling a regular lat/lon grid onto mercator tiles, solved once per grid and
// zoom level: tables from world pixel column to lon index and from world pixel row to the offset
// of a lat row in the field (nearest node), or to the two bracketing nodes and the weight of the
// second (bilinear). Axes in either direction, longitudes unwrapped across the antimeridian, global
// grids wrapping at the seam, patches covering half a cell past their edge nodes.
import { InvalidParameterError } from "../errors.ts";
import { pixelLat, pixelLon, TILE_SIZE } from "./tiles.ts";

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
export function columnTable(lon: ArrayLike<number>, z: number): Int32Array {
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
export function rowTable(lat: ArrayLike<number>, nlon: number, z: number): Int32Array {
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
export interface PairTable {
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
export function columnPairs(lon: ArrayLike<number>, z: number): PairTable {
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
export function rowPairs(lat: ArrayLike<number>, nlon: number, z: number): PairTable {
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
