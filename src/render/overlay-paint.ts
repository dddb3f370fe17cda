// What every overlay tile is drawn with: transparent tiles drawn from fields rather than coloured by
// them (wind arrows, isobars), anti-aliased into RGBA (partial alpha at every edge). Layers of
// per-pixel coverage (strokes, filled triangles) combined by max, then laid over the tile in one
// colour each; the shared colours.
//
// Seams: all geometry lives in world pixels of the zoom level and each tile is computed from a
// window larger than itself, so whatever crosses a tile edge is drawn the same on both sides
// (contour-trace.ts, contour-labels.ts, contour-extrema.ts and arrows.ts say how, each for its part).
import { blendPixel } from "./text.ts";
import { TILE_SIZE } from "./tiles.ts";

export type Field = Float32Array | Float64Array;
export type RGBA = [number, number, number, number];

export const OVERLAY_BYTES = TILE_SIZE * TILE_SIZE * 4;
/** Line and arrow colour (dark slate) and the light halo under them. */
export const LINE_COLOUR: RGBA = [44, 54, 68, 235];
export const HALO_COLOUR: RGBA = [255, 255, 255, 150];
export const TEXT_COLOUR: RGBA = [18, 22, 30, 255];
export const LABEL_HALO: RGBA = [255, 255, 255, 225];
export const HIGH_COLOUR: RGBA = [20, 60, 170, 255];
export const LOW_COLOUR: RGBA = [175, 25, 25, 255];

export const posMod = (a: number, n: number): number => ((a % n) + n) % n;

/** Per-pixel coverage (0..1) of one layer of strokes, combined by max so joints do not darken. */
export type Coverage = Float32Array;

export function strokeSegment(
  cov: Coverage,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  hw: number,
  size = TILE_SIZE,
): void {
  const reach = hw + 1;
  const minX = Math.max(0, Math.floor(Math.min(x0, x1) - reach));
  const maxX = Math.min(size - 1, Math.ceil(Math.max(x0, x1) + reach));
  const minY = Math.max(0, Math.floor(Math.min(y0, y1) - reach));
  const maxY = Math.min(size - 1, Math.ceil(Math.max(y0, y1) + reach));
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
      const k = py * size + px;
      const v = c >= 1 ? 1 : c;
      if (v > cov[k]) cov[k] = v;
    }
  }
}

/** Fills the triangle (a, b, c) with anti-aliased edges, grown by `grow` pixels (for its halo). */
export function fillTriangle(cov: Coverage, p: number[], grow: number, size = TILE_SIZE): void {
  const xs = [p[0], p[2], p[4]];
  const ys = [p[1], p[3], p[5]];
  const minX = Math.max(0, Math.floor(Math.min(...xs) - grow - 1));
  const maxX = Math.min(size - 1, Math.ceil(Math.max(...xs) + grow + 1));
  const minY = Math.max(0, Math.floor(Math.min(...ys) - grow - 1));
  const maxY = Math.min(size - 1, Math.ceil(Math.max(...ys) + grow + 1));
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
      const k = py * size + px;
      const v = c >= 1 ? 1 : c;
      if (v > cov[k]) cov[k] = v;
    }
  }
}

/** Source-over of a coverage layer in one colour onto the tile. */
export function paint(rgba: Uint8Array, cov: Coverage, [r, g, b, a]: RGBA): void {
  const alpha = a / 255;
  for (let k = 0; k < cov.length; k++) {
    const c = cov[k];
    if (c > 0) blendPixel(rgba, k * 4, r, g, b, c * alpha);
  }
}
