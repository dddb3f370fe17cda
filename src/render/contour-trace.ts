// Contour lines as geometry: what a contour layer is drawn with (ContourOptions), and its lines
// traced from a field in world pixels.
// Marching squares on a lattice of samples at multiples of `step` world pixels (the same samples
// in every tile), chained and smoothed by Chaikin corner cutting. Smoothing moves a point only by
// its near neighbours, so a margin of a few lattice steps makes the smoothed line inside the tile
// independent of where the window cut it.
import { type Field, posMod } from "./overlay-paint.ts";
import type { LevelSampler } from "./resample.ts";
import { TILE_SIZE } from "./tiles.ts";

export interface ContourOptions {
  /** Line spacing in canonical units (400 Pa = 4 hPa). */
  interval: number;
  /** Canonical value → label text, e.g. Pa → "1012". */
  label: (value: number) => string;
  /** Contouring lattice step in world pixels (default 4); about a third of a data cell suits. */
  step?: number;
  /** Chaikin smoothing passes (default: as many as keep segments about a pixel long or more, at most 4). */
  smooth?: number;
  /** Spacing of the label columns and rows in world pixels (default 256). */
  labelSpacing?: number;
  /** Two labels of one level are at least this far apart in world pixels (default 400). */
  labelDistance?: number;
  /** Label font size in pixels (default 12). */
  fontPx?: number;
  /** H/L marks: half-side in world pixels of the square a centre must be the extreme of (default 160); 0 for none. */
  extremaRadius?: number;
  /** How much lower (higher) than the highest (lowest) value of that square a centre must be (default `interval`). */
  extremaDepth?: number;
  /**
   * Pixels per screen pixel (default 1): 2 draws an @2x quarter, a tile of the next zoom with
   * lines, text, label spacing and marks twice as large, so the 512 px tile shows what the 1x tile
   * shows at the same size on screen, sharp.
   */
  scale?: number;
  /**
   * Names the line labels give way to (label-rank.ts), in the sampler's world pixels: a label
   * position whose box would come near one is no candidate, on every tile alike.
   */
  keep?: { meets(x0: number, y0: number, x1: number, y1: number): boolean };
}

/** A polyline in world pixel coordinates, x0 y0 x1 y1 …; `closed` when it returns to its start. */
export interface Contour {
  level: number;
  points: number[];
  closed: boolean;
}

export interface Lattice {
  /** World pixel of node (0, 0) and the step. */
  x0: number;
  y0: number;
  step: number;
  nx: number;
  ny: number;
  values: Float64Array;
}

/** Samples of `field` at world pixels (x0 + i·step, y0 + j·step); NaN off the world and off the grid. */
export function sampleLattice(
  sampler: LevelSampler,
  field: Field,
  x0: number,
  y0: number,
  step: number,
  nx: number,
  ny: number,
): Lattice {
  const world = 2 ** sampler.z * TILE_SIZE;
  const values = new Float64Array(nx * ny);
  for (let j = 0; j < ny; j++) {
    const wy = y0 + j * step;
    for (let i = 0; i < nx; i++) {
      values[j * nx + i] =
        wy < 0 || wy >= world ? Number.NaN : sampler.valueAt(posMod(x0 + i * step, world), wy, field);
    }
  }
  return { x0, y0, step, nx, ny, values };
}

// Marching squares: corner bits a (top left) 8, b (top right) 4, c (bottom right) 2, d (bottom
// left) 1 set where the value is at or above the level; edges T 0, R 1, B 2, L 3. Saddles (5, 10)
// are decided by the cell's mean.
const SEGMENTS: number[][] = [
  [],
  [3, 2],
  [2, 1],
  [3, 1],
  [0, 1],
  [],
  [0, 2],
  [3, 0],
  [3, 0],
  [0, 2],
  [],
  [0, 1],
  [3, 1],
  [2, 1],
  [3, 2],
  [],
];

/**
 * Contour polylines of `field` at every multiple of `interval` over the world pixel window
 * [wx0, wx1) × [wy0, wy1), from the lattice at multiples of `step`, smoothed.
 */
export function traceContours(
  sampler: LevelSampler,
  field: Field,
  window: [number, number, number, number],
  interval: number,
  step = 4,
  smooth = 3,
): Contour[] {
  const [wx0, wy0, wx1, wy1] = window;
  const i0 = Math.floor(wx0 / step);
  const j0 = Math.floor(wy0 / step);
  const nx = Math.ceil(wx1 / step) - i0 + 1;
  const ny = Math.ceil(wy1 / step) - j0 + 1;
  const lat = sampleLattice(sampler, field, i0 * step, j0 * step, step, nx, ny);
  const v = lat.values;
  // Points by edge id (horizontal edge (i,j)-(i+1,j): 2k, vertical (i,j)-(i,j+1): 2k+1, k = j·nx + i).
  const byLevel = new Map<number, Map<number, number[]>>();
  const link = (level: number, e1: number, e2: number) => {
    let adj = byLevel.get(level);
    if (!adj) byLevel.set(level, (adj = new Map()));
    for (const [a, b] of [
      [e1, e2],
      [e2, e1],
    ]) {
      const list = adj.get(a);
      if (list) list.push(b);
      else adj.set(a, [b]);
    }
  };
  for (let j = 0; j + 1 < ny; j++) {
    for (let i = 0; i + 1 < nx; i++) {
      const k = j * nx + i;
      const a = v[k];
      const b = v[k + 1];
      const c = v[k + nx + 1];
      const d = v[k + nx];
      if (Number.isNaN(a + b + c + d)) continue; // NaN corner: no line
      const lo = Math.min(a, b, c, d);
      const hi = Math.max(a, b, c, d);
      const edges = [2 * k, 2 * (k + 1) + 1, 2 * (k + nx), 2 * k + 1];
      for (let l = Math.ceil(lo / interval); l * interval <= hi; l++) {
        const level = l * interval;
        const kase = (a >= level ? 8 : 0) | (b >= level ? 4 : 0) | (c >= level ? 2 : 0) | (d >= level ? 1 : 0);
        if (kase === 5 || kase === 10) {
          const centreAbove = (a + b + c + d) / 4 >= level;
          // 5: b, d above. 10: a, c above. The isolated corners are the ones on the other side of the centre.
          const cutAC = (kase === 5) === centreAbove;
          if (cutAC) {
            link(l, edges[3], edges[0]);
            link(l, edges[2], edges[1]);
          } else {
            link(l, edges[0], edges[1]);
            link(l, edges[3], edges[2]);
          }
          continue;
        }
        const seg = SEGMENTS[kase];
        if (seg.length) link(l, edges[seg[0]], edges[seg[1]]);
      }
    }
  }
  // An edge point in world pixels (sample positions are pixel centres), interpolated the same way
  // whichever cell asks.
  const point = (edge: number, level: number, out: number[]) => {
    const k = edge >> 1;
    const i = k % nx;
    const j = (k - i) / nx;
    const va = v[k];
    const vb = edge & 1 ? v[k + nx] : v[k + 1];
    const t = vb === va ? 0.5 : (level - va) / (vb - va);
    const x = lat.x0 + i * step + 0.5;
    const y = lat.y0 + j * step + 0.5;
    if (edge & 1) out.push(x, y + t * step);
    else out.push(x + t * step, y);
  };
  const contours: Contour[] = [];
  for (const [l, adj] of byLevel) {
    const level = l * interval;
    const seen = new Set<number>();
    const walk = (start: number): Contour => {
      const chain: number[] = [];
      let prev = -1;
      let at = start;
      for (;;) {
        seen.add(at);
        point(at, level, chain);
        const next = (adj.get(at) ?? []).find((e) => e !== prev && !seen.has(e));
        if (next === undefined) {
          const closed = chain.length > 4 && (adj.get(at) ?? []).includes(start) && at !== start;
          return { level: l, points: chain, closed };
        }
        prev = at;
        at = next;
      }
    };
    // Open lines from their ends first, then the loops left over.
    for (const [e, list] of adj) if (list.length === 1 && !seen.has(e)) contours.push(walk(e));
    for (const e of adj.keys()) if (!seen.has(e)) contours.push(walk(e));
  }
  for (const c of contours) for (let p = 0; p < smooth; p++) c.points = chaikin(c.points, c.closed);
  return contours;
}

/** One pass of Chaikin corner cutting; open lines keep their end points. */
export function chaikin(p: number[], closed: boolean): number[] {
  const n = p.length / 2;
  if (n < 3) return p;
  const out: number[] = [];
  if (!closed) out.push(p[0], p[1]);
  const segs = closed ? n : n - 1;
  for (let s = 0; s < segs; s++) {
    const a = s * 2;
    const b = ((s + 1) % n) * 2;
    out.push(0.75 * p[a] + 0.25 * p[b], 0.75 * p[a + 1] + 0.25 * p[b + 1]);
    out.push(0.25 * p[a] + 0.75 * p[b], 0.25 * p[a + 1] + 0.75 * p[b + 1]);
  }
  if (!closed) out.push(p[2 * n - 2], p[2 * n - 1]);
  return out;
}
