// H/L marks: the pressure centres of a field near a tile. Lattice points that are the lowest
// (highest) sample of the square around them, by a margin, ties broken by world position; the
// lattice is world-aligned, so neighbouring tiles find the same centres.
import { sampleLattice } from "./contour-trace.ts";
import { type Field, posMod } from "./overlay-paint.ts";
import type { LevelSampler } from "./resample.ts";
import { TILE_SIZE } from "./tiles.ts";

export interface Extremum {
  kind: "H" | "L";
  /** World pixels. */
  x: number;
  y: number;
  value: number;
}

/** Pressure centres whose marks may reach into the world pixel rectangle `area` (see the file header). */
export function findExtrema(
  sampler: LevelSampler,
  field: Field,
  area: [number, number, number, number],
  radius: number,
  depth: number,
  scale = 1,
): Extremum[] {
  const world = 2 ** sampler.z * TILE_SIZE;
  // Lattice step in world pixels: 8 screen pixels, so an @2x quarter (the next zoom's sampler at
  // scale 2) searches the same field lattice as the 1x tile of the zoom on screen, not four times
  // as many points with twice the reach.
  const q = 8 * scale;
  const r = Math.max(1, Math.round(Math.min(radius, world / 4) / q));
  const reach = 24 * scale; // half a mark
  const [ax0, ay0, ax1, ay1] = area;
  const i0 = Math.floor((ax0 - reach) / q) - r;
  const j0 = Math.floor((ay0 - reach) / q) - r;
  const nx = Math.ceil((ax1 + reach) / q) + r - i0 + 1;
  const ny = Math.ceil((ay1 + reach) / q) + r - j0 + 1;
  const { values } = sampleLattice(sampler, field, i0 * q, j0 * q, q, nx, ny);
  // Separable square min and max filters; a missing sample counts as −∞ for the min and +∞ for
  // the max, so no centre is claimed next to missing data.
  const filter = (low: boolean): Float64Array => {
    const missing = low ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    const src = new Float64Array(nx * ny);
    for (let k = 0; k < src.length; k++) src[k] = Number.isNaN(values[k]) ? missing : values[k];
    const tmp = new Float64Array(nx * ny).fill(missing);
    const out = new Float64Array(nx * ny).fill(missing);
    for (let j = 0; j < ny; j++) {
      for (let i = r; i < nx - r; i++) {
        let m = src[j * nx + i - r];
        for (let k = j * nx + i - r + 1; k <= j * nx + i + r; k++) {
          const s = src[k];
          if (low ? s < m : s > m) m = s;
        }
        tmp[j * nx + i] = m;
      }
    }
    for (let j = r; j < ny - r; j++) {
      for (let i = r; i < nx - r; i++) {
        let m = tmp[(j - r) * nx + i];
        for (let k = (j - r + 1) * nx + i; k <= (j + r) * nx + i; k += nx) {
          const s = tmp[k];
          if (low ? s < m : s > m) m = s;
        }
        out[j * nx + i] = m;
      }
    }
    return out;
  };
  const lo = filter(true);
  const hi = filter(false);
  const out: Extremum[] = [];
  const key = (i: number, j: number) => (j0 + j) * world + posMod(i0 + i, world / q);
  for (let j = r; j < ny - r; j++) {
    const wy = (j0 + j) * q;
    if (wy + 0.5 < ay0 - reach || wy + 0.5 > ay1 + reach) continue;
    for (let i = r; i < nx - r; i++) {
      const wx = (i0 + i) * q;
      if (wx + 0.5 < ax0 - reach || wx + 0.5 > ax1 + reach) continue;
      const k = j * nx + i;
      const val = values[k];
      if (Number.isNaN(val)) continue;
      for (const kind of ["L", "H"] as const) {
        const extreme = kind === "L" ? lo[k] : hi[k];
        const other = kind === "L" ? hi[k] : lo[k];
        if (val !== extreme || !Number.isFinite(other) || Math.abs(other - val) < depth) continue;
        // Ties on a flat centre: the first in world order wins.
        let wins = true;
        for (let dj = -r; dj <= r && wins; dj++) {
          for (let di = -r; di <= r; di++) {
            if ((di || dj) && values[k + dj * nx + di] === val && key(i + di, j + dj) < key(i, j)) {
              wins = false;
              break;
            }
          }
        }
        if (wins) out.push({ kind, x: wx + 0.5, y: wy + 0.5, value: val });
      }
    }
  }
  return out;
}
