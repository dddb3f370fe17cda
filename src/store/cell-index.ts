// A spatial index over the cell centres of an unstructured grid, built once per grid: the sphere
// cut into latitude bands of equal height, each band into longitude buckets of about the same
// width on the ground (fewer towards the poles), the cells listed bucket by bucket. The nearest
// cell by great-circle distance is then found among the few buckets a small cap around the point
// touches, and a latitude/longitude box lists the cells of the buckets it overlaps: neither
// looks at more than a handful of cells beyond the answer, however many cells the grid has.

/** Cells per bucket the index aims at: fewer makes more empty buckets, more makes each search longer. */
export const CELLS_PER_BUCKET = 2;

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

  constructor(lat: Float64Array, lon: Float64Array) {
    const n = lat.length;
    this.#x = new Float64Array(n);
    this.#y = new Float64Array(n);
    this.#z = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const f = lat[i] * RAD;
      const l = lon[i] * RAD;
      this.#x[i] = Math.cos(f) * Math.cos(l);
      this.#y[i] = Math.cos(f) * Math.sin(l);
      this.#z[i] = Math.sin(f);
    }
    // Buckets of about CELLS_PER_BUCKET cells each, were the cells spread over the whole sphere.
    this.#nBands = Math.max(
      1,
      Math.min(180 * 64, Math.round(Math.PI / Math.sqrt((4 * Math.PI * CELLS_PER_BUCKET) / Math.max(1, n)))),
    );
    this.#band = Math.PI / this.#nBands;
    this.#cols = new Int32Array(this.#nBands);
    this.#first = new Int32Array(this.#nBands + 1);
    for (let b = 0; b < this.#nBands; b++) {
      // The band's edge nearest the equator is its widest: buckets are sized there.
      const south = -Math.PI / 2 + b * this.#band;
      const widest = Math.min(Math.abs(south), Math.abs(south + this.#band));
      const equatorial = south < 0 && south + this.#band > 0 ? 1 : Math.cos(widest);
      this.#cols[b] = Math.max(1, Math.ceil((2 * Math.PI * equatorial) / this.#band));
      this.#first[b + 1] = this.#first[b] + this.#cols[b];
    }
    const buckets = this.#first[this.#nBands];
    const bucketOf = new Int32Array(n);
    const count = new Int32Array(buckets + 1);
    for (let i = 0; i < n; i++) {
      bucketOf[i] = this.#bucket(lat[i], lon[i]);
      count[bucketOf[i] + 1]++;
    }
    for (let k = 0; k < buckets; k++) count[k + 1] += count[k];
    this.#start = count.slice();
    this.#cells = new Int32Array(n);
    const fill = count;
    for (let i = 0; i < n; i++) this.#cells[fill[bucketOf[i]]++] = i;
  }

  #bandOf(lat: number): number {
    return Math.min(this.#nBands - 1, Math.max(0, Math.floor((lat * RAD + Math.PI / 2) / this.#band)));
  }

  #colOf(band: number, lon: number): number {
    const w = (((lon + 180) % 360) + 360) % 360;
    return Math.min(this.#cols[band] - 1, Math.floor((w / 360) * this.#cols[band]));
  }

  #bucket(lat: number, lon: number): number {
    const b = this.#bandOf(lat);
    return this.#first[b] + this.#colOf(b, lon);
  }

  /**
   * The cell nearest to (lat, lon) by great-circle distance (ties to the lower cell number), and
   * that distance in radians; -1 for an empty grid. `exclude` leaves one cell out (a cell's own
   * nearest neighbour).
   */
  nearest(lat: number, lon: number, exclude = -1): { cell: number; angle: number } {
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
      const b0 = whole ? 0 : this.#bandOf(lat - r / RAD);
      const b1 = whole ? this.#nBands - 1 : this.#bandOf(lat + r / RAD);
      // Half the longitude span of the cap (all of it once the cap reaches a pole).
      const polar = Math.abs(f) + r >= Math.PI / 2;
      const half = whole || polar ? 180 : Math.asin(Math.min(1, Math.sin(r) / Math.cos(f))) / RAD;
      for (let b = b0; b <= b1; b++) {
        const ncol = this.#cols[b];
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
        for (let c = c0; c <= c1; c++) {
          const k = this.#first[b] + (c % ncol);
          for (let j = this.#start[k], end = this.#start[k + 1]; j < end; j++) {
            const i = this.#cells[j];
            if (i === exclude) continue;
            const d = this.#x[i] * qx + this.#y[i] * qy + this.#z[i] * qz;
            if (d > bestDot || (d === bestDot && i < best)) {
              bestDot = d;
              best = i;
            }
          }
          this.examined += this.#start[k + 1] - this.#start[k];
        }
      }
      const angle = best < 0 ? Number.POSITIVE_INFINITY : Math.acos(Math.min(1, Math.max(-1, bestDot)));
      if (angle <= r || whole) return { cell: best, angle };
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
