// Transparent overlay tiles drawn from fields rather than coloured by them: wind direction arrows
// on a fixed screen lattice and contour lines (isobars) with value labels. Both are placed in
// world pixel coordinates of the zoom level, so an arrow or a line crossing a tile edge continues
// in the neighbouring tile, and each tile is still an indexed PNG with a four-colour palette.
import type { LevelSampler } from "./resample.ts";
import { TILE_SIZE } from "./tiles.ts";

export const OVERLAY_NONE = 0;
export const OVERLAY_LINE = 1;
export const OVERLAY_HALO = 2;
export const OVERLAY_TEXT = 3;

/** 0 transparent, 1 dark lines, 2 a light halo that keeps them readable on any base, 3 label text. */
export const OVERLAY_RGBA = (() => {
  const rgba = new Uint8Array(256 * 4);
  rgba.set([20, 28, 38, 235], OVERLAY_LINE * 4);
  rgba.set([255, 255, 255, 170], OVERLAY_HALO * 4);
  rgba.set([15, 20, 28, 255], OVERLAY_TEXT * 4);
  return rgba;
})();

type Field = Float32Array | Float64Array;

/** Sets `index` on every pixel within `width` of the segment (x0, y0)–(x1, y1), tile pixel coordinates. */
function segment(out: Uint8Array, x0: number, y0: number, x1: number, y1: number, width: number, index: number): void {
  const minX = Math.max(0, Math.floor(Math.min(x0, x1) - width));
  const maxX = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(x0, x1) + width));
  const minY = Math.max(0, Math.floor(Math.min(y0, y1) - width));
  const maxY = Math.min(TILE_SIZE - 1, Math.ceil(Math.max(y0, y1) + width));
  const dx = x1 - x0;
  const dy = y1 - y0;
  const len2 = dx * dx + dy * dy || 1;
  const w2 = width * width;
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const cx = px + 0.5 - x0;
      const cy = py + 0.5 - y0;
      const t = Math.max(0, Math.min(1, (cx * dx + cy * dy) / len2));
      const ex = cx - t * dx;
      const ey = cy - t * dy;
      if (ex * ex + ey * ey <= w2) out[py * TILE_SIZE + px] = index;
    }
  }
}

export interface ArrowOptions {
  /** Lattice spacing in screen pixels. */
  spacing: number;
  /** Speeds below this (canonical units) get a small ring instead of an arrow. */
  calm?: number;
}

/** Arrow length in pixels for a speed: longer for stronger wind, within the lattice cell. */
function arrowLength(speed: number, spacing: number): number {
  return spacing * (0.35 + 0.45 * Math.min(1, speed / 25));
}

/**
 * Direction arrows of the wind (u east, v north) pointing where the air goes, one per lattice
 * point of the level's world pixels. Mercator keeps angles, so the screen angle is the true one.
 */
export function renderArrows(
  sampler: LevelSampler,
  x: number,
  y: number,
  u: Field,
  v: Field,
  options: ArrowOptions,
  out: Uint8Array,
): Uint8Array {
  out.fill(OVERLAY_NONE);
  const s = options.spacing;
  const calm = options.calm ?? 0.5;
  const left = x * TILE_SIZE;
  const top = y * TILE_SIZE;
  const reach = s; // arrows centred outside the tile may still reach into it
  const worldSize = 2 ** sampler.z * TILE_SIZE;
  const arrows: [number, number, number, number][] = [];
  for (let gy = Math.floor((top - reach) / s); gy * s + s / 2 < top + TILE_SIZE + reach; gy++) {
    const row = gy * s + Math.floor(s / 2);
    if (row < 0 || row >= worldSize) continue;
    for (let gx = Math.floor((left - reach) / s); gx * s + s / 2 < left + TILE_SIZE + reach; gx++) {
      // The lattice wraps round the world with the tiles.
      const col = (((gx * s + Math.floor(s / 2)) % worldSize) + worldSize) % worldSize;
      const ue = sampler.valueAt(col, row, u);
      const vn = sampler.valueAt(col, row, v);
      if (!(Number.isFinite(ue) && Number.isFinite(vn))) continue;
      arrows.push([gx * s + Math.floor(s / 2) - left + 0.5, row - top + 0.5, ue, vn]);
    }
  }
  // Halos first, then every line over them, so a neighbour's halo never cuts an arrow.
  for (const pass of [OVERLAY_HALO, OVERLAY_LINE]) {
    const w = pass === OVERLAY_HALO ? 2.3 : 0.9;
    for (const [cx, cy, ue, vn] of arrows) {
      const speed = Math.hypot(ue, vn);
      if (speed < calm) {
        // A small ring marks calm air.
        for (let k = 0; k < 8; k++) {
          const a0 = (k * Math.PI) / 4;
          const a1 = ((k + 1) * Math.PI) / 4;
          segment(
            out,
            cx + 3 * Math.cos(a0),
            cy + 3 * Math.sin(a0),
            cx + 3 * Math.cos(a1),
            cy + 3 * Math.sin(a1),
            w,
            pass,
          );
        }
        continue;
      }
      const ux = ue / speed;
      const uy = -vn / speed; // screen y grows south
      const half = arrowLength(speed, s) / 2;
      const hx = cx + ux * half;
      const hy = cy + uy * half;
      segment(out, cx - ux * half, cy - uy * half, hx, hy, w, pass);
      const head = Math.max(4, half * 0.6);
      for (const side of [-1, 1]) {
        const a = Math.atan2(uy, ux) + Math.PI + side * 0.5;
        segment(out, hx, hy, hx + head * Math.cos(a), hy + head * Math.sin(a), w, pass);
      }
    }
  }
  return out;
}

/** Digits 0-9 and "-" as 3×5 bitmaps, rows top to bottom, bit 2 the left column. */
const GLYPHS: Record<string, number[]> = {
  "0": [7, 5, 5, 5, 7],
  "1": [2, 6, 2, 2, 7],
  "2": [7, 1, 7, 4, 7],
  "3": [7, 1, 7, 1, 7],
  "4": [5, 5, 7, 1, 1],
  "5": [7, 4, 7, 1, 7],
  "6": [7, 4, 7, 5, 7],
  "7": [7, 1, 2, 2, 2],
  "8": [7, 5, 7, 5, 7],
  "9": [7, 5, 7, 1, 7],
  "-": [0, 0, 7, 0, 0],
};
/** Glyphs are drawn at twice their size: 6×10 pixels, 2 pixels apart. */
const GLYPH_SCALE = 2;
const GLYPH_ADVANCE = 4 * GLYPH_SCALE;

/** Width and height in pixels of a label, halo margin included. */
export function labelSize(text: string): [number, number] {
  return [text.length * GLYPH_ADVANCE - GLYPH_SCALE + 4, 5 * GLYPH_SCALE + 4];
}

/** Draws `text` centred on (cx, cy) on a halo box; false (nothing drawn) when it would not fit in the tile. */
export function drawLabel(out: Uint8Array, text: string, cx: number, cy: number): boolean {
  const [w, h] = labelSize(text);
  const x0 = Math.round(cx - w / 2);
  const y0 = Math.round(cy - h / 2);
  if (x0 < 0 || y0 < 0 || x0 + w > TILE_SIZE || y0 + h > TILE_SIZE) return false;
  if ([...text].some((ch) => !GLYPHS[ch])) throw new RangeError(`no glyph for "${text}"`);
  for (let yy = y0; yy < y0 + h; yy++) out.fill(OVERLAY_HALO, yy * TILE_SIZE + x0, yy * TILE_SIZE + x0 + w);
  [...text].forEach((ch, k) => {
    const rows = GLYPHS[ch];
    for (let gy = 0; gy < 5; gy++) {
      for (let gx = 0; gx < 3; gx++) {
        if (!((rows[gy] >> (2 - gx)) & 1)) continue;
        for (let dy = 0; dy < GLYPH_SCALE; dy++) {
          const py = y0 + 2 + gy * GLYPH_SCALE + dy;
          const px = x0 + 2 + k * GLYPH_ADVANCE + gx * GLYPH_SCALE;
          out.fill(OVERLAY_TEXT, py * TILE_SIZE + px, py * TILE_SIZE + px + GLYPH_SCALE);
        }
      }
    }
  });
  return true;
}

export interface ContourOptions {
  /** Line spacing in canonical units (400 Pa = 4 hPa). */
  interval: number;
  /** Canonical value → label text, e.g. Pa → "1012". */
  label: (value: number) => string;
  /** Labels are tried once per this many world pixels in each direction. */
  labelSpacing?: number;
}

/**
 * Contour lines of a field at multiples of `interval`, two pixels wide, and labels where a line
 * passes near a label lattice point. A pixel is on a line where the band (floor(value /
 * interval)) differs from a 4-neighbour's, so a line is continuous across tile edges: the
 * neighbours past the edge are sampled too.
 */
export function renderContours(
  sampler: LevelSampler,
  x: number,
  y: number,
  field: Field,
  options: ContourOptions,
  out: Uint8Array,
  scratch = new Float64Array((TILE_SIZE + 2) * (TILE_SIZE + 2)),
): Uint8Array {
  out.fill(OVERLAY_NONE);
  const W = TILE_SIZE + 2;
  const left = x * TILE_SIZE - 1;
  const top = y * TILE_SIZE - 1;
  const worldSize = 2 ** sampler.z * TILE_SIZE;
  const band = scratch;
  for (let r = 0; r < W; r++) {
    for (let c = 0; c < W; c++) {
      const col = (((left + c) % worldSize) + worldSize) % worldSize;
      const value = sampler.valueAt(col, top + r, field);
      band[r * W + c] = Number.isFinite(value) ? Math.floor(value / options.interval) : Number.NaN;
    }
  }
  // The line's level between two bands is the larger band's lower edge.
  const levelAt = new Int32Array(TILE_SIZE * TILE_SIZE).fill(-1);
  for (let r = 0; r < TILE_SIZE; r++) {
    for (let c = 0; c < TILE_SIZE; c++) {
      const k = (r + 1) * W + c + 1;
      const b = band[k];
      if (Number.isNaN(b)) continue;
      for (const n of [k - 1, k + 1, k - W, k + W]) {
        const bn = band[n];
        if (!Number.isNaN(bn) && bn !== b) {
          out[r * TILE_SIZE + c] = OVERLAY_LINE;
          levelAt[r * TILE_SIZE + c] = Math.max(b, bn);
          break;
        }
      }
    }
  }
  // Labels: at each lattice point inside the tile, the nearest line pixel within reach gets one.
  const spacing = options.labelSpacing ?? 128;
  const reach = spacing / 2 - 8; // within its own lattice cell, so neighbouring labels keep apart
  for (let ly = Math.ceil((top + 1 - spacing / 2) / spacing); ly * spacing + spacing / 2 < top + 1 + TILE_SIZE; ly++) {
    for (
      let lx = Math.ceil((left + 1 - spacing / 2) / spacing);
      lx * spacing + spacing / 2 < left + 1 + TILE_SIZE;
      lx++
    ) {
      const ax = lx * spacing + spacing / 2 - (left + 1);
      const ay = ly * spacing + spacing / 2 - (top + 1);
      let best = -1;
      let bestD = reach * reach + 1;
      for (let r = Math.max(0, ay - reach); r <= Math.min(TILE_SIZE - 1, ay + reach); r++) {
        for (let c = Math.max(0, ax - reach); c <= Math.min(TILE_SIZE - 1, ax + reach); c++) {
          if (levelAt[r * TILE_SIZE + c] < 0) continue;
          const d = (r - ay) ** 2 + (c - ax) ** 2;
          if (d < bestD) {
            bestD = d;
            best = r * TILE_SIZE + c;
          }
        }
      }
      if (best < 0) continue;
      const value = levelAt[best] * options.interval;
      drawLabel(out, options.label(value), (best % TILE_SIZE) + 0.5, Math.floor(best / TILE_SIZE) + 0.5);
    }
  }
  return out;
}
