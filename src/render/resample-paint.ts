// The per-tile paint loops of lat/lon resampling: palette indices of one tile from the tables
// solved for its level (resample-tables.ts), by nearest node or bilinear. A tile is table slices, a
// few multiplies per pixel and a palette lookup; rows and column runs that repeat are copied or
// filled rather than sampled again. The addon runs renderBilinear's arithmetic in C when built.
import { PALETTE_COLORS, type Palette } from "./colormap.ts";
import type { PairTable } from "./resample-tables.ts";
import { TILE_SIZE } from "./tiles.ts";

type Field = Float32Array | Float64Array;

/** Nearest-node palette indices of tile (x, y) from the column and row tables (columnTable, rowTable). */
export function renderNearest(
  cols: Int32Array,
  rows: Int32Array,
  x: number,
  y: number,
  field: Field,
  palette: Palette,
  out: Uint8Array,
): void {
  const lut = palette.axisLut;
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
}

/** Bilinear over one cell; a missing corner gives the nearest corner's value (ties west and south). */
export function cellValue(f: Field, r0: number, r1: number, wy: number, c0: number, c1: number, wx: number): number {
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

export function renderBilinear(
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
