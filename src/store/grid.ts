// Nearest-node search on a sorted 1-D coordinate (ascending or descending), and longitude wrapping.

/** Wrap any longitude into [-180, 180). */
export function wrap180(lon: number): number {
  const w = ((((lon + 180) % 360) + 360) % 360) - 180;
  return w === 180 ? -180 : w;
}

/** Wrap any longitude into [0, 360). */
export function wrap360(lon: number): number {
  return ((lon % 360) + 360) % 360;
}

/**
 * Index of the coordinate nearest to `v` in a monotonic array. An exact midpoint goes to the
 * smaller coordinate (south/west), so every storage order picks the same physical node — and the
 * same node the tile renderer colours a pixel with.
 */
export function nearestIndex(coords: ArrayLike<number>, v: number): number {
  const n = coords.length;
  if (n === 1) return 0;
  const asc = coords[n - 1] >= coords[0];
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (coords[mid] < v === asc) lo = mid;
    else hi = mid;
  }
  const dLo = Math.abs(coords[lo] - v);
  const dHi = Math.abs(coords[hi] - v);
  if (dLo !== dHi) return dLo < dHi ? lo : hi;
  return coords[lo] <= coords[hi] ? lo : hi;
}

/** Half-open index range [a, b) of the coordinates lying within [lo, hi] (in either order of storage). */
export function indexRange(coords: ArrayLike<number>, lo: number, hi: number): [number, number] {
  let a = -1;
  let b = -1;
  for (let i = 0; i < coords.length; i++) {
    if (coords[i] >= lo && coords[i] <= hi) {
      if (a < 0) a = i;
      b = i + 1;
    }
  }
  return a < 0 ? [0, 0] : [a, b];
}

/** The smallest arc of longitude holding every one of `lons` (-180..180): its west end and its span in degrees (the circle less its widest gap). */
export function smallestArc(lons: ArrayLike<number>): { west: number; span: number } {
  const sorted = Float64Array.from(lons, wrap180).sort();
  let gap = 360 - (sorted[sorted.length - 1] - sorted[0]);
  let west = sorted[0];
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] - sorted[i - 1] > gap) {
      gap = sorted[i] - sorted[i - 1];
      west = sorted[i];
    }
  }
  return { west, span: 360 - gap };
}
