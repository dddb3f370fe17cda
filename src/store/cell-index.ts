// A spatial index over the cell centres of an unstructured grid, built once per grid: the sphere
// cut into latitude bands of equal height, each band into longitude buckets of about the same
// width on the ground (fewer towards the poles), the cells listed bucket by bucket. The nearest
// cell by great-circle distance is then found among the few buckets a small cap around the point
// touches, and a latitude/longitude box lists the cells of the buckets it overlaps: neither
// looks at more than a handful of cells beyond the answer, however many cells the grid has.

/** Cells per bucket the index aims at: fewer makes more empty buckets, more makes each search longer. */
export const CELLS_PER_BUCKET = 2;

import { nativeAddon } from "../native.ts";

const RAD = Math.PI / 180;

export class CellIndex {
  /** Unit vectors of the cell centres: comparing dot products ranks great-circle distances. */
  readonly #x: Float64Array;
  readonly #y: Float64Array;
  readonly #z: Float64Array;
  /** Band height and the nominal bucket size, in radians. */
  readonly #band: number;
  readonly #nBands: number;
  /** Per band: its number of longitude buckets, and the index of its first bucket. */
  readonly #cols: Int32Array;
  readonly #first: Int32Array;
  /** Per bucket, where its cells start in `#cells` (one more entry than buckets). */
  readonly #start: Int32Array;
  /** Cell numbers, bucket by bucket, ascending within each. */
  readonly #cells: Int32Array;
  /** Cells compared by the searches so far (tests check it stays small). */
  examined = 0;
  #near?: Neighbourhood;
  /** Runs of `#cells` a cap touches (see #capRanges): two pairs per band at the most. */
  readonly #ranges: Int32Array;

  /** The index of the cells at (lat, lon), made at once (see build for one made between other work). */
  constructor(lat: Float64Array, lon: Float64Array, parts?: IndexParts) {
    if (!parts) {
      const steps = indexParts(lat, lon);
      let r = steps.next();
      while (!r.done) r = steps.next();
      parts = r.value;
    }
    this.#x = parts.x;
    this.#y = parts.y;
    this.#z = parts.z;
    this.#nBands = parts.nBands;
    this.#ranges = new Int32Array(4 * parts.nBands);
    this.#band = Math.PI / parts.nBands;
    this.#cols = parts.cols;
    this.#first = parts.first;
    this.#start = parts.start;
    this.#cells = parts.cells;
  }

  /**
   * The same index, made a slice of INDEX_SLICE cells at a time with the event loop let run
   * between slices: a server making the index of a grid of millions of cells keeps answering
   * (/healthz, other groups) meanwhile.
   */
  static async build(lat: Float64Array, lon: Float64Array): Promise<CellIndex> {
    const steps = indexParts(lat, lon);
    let r = steps.next();
    while (!r.done) {
      await new Promise<void>((ok) => setImmediate(ok));
      r = steps.next();
    }
    return new CellIndex(lat, lon, r.value);
  }

  /** Unit vectors of the cell centres (x, y, z), for callers that rank many points against a few cells. */
  get vectors(): { x: Float64Array; y: Float64Array; z: Float64Array } {
    return { x: this.#x, y: this.#y, z: this.#z };
  }

  /**
   * Every cell's NEIGHBOURS nearest other cells, nearest first, with bounds that let a caller
   * walking from cell to cell (pixels of a tile, one after the other) prove an answer without a
   * search: a point within half the distance from cell c to a cell is nearer to c than to that
   * cell (and than to any cell farther from c); so within half the distance to c's nearest
   * neighbour, c is its nearest, and within half the distance to c's farthest listed neighbour,
   * its nearest is c or a listed one. Made on first use, once per grid.
   */
  neighbourhood(): Neighbourhood {
    if (this.#near) return this.#near;
    const n = this.#x.length;
    const k = Math.min(NEIGHBOURS, n - 1);
    const list = new Int32Array(n * k);
    const half = new Float32Array(n * k);
    const outer = new Float64Array(n);
    const addon = nativeAddon();
    if (addon?.cellNeighbours) {
      addon.cellNeighbours(
        this.#x,
        this.#y,
        this.#z,
        this.#cells,
        this.#start,
        this.#cols,
        this.#first,
        k,
        COS_MARGIN,
        SIN_MARGIN,
        list,
        half,
        outer,
      );
    } else {
      const bits = new Int32Array(half.buffer);
      const dots = new Float64Array(k);
      const ids = new Int32Array(k);
      for (let i = 0; i < n; i++) {
        this.#knn(i, k, ids, dots);
        list.set(ids, i * k);
        for (let j = 0; j < k; j++) {
          // Stored as the float32 at or above the bound: it proves a little less than it could, never more.
          const v = halfBound(dots[j]);
          const e = i * k + j;
          half[e] = v;
          // Rounded down: one float32 step up (towards zero for a negative one).
          if (half[e] < v) bits[e] += half[e] > 0 ? 1 : half[e] < 0 ? -1 : 0;
          if (half[e] < v) half[e] = MIN_FLOAT32;
        }
        outer[i] = halfBound(dots[k - 1]);
      }
    }
    this.#near = { k, list, half, outer };
    return this.#near;
  }

  /** The k cells nearest to cell i (itself left out) into ids, nearest first, their dot products into dots. */
  #knn(i: number, k: number, ids: Int32Array, dots: Float64Array): void {
    const qx = this.#x[i];
    const qy = this.#y[i];
    const qz = this.#z[i];
    const lat = Math.asin(Math.max(-1, Math.min(1, qz))) / RAD;
    const lon = Math.atan2(qy, qx) / RAD;
    // A cap of two bands' radius holds about 25 cells: mostly enough for NEIGHBOURS at once.
    for (let r = 2 * this.#band; ; r *= 2) {
      let found = 0;
      const whole = r >= Math.PI;
      const ranges = this.#capRanges(lat, lon, r);
      for (let q = 0; q < ranges; q += 2) {
        for (let j = this.#ranges[q], end = this.#ranges[q + 1]; j < end; j++) {
          const m = this.#cells[j];
          if (m === i) continue;
          const d = this.#x[m] * qx + this.#y[m] * qy + this.#z[m] * qz;
          if (found === k && !(d > dots[k - 1] || (d === dots[k - 1] && m < ids[k - 1]))) continue;
          // Insertion into the sorted list (nearest first, ties by lower cell number).
          let p = found < k ? found++ : k - 1;
          while (p > 0 && (dots[p - 1] < d || (dots[p - 1] === d && ids[p - 1] > m))) {
            dots[p] = dots[p - 1];
            ids[p] = ids[p - 1];
            p--;
          }
          dots[p] = d;
          ids[p] = m;
        }
      }
      // Done once the cap holds k cells and the k-th lies within it (nothing outside is nearer).
      if (whole || (found === k && Math.acos(Math.min(1, dots[k - 1])) <= r)) return;
    }
  }

  /**
   * The cells of the buckets a cap of radius r (radians) around (lat, lon) touches, as runs of
   * `#cells` into `#ranges` (start, end pairs: buckets are stored in order, so a band's run of
   * buckets is one run of cells, two across the seam); returns the number of entries written.
   */
  #capRanges(lat: number, lon: number, r: number): number {
    const f = lat * RAD;
    const whole = r >= Math.PI;
    const b0 = whole ? 0 : this.#bandOf(lat - r / RAD);
    const b1 = whole ? this.#nBands - 1 : this.#bandOf(lat + r / RAD);
    // Half the longitude span of the cap (all of it once the cap reaches a pole).
    const polar = Math.abs(f) + r >= Math.PI / 2;
    const half = whole || polar ? 180 : Math.asin(Math.min(1, Math.sin(r) / Math.cos(f))) / RAD;
    let q = 0;
    for (let b = b0; b <= b1; b++) {
      const ncol = this.#cols[b];
      const first = this.#first[b];
      let c0 = 0;
      let c1 = ncol - 1;
      if (half < 180) {
        c0 = this.#colOf(b, lon - half);
        c1 = this.#colOf(b, lon + half);
        // Past the seam: c1 counted one turn on.
        if (c1 < c0 || (c1 === c0 && 2 * half >= 360 / ncol)) c1 += ncol;
      }
      if (c1 - c0 >= ncol) {
        c0 = 0;
        c1 = ncol - 1;
      }
      this.#ranges[q++] = this.#start[first + c0];
      this.#ranges[q++] = this.#start[first + Math.min(c1, ncol - 1) + 1];
      if (c1 >= ncol) {
        this.#ranges[q++] = this.#start[first];
        this.#ranges[q++] = this.#start[first + c1 - ncol + 1];
      }
    }
    return q;
  }

  #bandOf(lat: number): number {
    return bandOf(this.#nBands, lat);
  }

  #colOf(band: number, lon: number): number {
    return colOf(this.#cols[band], lon);
  }

  /**
   * The cell nearest to (lat, lon) by great-circle distance (ties to the lower cell number), and
   * that distance in radians; -1 for an empty grid. `exclude` leaves one cell out (a cell's own
   * nearest neighbour). With `within`, the search gives up once no cell can lie that close (cell
   * -1, angle Infinity): a point far outside a regional grid costs no more than one inside.
   */
  nearest(lat: number, lon: number, exclude = -1, within = Number.POSITIVE_INFINITY): { cell: number; angle: number } {
    const f = lat * RAD;
    const l = lon * RAD;
    const qx = Math.cos(f) * Math.cos(l);
    const qy = Math.cos(f) * Math.sin(l);
    const qz = Math.sin(f);
    let best = -1;
    let bestDot = Number.NEGATIVE_INFINITY;
    // Search a cap of radius r; once the best cell found lies within r, no cell outside the cap
    // can be nearer. Otherwise double r.
    for (let r = this.#band; ; r *= 2) {
      const whole = r >= Math.PI;
      const ranges = this.#capRanges(lat, lon, r);
      for (let q = 0; q < ranges; q += 2) {
        const end = this.#ranges[q + 1];
        for (let j = this.#ranges[q]; j < end; j++) {
          const i = this.#cells[j];
          if (i === exclude) continue;
          const d = this.#x[i] * qx + this.#y[i] * qy + this.#z[i] * qz;
          if (d > bestDot || (d === bestDot && i < best)) {
            bestDot = d;
            best = i;
          }
        }
        this.examined += end - this.#ranges[q];
      }
      const angle = best < 0 ? Number.POSITIVE_INFINITY : Math.acos(Math.min(1, Math.max(-1, bestDot)));
      if (angle <= r || whole)
        return angle <= within ? { cell: best, angle } : { cell: -1, angle: Number.POSITIVE_INFINITY };
      if (r >= within) return { cell: -1, angle: Number.POSITIVE_INFINITY };
    }
  }

  /**
   * Calls `visit` with every cell whose bucket overlaps the box (lat_min..lat_max, and longitudes
   * eastward from lonMin over `lonSpan` degrees): a superset of the cells inside it, each once.
   */
  eachNear(latMin: number, latMax: number, lonMin: number, lonSpan: number, visit: (cell: number) => void): void {
    const b0 = this.#bandOf(latMin);
    const b1 = this.#bandOf(latMax);
    for (let b = b0; b <= b1; b++) {
      const ncol = this.#cols[b];
      const c0 = this.#colOf(b, lonMin);
      let c1 = lonSpan >= 360 ? c0 + ncol - 1 : this.#colOf(b, lonMin + lonSpan);
      if (c1 < c0) c1 += ncol;
      for (let c = c0; c <= Math.min(c1, c0 + ncol - 1); c++) {
        const k = this.#first[b] + (c % ncol);
        for (let j = this.#start[k]; j < this.#start[k + 1]; j++) visit(this.#cells[j]);
      }
    }
  }
}

/** Neighbours listed per cell for walking from cell to cell (an icosahedral triangle touches 12). */
export const NEIGHBOURS = 12;
/** The smallest positive float32. */
const MIN_FLOAT32 = 1.401298464324817e-45;
/** Radians taken off the bounds a walk proves its answers with, against rounding. */
const PROOF_MARGIN = 1e-9;
const COS_MARGIN = Math.cos(PROOF_MARGIN);
const SIN_MARGIN = Math.sin(PROOF_MARGIN);

/**
 * cos(max(0, θ/2 − PROOF_MARGIN)) for the angle θ between two cells whose dot product is d: the
 * least dot product with the first that proves a point nearer to it than to the second. Made of
 * θ/2's cosine and sine as square roots of (1 ± d)/2, so that the addon (native/cell-neighbours.h),
 * with the same operations, gives the same bits.
 */
function halfBound(d: number): number {
  const c = Math.min(1, Math.max(-1, d));
  const s = Math.sqrt((1 - c) / 2);
  if (s <= SIN_MARGIN) return 1;
  return Math.sqrt((1 + c) / 2) * COS_MARGIN + s * SIN_MARGIN;
}

export interface Neighbourhood {
  /** Neighbours per cell. */
  k: number;
  /** Cell i's neighbours, nearest first, at list[i·k .. i·k + k). */
  list: Int32Array;
  /**
   * Per listed neighbour j of cell i (same place as in `list`), the cosine of half their distance:
   * a point whose dot product with cell i is at least that is nearer to cell i than to neighbour j
   * and to every neighbour listed after j (and, from the first entry on, than to any cell at all).
   */
  half: Float32Array;
  /** A point whose dot product with cell i is at least outer[i] has its nearest among cell i and its listed neighbours. */
  outer: Float64Array;
}

/** Cells an index is made over between two turns of the event loop (CellIndex.build): a few milliseconds' work. */
export const INDEX_SLICE = 16_384;

interface IndexParts {
  x: Float64Array;
  y: Float64Array;
  z: Float64Array;
  nBands: number;
  cols: Int32Array;
  first: Int32Array;
  start: Int32Array;
  cells: Int32Array;
}

/** The parts of an index, made in steps: it yields after every INDEX_SLICE cells of work. */
function* indexParts(lat: Float64Array, lon: Float64Array): Generator<void, IndexParts> {
  const n = lat.length;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const z = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const f = lat[i] * RAD;
    const l = lon[i] * RAD;
    x[i] = Math.cos(f) * Math.cos(l);
    y[i] = Math.cos(f) * Math.sin(l);
    z[i] = Math.sin(f);
    if (i % INDEX_SLICE === INDEX_SLICE - 1) yield;
  }
  // Buckets of about CELLS_PER_BUCKET cells each were the cells spread over the whole sphere; a
  // regional grid crowds its buckets, so they are made finer by how crowded the occupied ones are.
  let bands = Math.round(Math.PI / Math.sqrt((4 * Math.PI * CELLS_PER_BUCKET) / Math.max(1, n)));
  // About 4/π · bands² buckets in all: bounded by BUCKETS_PER_CELL per cell.
  const most = Math.floor(Math.sqrt((Math.PI * (BUCKETS_PER_CELL * n + 1024)) / 4));
  const clampBands = (b: number) => Math.max(MIN_BANDS, Math.min(MAX_BANDS, most, b));
  let layout = yield* bucketLayout(lat, lon, clampBands(bands));
  const crowding = n / Math.max(1, layout.occupied) / CELLS_PER_BUCKET;
  if (crowding > 2) {
    bands = Math.round(bands * Math.sqrt(crowding));
    layout = yield* bucketLayout(lat, lon, clampBands(bands));
  }
  const buckets = layout.first[layout.nBands];
  const count = new Int32Array(buckets + 1);
  for (let i = 0; i < n; i++) {
    count[layout.bucketOf[i] + 1]++;
    if (i % INDEX_SLICE === INDEX_SLICE - 1) yield;
  }
  for (let k = 0; k < buckets; k++) count[k + 1] += count[k];
  yield;
  const start = count.slice();
  const cells = new Int32Array(n);
  const fill = count;
  for (let i = 0; i < n; i++) {
    cells[fill[layout.bucketOf[i]]++] = i;
    if (i % INDEX_SLICE === INDEX_SLICE - 1) yield;
  }
  return { x, y, z, nBands: layout.nBands, cols: layout.cols, first: layout.first, start, cells };
}

/** Fewest and most latitude bands an index uses. */
const MIN_BANDS = 1;
const MAX_BANDS = 180 * 64;
/** Buckets an index may make per cell (a regional grid's finer buckets span the whole sphere too). */
const BUCKETS_PER_CELL = 8;

function bandOf(nBands: number, lat: number): number {
  return Math.min(nBands - 1, Math.max(0, Math.floor(((lat * RAD + Math.PI / 2) / Math.PI) * nBands)));
}

function colOf(ncol: number, lon: number): number {
  const w = (((lon + 180) % 360) + 360) % 360;
  return Math.min(ncol - 1, Math.floor((w / 360) * ncol));
}

/** Buckets of `nBands` bands, each band cut into buckets about as wide on the ground as the band is high. */
function* bucketLayout(lat: Float64Array, lon: Float64Array, nBands: number) {
  const band = Math.PI / nBands;
  const cols = new Int32Array(nBands);
  const first = new Int32Array(nBands + 1);
  for (let b = 0; b < nBands; b++) {
    // The band's edge nearest the equator is its widest: buckets are sized there.
    const south = -Math.PI / 2 + b * band;
    const widest = south < 0 && south + band > 0 ? 1 : Math.cos(Math.min(Math.abs(south), Math.abs(south + band)));
    cols[b] = Math.max(1, Math.ceil((2 * Math.PI * widest) / band));
    first[b + 1] = first[b] + cols[b];
  }
  const bucketOf = new Int32Array(lat.length);
  const seen = new Uint8Array(first[nBands]);
  let occupied = 0;
  for (let i = 0; i < lat.length; i++) {
    const b = bandOf(nBands, lat[i]);
    const k = first[b] + colOf(cols[b], lon[i]);
    bucketOf[i] = k;
    if (!seen[k]) {
      seen[k] = 1;
      occupied++;
    }
    if (i % INDEX_SLICE === INDEX_SLICE - 1) yield;
  }
  return { nBands, cols, first, bucketOf, occupied };
}
