// Wind arrow overlay tiles: a staggered world lattice whose spacing follows the zoom and the
// data's resolution, arrows scaled by speed (a ring for calm air). Arrows centred outside a tile
// that reach into it are drawn there too, so an arrow across a seam is whole.
import {
  type Field,
  fillTriangle,
  HALO_COLOUR,
  LINE_COLOUR,
  OVERLAY_BYTES,
  paint,
  posMod,
  strokeSegment,
} from "./overlay-paint.ts";
import type { TileBoxes } from "./png.ts";
import type { LevelSampler } from "./resample.ts";
import { TILE_SIZE } from "./tiles.ts";

export interface ArrowOptions {
  /** Lattice spacing in screen pixels. */
  spacing: number;
  /** Speeds below this (canonical units) get a small ring instead of an arrow. */
  calm?: number;
  /** The speed at which an arrow reaches its full length (default 25 m/s). */
  full?: number;
  /** Pixels per screen pixel (default 1; 2 for an @2x quarter): strokes and heads grow with it. */
  scale?: number;
  /**
   * Names the lattice gives way to (label-rank.ts), in the sampler's world pixels: an arrow whose
   * ink, halo included, would come near one is left out, on every tile alike (the test looks only
   * at the arrow's own site and data).
   */
  keep?: { meets(x0: number, y0: number, x1: number, y1: number): boolean };
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
 * angle is the true one. `heads` gets the box of each arrow head's ink (halo included) in the tile,
 * in tile pixels: what shows the direction, which place names yield to. A head across a seam is
 * drawn by both tiles, so each carries the box of its part.
 */
export function renderArrows(
  sampler: LevelSampler,
  x: number,
  y: number,
  u: Field,
  v: Field,
  options: ArrowOptions,
  out: Uint8Array = new Uint8Array(OVERLAY_BYTES),
  heads?: TileBoxes,
  size = TILE_SIZE,
): Uint8Array {
  out.fill(0);
  const s = options.spacing;
  const calm = options.calm ?? 0.5;
  const full = options.full ?? 25;
  const k = options.scale ?? 1;
  const left = x * size;
  const top = y * size;
  const world = 2 ** sampler.z * TILE_SIZE;
  const line = new Float32Array(size * size);
  const halo = new Float32Array(size * size);
  const boxes: TileBoxes = [];
  // Arrows centred outside the tile may still reach into it.
  for (const site of arrowSites(s, [left - s, top - s, left + size + s, top + size + s])) {
    if (site.y < 0 || site.y >= world) continue;
    const col = posMod(site.x, world);
    const ue = sampler.valueAt(col, site.y, u);
    const vn = sampler.valueAt(col, site.y, v);
    if (!(Number.isFinite(ue) && Number.isFinite(vn))) continue;
    const cx = site.x - left + 0.5;
    const cy = site.y - top + 0.5;
    const speed = Math.hypot(ue, vn);
    if (options.keep) {
      const [x0, y0, x1, y1] = arrowExtent(ue, vn, s, calm, full, k);
      if (options.keep.meets(site.x + 0.5 + x0, site.y + 0.5 + y0, site.x + 0.5 + x1, site.y + 0.5 + y1)) continue;
    }
    if (speed < calm) {
      // A small ring marks calm air.
      // (Its own index, i: the scale k sizes the ring; the loop once counted in k, a spiral.)
      for (let i = 0; i < 12; i++) {
        const a0 = (i * Math.PI) / 6;
        const a1 = ((i + 1) * Math.PI) / 6;
        const r = 3 * k;
        const seg = [cx + r * Math.cos(a0), cy + r * Math.sin(a0), cx + r * Math.cos(a1), cy + r * Math.sin(a1)];
        strokeSegment(halo, seg[0], seg[1], seg[2], seg[3], 1.9 * k, size);
        strokeSegment(line, seg[0], seg[1], seg[2], seg[3], 0.6 * k, size);
      }
      continue;
    }
    const strength = Math.min(1, speed / full);
    const ux = ue / speed;
    const uy = -vn / speed; // screen y grows south
    const half = arrowLength(speed, s, full) / 2;
    const hw = (0.55 + 0.55 * strength) * k;
    const head = (5 + 3 * strength) * k;
    const tipX = cx + ux * half;
    const tipY = cy + uy * half;
    const tailX = cx - ux * half;
    const tailY = cy - uy * half;
    const baseX = tipX - ux * head;
    const baseY = tipY - uy * head;
    const wing = head * 0.6;
    const tri = [tipX, tipY, baseX - uy * wing, baseY + ux * wing, baseX + uy * wing, baseY - ux * wing];
    strokeSegment(halo, tailX, tailY, baseX, baseY, hw + 1.3 * k, size);
    fillTriangle(halo, tri, 1.3 * k, size);
    strokeSegment(line, tailX, tailY, baseX + ux * 0.5 * k, baseY + uy * 0.5 * k, hw, size);
    fillTriangle(line, tri, 0, size);
    if (heads) {
      const m = 1.3 * k;
      const box: TileBoxes[number] = [
        Math.floor(Math.min(tri[0], tri[2], tri[4]) - m),
        Math.floor(Math.min(tri[1], tri[3], tri[5]) - m),
        Math.ceil(Math.max(tri[0], tri[2], tri[4]) + m),
        Math.ceil(Math.max(tri[1], tri[3], tri[5]) + m),
      ];
      if (box[2] > 0 && box[3] > 0 && box[0] < size && box[1] < size) boxes.push(box);
    }
  }
  paint(out, halo, HALO_COLOUR);
  paint(out, line, LINE_COLOUR);
  // Each box as the head's ink in this tile: clipped to the tile, shrunk to the pixels drawn (none:
  // not this tile's). A label that meets the ink on a tile meets that tile's box, and the viewer
  // reads the boxes of every tile a label reaches.
  for (const b of boxes) {
    const ink = inkBox(out, b, size);
    if (ink) heads?.push(ink);
  }
  return out;
}

/**
 * The box round an arrow's ink and halo relative to its centre, [left, top, right, bottom] in
 * pixels: the calm ring's, or the shaft's and head's as renderArrows draws them.
 */
export function arrowExtent(
  ue: number,
  vn: number,
  spacing: number,
  calm: number,
  full: number,
  k: number,
): [number, number, number, number] {
  const speed = Math.hypot(ue, vn);
  if (speed < calm) {
    const r = 3 * k + 1.9 * k + 1;
    return [-r, -r, r, r];
  }
  const strength = Math.min(1, speed / full);
  const half = arrowLength(speed, spacing, full) / 2;
  const ux = ue / speed;
  const uy = -vn / speed;
  const head = (5 + 3 * strength) * k;
  const wing = head * 0.6;
  // Halo (1.3 px × scale) beyond the shaft's half width and the head's edges, and a pixel of anti-aliasing.
  const grow = (0.55 + 0.55 * strength) * k + 1.3 * k + 1;
  const bx = ux * (half - head);
  const by = uy * (half - head);
  const xs = [ux * half, -ux * half, bx - uy * wing, bx + uy * wing];
  const ys = [uy * half, -uy * half, by + ux * wing, by - ux * wing];
  return [Math.min(...xs) - grow, Math.min(...ys) - grow, Math.max(...xs) + grow, Math.max(...ys) + grow];
}

/** The bounding box of the pixels of `rgba` (a tile) with alpha inside the box, clipped to the tile. */
function inkBox(rgba: Uint8Array, [x0, y0, x1, y1]: TileBoxes[number], size: number): TileBoxes[number] | undefined {
  let box: TileBoxes[number] | undefined;
  for (let y = Math.max(0, y0); y < Math.min(size, y1); y++) {
    for (let x = Math.max(0, x0); x < Math.min(size, x1); x++) {
      if (rgba[(y * size + x) * 4 + 3] === 0) continue;
      if (!box) box = [x, y, x + 1, y + 1];
      else {
        box[0] = Math.min(box[0], x);
        box[1] = Math.min(box[1], y);
        box[2] = Math.max(box[2], x + 1);
        box[3] = Math.max(box[3], y + 1);
      }
    }
  }
  return box;
}
