// Transparent overlay tiles drawn from fields rather than coloured by them: wind arrows scaled by
// speed, and isobars with labels along the lines and H/L marks at pressure centres. Everything is
// anti-aliased into an RGBA tile (partial alpha at every edge).
//
// Seams: all geometry lives in world pixels of the zoom level and each tile is computed from a
// window larger than itself, so whatever crosses a tile edge is drawn the same on both sides.
// - Isobars: marching squares on a lattice of samples at multiples of `step` world pixels (the
//   same samples in every tile), chained and smoothed by Chaikin corner cutting. Smoothing moves a
//   point only by its near neighbours, so a margin of a few lattice steps makes the smoothed
//   line inside the tile independent of where the window cut it.
// - Labels: candidates where a line crosses a sparse lattice of label columns (flat lines) and
//   rows (steep lines); a candidate is drawn when it outranks (deterministic hash of its world
//   position and level) every candidate of the same level within `labelDistance` and every label
//   it would overlap. That rule looks only at candidates within a bounded distance, and every tile
//   computes all of them within that distance of itself: neighbouring tiles agree, and a label on
//   a seam is drawn half in each tile, once.
// - H/L: lattice points that are the lowest (highest) sample of the square around them, by a
//   margin, ties broken by world position.
// - Arrows: a staggered world lattice whose spacing follows the zoom and the data's resolution.
import type { LevelSampler } from "./resample.ts";
import { blendPixel, cachedLabelMask, type LabelMask, labelMask } from "./text.ts";
import { TILE_SIZE } from "./tiles.ts";

type Field = Float32Array | Float64Array;
type RGBA = [number, number, number, number];

export const OVERLAY_BYTES = TILE_SIZE * TILE_SIZE * 4;
/** Line and arrow colour (dark slate) and the light halo under them. */
export const LINE_COLOUR: RGBA = [44, 54, 68, 235];
export const HALO_COLOUR: RGBA = [255, 255, 255, 150];
export const TEXT_COLOUR: RGBA = [18, 22, 30, 255];
export const LABEL_HALO: RGBA = [255, 255, 255, 225];
export const HIGH_COLOUR: RGBA = [20, 60, 170, 255];
export const LOW_COLOUR: RGBA = [175, 25, 25, 255];

const LABEL_PX = 12;
const MARK_PX = 22;
/** The centre's value under an H or L, in digits of this size. */
const MARK_VALUE_PX = 11;
const LABEL_STYLE = { halo: 2, weight: 600 } as const;
const MARK_STYLE = { halo: 2.5, weight: 700 } as const;

const posMod = (a: number, n: number): number => ((a % n) + n) % n;

/** Per-pixel coverage (0..1) of one layer of strokes, combined by max so joints do not darken. */
type Coverage = Float32Array;

function strokeSegment(cov: Coverage, x0: number, y0: number, x1: number, y1: number, hw: number): void {
  const reach = hw + 1;
  const minX = Math.max(0, Math.floor(Math.min(x0, x1) - reach));
  const maxX = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(x0, x1) + reach));
  const minY = Math.max(0, Math.floor(Math.min(y0, y1) - reach));
  const maxY = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(y0, y1) + reach));
  if (minX > maxX || minY > maxY) return;
  const dx = x1 - x0;
  const dy = y1 - y0;
  const len2 = dx * dx + dy * dy;
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const cx = px + 0.5 - x0;
      const cy = py + 0.5 - y0;
      const t = len2 > 0 ? Math.max(0, Math.min(1, (cx * dx + cy * dy) / len2)) : 0;
      const ex = cx - t * dx;
      const ey = cy - t * dy;
      const c = hw + 0.5 - Math.sqrt(ex * ex + ey * ey);
      if (c <= 0) continue;
      const k = py * TILE_SIZE + px;
      const v = c >= 1 ? 1 : c;
      if (v > cov[k]) cov[k] = v;
    }
  }
}

/** Fills the triangle (a, b, c) with anti-aliased edges, grown by `grow` pixels (for its halo). */
function fillTriangle(cov: Coverage, p: number[], grow: number): void {
  const xs = [p[0], p[2], p[4]];
  const ys = [p[1], p[3], p[5]];
  const minX = Math.max(0, Math.floor(Math.min(...xs) - grow - 1));
  const maxX = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(...xs) + grow + 1));
  const minY = Math.max(0, Math.floor(Math.min(...ys) - grow - 1));
  const maxY = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(...ys) + grow + 1));
  const area = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (ys[1] - ys[0]) * (xs[2] - xs[0]);
  const sign = area >= 0 ? 1 : -1;
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const cx = px + 0.5;
      const cy = py + 0.5;
      // Signed distance to the triangle: the largest signed distance outside any edge's line.
      let sd = Number.NEGATIVE_INFINITY;
      for (let e = 0; e < 3; e++) {
        const ax = xs[e];
        const ay = ys[e];
        const bx = xs[(e + 1) % 3];
        const by = ys[(e + 1) % 3];
        const ex = bx - ax;
        const ey = by - ay;
        const len = Math.hypot(ex, ey) || 1;
        // Outward normal: for counter-clockwise (sign>0 in screen coordinates) it is (ey, -ex).
        const d = (sign * ((cx - ax) * ey - (cy - ay) * ex)) / len;
        if (d > sd) sd = d;
      }
      const c = 0.5 + grow - sd;
      if (c <= 0) continue;
      const k = py * TILE_SIZE + px;
      const v = c >= 1 ? 1 : c;
      if (v > cov[k]) cov[k] = v;
    }
  }
}

/** Source-over of a coverage layer in one colour onto the tile. */
function paint(rgba: Uint8Array, cov: Coverage, [r, g, b, a]: RGBA): void {
  const alpha = a / 255;
  for (let k = 0; k < cov.length; k++) {
    const c = cov[k];
    if (c > 0) blendPixel(rgba, k * 4, r, g, b, c * alpha);
  }
}

// ---------------------------------------------------------------- palette

/** The dark end of the grey axis every line, arrow, halo and label pixel lies on. */
const AXIS_DARK = [20, 26, 36];
const AXIS_STEPS = 15;
const ALPHA_STEPS = 15;

/**
 * A fixed palette for overlay tiles: index 0 transparent; 15 shades from slate to white × 15
 * alpha levels (lines, arrows, halos, labels); the H and L colours × 15 alpha levels. RGBA tiles
 * quantised to it (quantizeOverlay) are written as indexed PNG at a sixth to a tenth of the
 * bytes, still with partial alpha along every edge (BENCHMARKS.md).
 */
export const OVERLAY_PALETTE = (() => {
  const p = new Uint8Array(256 * 4);
  let k = 1;
  for (let t = 0; t < AXIS_STEPS; t++) {
    const f = t / (AXIS_STEPS - 1);
    for (let a = 1; a <= ALPHA_STEPS; a++, k++) {
      p.set(
        [0, 1, 2].map((c) => Math.round(AXIS_DARK[c] + f * (255 - AXIS_DARK[c]))),
        k * 4,
      );
      p[k * 4 + 3] = Math.round((a * 255) / ALPHA_STEPS);
    }
  }
  for (const colour of [HIGH_COLOUR, LOW_COLOUR]) {
    for (let a = 1; a <= ALPHA_STEPS; a++, k++) {
      p.set(colour.slice(0, 3), k * 4);
      p[k * 4 + 3] = Math.round((a * 255) / ALPHA_STEPS);
    }
  }
  return p;
})();
const HIGH_BASE = 1 + AXIS_STEPS * ALPHA_STEPS;
const LOW_BASE = HIGH_BASE + ALPHA_STEPS;

/** RGBA overlay pixels → OVERLAY_PALETTE indices (nearest shade and alpha level). */
export function quantizeOverlay(rgba: Uint8Array, out: Uint8Array): Uint8Array {
  const darkMean = (AXIS_DARK[0] + AXIS_DARK[1] + AXIS_DARK[2]) / 3;
  for (let i = 0, k = 0; i < out.length; i++, k += 4) {
    const alpha = rgba[k + 3];
    if (alpha === 0) {
      out[i] = 0;
      continue;
    }
    const a = Math.max(1, Math.round((alpha * ALPHA_STEPS) / 255));
    const r = rgba[k];
    const g = rgba[k + 1];
    const b = rgba[k + 2];
    if (b - r > 60) out[i] = HIGH_BASE + a - 1;
    else if (r - b > 60) out[i] = LOW_BASE + a - 1;
    else {
      const t = Math.round((((r + g + b) / 3 - darkMean) / (255 - darkMean)) * (AXIS_STEPS - 1));
      out[i] = 1 + Math.max(0, Math.min(AXIS_STEPS - 1, t)) * ALPHA_STEPS + a - 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------- labels (text masks)

/** Bilinear sample of a mask channel at (u, v) in mask pixel coordinates (pixel centres at +0.5). */
function sampleMask(ch: Uint8Array, w: number, h: number, u: number, v: number): number {
  const x = u - 0.5;
  const y = v - 0.5;
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const fx = x - x0;
  const fy = y - y0;
  const at = (xx: number, yy: number) => (xx < 0 || yy < 0 || xx >= w || yy >= h ? 0 : ch[yy * w + xx]);
  return (
    (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) +
    (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy
  );
}

/**
 * Draws `mask` centred on (cx, cy) in tile pixels, turned by `angle` radians (clockwise on screen),
 * halo first and text over it; whatever falls outside the tile is clipped.
 */
export function drawRotatedLabel(
  rgba: Uint8Array,
  mask: LabelMask,
  cx: number,
  cy: number,
  angle: number,
  text: RGBA = TEXT_COLOUR,
  halo: RGBA = LABEL_HALO,
): void {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const hw = mask.width / 2;
  const hh = mask.height / 2;
  const ex = Math.abs(hw * cos) + Math.abs(hh * sin) + 1;
  const ey = Math.abs(hw * sin) + Math.abs(hh * cos) + 1;
  const minX = Math.max(0, Math.floor(cx - ex));
  const maxX = Math.min(TILE_SIZE - 1, Math.ceil(cx + ex));
  const minY = Math.max(0, Math.floor(cy - ey));
  const maxY = Math.min(TILE_SIZE - 1, Math.ceil(cy + ey));
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const rx = px + 0.5 - cx;
      const ry = py + 0.5 - cy;
      const u = rx * cos + ry * sin + hw;
      const v = -rx * sin + ry * cos + hh;
      if (u < -1 || v < -1 || u > mask.width + 1 || v > mask.height + 1) continue;
      const k = (py * TILE_SIZE + px) * 4;
      const h = sampleMask(mask.halo, mask.width, mask.height, u, v);
      if (h > 0) blendPixel(rgba, k, halo[0], halo[1], halo[2], (h / 255) * (halo[3] / 255));
      const t = sampleMask(mask.alpha, mask.width, mask.height, u, v);
      if (t > 0) blendPixel(rgba, k, text[0], text[1], text[2], (t / 255) * (text[3] / 255));
    }
  }
}

/**
 * A number in single-digit masks set side by side (ink widths plus a pixel), centred on (cx, cy):
 * the value of an H/L centre, which is not one of the levels whose labels are made beforehand.
 */
function drawDigits(rgba: Uint8Array, text: string, cx: number, cy: number, colour: RGBA): void {
  const masks = [...text].map((ch) => cachedLabelMask(ch, MARK_VALUE_PX, LABEL_STYLE));
  if (masks.some((m) => !m)) return;
  const ink = (m: LabelMask) => m.width - 2 * m.pad;
  const width = masks.reduce((w, m) => w + ink(m!) + 1, -1);
  let x = cx - width / 2;
  for (const m of masks as LabelMask[]) {
    drawRotatedLabel(rgba, m, Math.round(x + ink(m) / 2), cy, 0, colour);
    x += ink(m) + 1;
  }
}

/** Clears line coverage under a label's ink box (plus a gap), so the line stops either side of it. */
function knockOut(cov: Coverage[], mask: LabelMask, cx: number, cy: number, angle: number, gap: number): void {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const a = (mask.width - 2 * mask.pad) / 2 + gap;
  const b = (mask.height - 2 * mask.pad) / 2 + 1;
  const ex = Math.abs(a * cos) + Math.abs(b * sin) + 2;
  const ey = Math.abs(a * sin) + Math.abs(b * cos) + 2;
  for (let py = Math.max(0, Math.floor(cy - ey)); py <= Math.min(TILE_SIZE - 1, Math.ceil(cy + ey)); py++) {
    for (let px = Math.max(0, Math.floor(cx - ex)); px <= Math.min(TILE_SIZE - 1, Math.ceil(cx + ex)); px++) {
      const rx = px + 0.5 - cx;
      const ry = py + 0.5 - cy;
      const d = Math.max(Math.abs(rx * cos + ry * sin) - a, Math.abs(-rx * sin + ry * cos) - b);
      if (d >= 1) continue;
      const keep = Math.max(0, d);
      for (const c of cov) c[py * TILE_SIZE + px] *= keep;
    }
  }
}

/**
 * Text masks the contour renderer needs for a field between `min` and `max` (the level labels and
 * the H/L marks); they are made asynchronously (sharp), then drawn synchronously tile by tile.
 */
export async function prepareContourText(min: number, max: number, options: ContourOptions): Promise<void> {
  await labelMask("H", MARK_PX, MARK_STYLE);
  await labelMask("L", MARK_PX, MARK_STYLE);
  for (const ch of "0123456789-") await labelMask(ch, MARK_VALUE_PX, LABEL_STYLE);
  if (!(Number.isFinite(min) && Number.isFinite(max))) return;
  const from = Math.ceil(min / options.interval);
  const to = Math.floor(max / options.interval);
  for (let l = from; l <= to && l - from < 2000; l++) {
    await labelMask(options.label(l * options.interval), options.fontPx ?? LABEL_PX, LABEL_STYLE);
  }
}

/** The text mask of a contour label once prepareContourText has made it. */
export function contourLabelMask(text: string, fontPx = LABEL_PX): LabelMask | undefined {
  return cachedLabelMask(text, fontPx, LABEL_STYLE);
}

/** Smallest and largest finite value of a field. */
export function finiteRange(field: Field): [number, number] {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < field.length; i++) {
    const v = field[i];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min, max];
}

// ---------------------------------------------------------------- contours

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
}

/** A polyline in world pixel coordinates, x0 y0 x1 y1 …; `closed` when it returns to its start. */
export interface Contour {
  level: number;
  points: number[];
  closed: boolean;
}

interface Lattice {
  /** World pixel of node (0, 0) and the step. */
  x0: number;
  y0: number;
  step: number;
  nx: number;
  ny: number;
  values: Float64Array;
}

/** Samples of `field` at world pixels (x0 + i·step, y0 + j·step); NaN off the world and off the grid. */
function sampleLattice(
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

/** A 32-bit hash of integers (deterministic label and marker priorities). */
function hash(...ints: number[]): number {
  let h = 0x811c9dc5;
  for (const n of ints) {
    h = Math.imul(h ^ (n | 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return h >>> 0;
}

export interface PlacedLabel {
  /** Contour level index: value = level × interval. */
  level: number;
  text: string;
  /** Centre in world pixels and the angle of the text (radians, clockwise on screen). */
  x: number;
  y: number;
  angle: number;
}

interface Candidate extends PlacedLabel {
  priority: number;
  /** Half extents of the label's axis-aligned box. */
  ex: number;
  ey: number;
}

/**
 * The labels whose boxes may reach into the world pixel rectangle [x0, x1) × [y0, y1), by the
 * global rule (see the file header): the same label gets the same place in every tile.
 */
export function placeLabels(
  sampler: LevelSampler,
  field: Field,
  area: [number, number, number, number],
  options: ContourOptions,
): PlacedLabel[] {
  const world = 2 ** sampler.z * TILE_SIZE;
  const step = options.step ?? 4;
  const spacing = Math.min(options.labelSpacing ?? 256, world);
  const distance = Math.min(options.labelDistance ?? 400, world * 0.45);
  const font = options.fontPx ?? LABEL_PX;
  const reachLabel = 48; // half the longest label, at most
  const margin = distance + 2 * reachLabel;
  const [ax0, ay0, ax1, ay1] = area;
  const wx0 = ax0 - margin;
  const wx1 = ax1 + margin;
  const wy0 = Math.max(0, ay0 - margin);
  const wy1 = Math.min(world, ay1 + margin);
  const iv = options.interval;
  const value = (wx: number, wy: number): number =>
    wy < 0 || wy >= world ? Number.NaN : sampler.valueAt(posMod(Math.round(wx), world), Math.round(wy), field);
  const candidates: Candidate[] = [];
  // Four families of columns (and rows), a quarter of the spacing apart; a level uses family
  // level mod 4, so labels of neighbouring lines do not stack up in one column.
  const consider = (x: number, y: number, l: number, vertical: boolean) => {
    const gx = value(x + step, y) - value(x - step, y);
    const gy = value(x, y + step) - value(x, y - step);
    if (!(Number.isFinite(gx) && Number.isFinite(gy)) || (gx === 0 && gy === 0)) return;
    let angle = Math.atan2(-gx, gy); // along the line: perpendicular to the gradient
    if (angle > Math.PI / 2) angle -= Math.PI;
    if (angle <= -Math.PI / 2) angle += Math.PI;
    const steep = Math.abs(angle) > Math.PI / 4;
    if (steep !== vertical) return; // flat lines are labelled on columns, steep ones on rows
    const text = options.label(l * iv);
    const mask = cachedLabelMask(text, font, LABEL_STYLE);
    if (!mask) return;
    const hw = mask.width / 2;
    const hh = mask.height / 2;
    candidates.push({
      level: l,
      text,
      x,
      y,
      angle,
      priority: hash(l, posMod(Math.round(x), world), Math.round(y)),
      ex: Math.abs(hw * Math.cos(angle)) + Math.abs(hh * Math.sin(angle)),
      ey: Math.abs(hw * Math.sin(angle)) + Math.abs(hh * Math.cos(angle)),
    });
  };
  const crossings = (fixed: number, along0: number, along1: number, columns: boolean, family: number) => {
    let prev = Number.NaN;
    let prevAt = 0;
    for (let t = Math.floor(along0 / step) * step; t <= along1; t += step) {
      const f = columns ? value(fixed, t) : value(t, fixed);
      if (Number.isFinite(f) && Number.isFinite(prev)) {
        const lo = Math.min(prev, f);
        const hi = Math.max(prev, f);
        for (let l = Math.ceil(lo / iv); l * iv <= hi; l++) {
          if (posMod(l, 4) !== family || l * iv === lo) continue;
          const at = prevAt + ((l * iv - prev) / (f - prev)) * step;
          if (columns) consider(fixed, at, l, false);
          else consider(at, fixed, l, true);
        }
      }
      prev = f;
      prevAt = t;
    }
  };
  for (let family = 0; family < 4; family++) {
    const offset = Math.floor(((family + 0.5) * spacing) / 4);
    for (let k = Math.ceil((wx0 - offset) / spacing); k * spacing + offset < wx1; k++) {
      crossings(k * spacing + offset, wy0, wy1, true, family);
    }
    for (let k = Math.ceil((wy0 - offset) / spacing); k * spacing + offset < wy1; k++) {
      crossings(k * spacing + offset, wx0, wx1, false, family);
    }
  }
  const outranks = (a: Candidate, b: Candidate) =>
    a.priority !== b.priority ? a.priority > b.priority : a.y !== b.y ? a.y < b.y : a.x < b.x;
  const placed: PlacedLabel[] = [];
  for (const c of candidates) {
    if (c.x + c.ex < ax0 || c.x - c.ex > ax1 || c.y + c.ey < ay0 || c.y - c.ey > ay1) continue;
    let wins = true;
    for (const o of candidates) {
      if (o === c) continue;
      const dx = Math.abs(o.x - c.x);
      const dy = Math.abs(o.y - c.y);
      const conflict =
        (o.level === c.level && dx * dx + dy * dy < distance * distance) ||
        (dx < o.ex + c.ex + 4 && dy < o.ey + c.ey + 2);
      if (conflict && outranks(o, c)) {
        wins = false;
        break;
      }
    }
    if (wins) placed.push({ level: c.level, text: c.text, x: c.x, y: c.y, angle: c.angle });
  }
  return placed;
}

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
): Extremum[] {
  const world = 2 ** sampler.z * TILE_SIZE;
  const q = 8; // lattice step in world pixels
  const r = Math.max(1, Math.round(Math.min(radius, world / 4) / q));
  const reach = 24; // half a mark
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

/**
 * Isobars (or any contour lines) of one tile into `out` (RGBA, 256×256×4): smoothed anti-aliased
 * lines at multiples of `interval` over a light halo, every fifth a little heavier, labels along
 * the lines and H/L marks. Text masks must have been made first (prepareContourText).
 */
export function renderContours(
  sampler: LevelSampler,
  x: number,
  y: number,
  field: Field,
  options: ContourOptions,
  out: Uint8Array = new Uint8Array(OVERLAY_BYTES),
): Uint8Array {
  out.fill(0);
  const step = Math.max(1, Math.round(options.step ?? 4));
  const smooth = options.smooth ?? Math.min(4, Math.floor(Math.log2(step)));
  const left = x * TILE_SIZE;
  const top = y * TILE_SIZE;
  const margin = step * (smooth + 3) + 8;
  const lines = traceContours(
    sampler,
    field,
    [left - margin, top - margin, left + TILE_SIZE + margin, top + TILE_SIZE + margin],
    options.interval,
    step,
    smooth,
  );
  const line = new Float32Array(TILE_SIZE * TILE_SIZE);
  const halo = new Float32Array(TILE_SIZE * TILE_SIZE);
  const heavy = new Float32Array(TILE_SIZE * TILE_SIZE);
  for (const c of lines) {
    const bold = posMod(c.level, 5) === 0;
    const p = c.points;
    const n = p.length / 2;
    const segs = c.closed ? n : n - 1;
    const hw = bold ? 1.1 : 0.65;
    for (let s = 0; s < segs; s++) {
      const a = s * 2;
      const b = ((s + 1) % n) * 2;
      const x0 = p[a] - left;
      const y0 = p[a + 1] - top;
      const x1 = p[b] - left;
      const y1 = p[b + 1] - top;
      if (Math.max(x0, x1) < -4 || Math.min(x0, x1) > TILE_SIZE + 4) continue;
      if (Math.max(y0, y1) < -4 || Math.min(y0, y1) > TILE_SIZE + 4) continue;
      strokeSegment(halo, x0, y0, x1, y1, hw + 1.2);
      strokeSegment(bold ? heavy : line, x0, y0, x1, y1, hw);
    }
  }
  const area: [number, number, number, number] = [left, top, left + TILE_SIZE, top + TILE_SIZE];
  const labels = placeLabels(sampler, field, area, options);
  const font = options.fontPx ?? LABEL_PX;
  const masks = labels.map((l) => cachedLabelMask(l.text, font, LABEL_STYLE)!);
  labels.forEach((l, k) => {
    knockOut([line, heavy, halo], masks[k], l.x - left, l.y - top, l.angle, 3);
  });
  for (let k = 0; k < line.length; k++) if (heavy[k] > line[k]) line[k] = heavy[k];
  paint(out, halo, HALO_COLOUR);
  paint(out, line, LINE_COLOUR);
  labels.forEach((l, k) => {
    drawRotatedLabel(out, masks[k], l.x - left, l.y - top, l.angle);
  });
  const radius = options.extremaRadius ?? 160;
  if (radius > 0) {
    for (const e of findExtrema(sampler, field, area, radius, options.extremaDepth ?? options.interval)) {
      const mask = cachedLabelMask(e.kind, MARK_PX, MARK_STYLE);
      const colour = e.kind === "H" ? HIGH_COLOUR : LOW_COLOUR;
      if (mask) drawRotatedLabel(out, mask, e.x - left, e.y - top, 0, colour);
      drawDigits(out, options.label(e.value), e.x - left, e.y - top + 15, colour);
    }
  }
  return out;
}

// ---------------------------------------------------------------- arrows

export interface ArrowOptions {
  /** Lattice spacing in screen pixels. */
  spacing: number;
  /** Speeds below this (canonical units) get a small ring instead of an arrow. */
  calm?: number;
  /** The speed at which an arrow reaches its full length (default 25 m/s). */
  full?: number;
}

/** Arrow length in pixels for a speed: from a quarter of the spacing (calm) to 0.95 of it at `full`. */
export function arrowLength(speed: number, spacing: number, full = 25): number {
  return spacing * (0.25 + 0.7 * Math.min(1, speed / full));
}

/**
 * The arrow lattice spacing for a zoom level: `base` screen pixels, but never closer than one
 * data cell (`cellPx` world pixels at this zoom), so zoomed in past the data there is one arrow a
 * cell rather than many copies of one interpolated value; a little denser on the smallest maps.
 */
export function arrowSpacing(base: number, z: number, cellPx: number): number {
  const zoomed = z <= 2 ? base * 0.8 : base;
  return Math.round(Math.min(3 * base, Math.max(zoomed, cellPx)));
}

/** The lattice points (world pixels) of arrows; odd rows shifted half a spacing (a staggered lattice). */
export function arrowSites(spacing: number, area: [number, number, number, number]): { x: number; y: number }[] {
  const s = spacing;
  const [x0, y0, x1, y1] = area;
  const sites: { x: number; y: number }[] = [];
  for (let gy = Math.floor(y0 / s); gy * s < y1; gy++) {
    const shift = posMod(gy, 2) ? Math.floor(s / 2) : 0;
    for (let gx = Math.floor((x0 - shift) / s); gx * s + shift < x1; gx++) {
      const x = gx * s + shift + Math.floor(s / 2);
      const y = gy * s + Math.floor(s / 2);
      if (x >= x0 && x < x1 && y >= y0 && y < y1) sites.push({ x, y });
    }
  }
  return sites;
}

/**
 * Wind arrows (u east, v north) pointing where the air goes, length and weight growing with the
 * speed, anti-aliased over a light halo, into `out` (RGBA). Mercator keeps angles, so the screen
 * angle is the true one.
 */
export function renderArrows(
  sampler: LevelSampler,
  x: number,
  y: number,
  u: Field,
  v: Field,
  options: ArrowOptions,
  out: Uint8Array = new Uint8Array(OVERLAY_BYTES),
): Uint8Array {
  out.fill(0);
  const s = options.spacing;
  const calm = options.calm ?? 0.5;
  const full = options.full ?? 25;
  const left = x * TILE_SIZE;
  const top = y * TILE_SIZE;
  const world = 2 ** sampler.z * TILE_SIZE;
  const line = new Float32Array(TILE_SIZE * TILE_SIZE);
  const halo = new Float32Array(TILE_SIZE * TILE_SIZE);
  // Arrows centred outside the tile may still reach into it.
  for (const site of arrowSites(s, [left - s, top - s, left + TILE_SIZE + s, top + TILE_SIZE + s])) {
    if (site.y < 0 || site.y >= world) continue;
    const col = posMod(site.x, world);
    const ue = sampler.valueAt(col, site.y, u);
    const vn = sampler.valueAt(col, site.y, v);
    if (!(Number.isFinite(ue) && Number.isFinite(vn))) continue;
    const cx = site.x - left + 0.5;
    const cy = site.y - top + 0.5;
    const speed = Math.hypot(ue, vn);
    if (speed < calm) {
      // A small ring marks calm air.
      for (let k = 0; k < 12; k++) {
        const a0 = (k * Math.PI) / 6;
        const a1 = ((k + 1) * Math.PI) / 6;
        const seg = [cx + 3 * Math.cos(a0), cy + 3 * Math.sin(a0), cx + 3 * Math.cos(a1), cy + 3 * Math.sin(a1)];
        strokeSegment(halo, seg[0], seg[1], seg[2], seg[3], 1.9);
        strokeSegment(line, seg[0], seg[1], seg[2], seg[3], 0.6);
      }
      continue;
    }
    const strength = Math.min(1, speed / full);
    const ux = ue / speed;
    const uy = -vn / speed; // screen y grows south
    const half = arrowLength(speed, s, full) / 2;
    const hw = 0.55 + 0.55 * strength;
    const head = 5 + 3 * strength;
    const tipX = cx + ux * half;
    const tipY = cy + uy * half;
    const tailX = cx - ux * half;
    const tailY = cy - uy * half;
    const baseX = tipX - ux * head;
    const baseY = tipY - uy * head;
    const wing = head * 0.6;
    const tri = [tipX, tipY, baseX - uy * wing, baseY + ux * wing, baseX + uy * wing, baseY - ux * wing];
    strokeSegment(halo, tailX, tailY, baseX, baseY, hw + 1.3);
    fillTriangle(halo, tri, 1.3);
    strokeSegment(line, tailX, tailY, baseX + ux * 0.5, baseY + uy * 0.5, hw);
    fillTriangle(line, tri, 0);
  }
  paint(out, halo, HALO_COLOUR);
  paint(out, line, LINE_COLOUR);
  return out;
}
