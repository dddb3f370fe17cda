// Text on contour tiles: level labels along the lines and the H/L marks' letters and values, as
// text masks made beforehand (prepareContourText) and drawn rotated, with the line knocked out
// under them; and where the labels go.
// Placement: candidates where a line crosses a sparse lattice of label columns (flat lines) and
// rows (steep lines); a candidate is drawn when it outranks (deterministic hash of its world
// position and level) every candidate of the same level within `labelDistance` and every label it
// would overlap. That rule looks only at candidates within a bounded distance, and every tile
// computes all of them within that distance of itself: neighbouring tiles agree, and a label on a
// seam is drawn half in each tile, once.
import type { ContourOptions } from "./contour-trace.ts";
import { type Coverage, type Field, LABEL_HALO, posMod, type RGBA, TEXT_COLOUR } from "./overlay-paint.ts";
import type { LevelSampler } from "./resample.ts";
import { blendPixel, cachedLabelMask, type LabelMask, labelMask } from "./text.ts";
import { TILE_SIZE } from "./tiles.ts";

export const LABEL_PX = 12;
export const MARK_PX = 22;
/** The centre's value under an H or L, in digits of this size. */
const MARK_VALUE_PX = 11;
export const LABEL_STYLE = { halo: 2, weight: 600 } as const;
export const MARK_STYLE = { halo: 2.5, weight: 700 } as const;

/** A text style at `scale` pixels per screen pixel: the halo grows with the text. */
export const scaledStyle = <S extends { halo: number }>(style: S, scale: number): S =>
  scale === 1 ? style : { ...style, halo: style.halo * scale };

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
  size = TILE_SIZE,
): void {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const hw = mask.width / 2;
  const hh = mask.height / 2;
  const ex = Math.abs(hw * cos) + Math.abs(hh * sin) + 1;
  const ey = Math.abs(hw * sin) + Math.abs(hh * cos) + 1;
  const minX = Math.max(0, Math.floor(cx - ex));
  const maxX = Math.min(size - 1, Math.ceil(cx + ex));
  const minY = Math.max(0, Math.floor(cy - ey));
  const maxY = Math.min(size - 1, Math.ceil(cy + ey));
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const rx = px + 0.5 - cx;
      const ry = py + 0.5 - cy;
      const u = rx * cos + ry * sin + hw;
      const v = -rx * sin + ry * cos + hh;
      if (u < -1 || v < -1 || u > mask.width + 1 || v > mask.height + 1) continue;
      const k = (py * size + px) * 4;
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
export function drawDigits(
  rgba: Uint8Array,
  text: string,
  cx: number,
  cy: number,
  colour: RGBA,
  scale = 1,
  size = TILE_SIZE,
): void {
  const masks = [...text].map((ch) => cachedLabelMask(ch, MARK_VALUE_PX * scale, scaledStyle(LABEL_STYLE, scale)));
  if (masks.some((m) => !m)) return;
  const ink = (m: LabelMask) => m.width - 2 * m.pad;
  const width = masks.reduce((w, m) => w + ink(m!) + scale, -scale);
  let x = cx - width / 2;
  for (const m of masks as LabelMask[]) {
    drawRotatedLabel(rgba, m, Math.round(x + ink(m) / 2), cy, 0, colour, LABEL_HALO, size);
    x += ink(m) + scale;
  }
}

/** Width and height of what drawDigits draws for `text` (0 × 0 before its masks are made). */
export function digitsSize(text: string, scale = 1): { width: number; height: number } {
  const masks = [...text].map((ch) => cachedLabelMask(ch, MARK_VALUE_PX * scale, scaledStyle(LABEL_STYLE, scale)));
  if (masks.some((m) => !m)) return { width: 0, height: 0 };
  const width = (masks as LabelMask[]).reduce((w, m) => w + m.width - 2 * m.pad + scale, -scale);
  const pad = Math.max(...(masks as LabelMask[]).map((m) => m.pad));
  return { width: width + 2 * pad, height: Math.max(...(masks as LabelMask[]).map((m) => m.height)) };
}

/** Clears line coverage under a label's ink box (plus a gap), so the line stops either side of it. */
export function knockOut(
  cov: Coverage[],
  mask: LabelMask,
  cx: number,
  cy: number,
  angle: number,
  gap: number,
  size = TILE_SIZE,
): void {
  const cos = Math.cos(angle);
  const sin = Math.sin(angle);
  const a = (mask.width - 2 * mask.pad) / 2 + gap;
  const b = (mask.height - 2 * mask.pad) / 2 + 1;
  const ex = Math.abs(a * cos) + Math.abs(b * sin) + 2;
  const ey = Math.abs(a * sin) + Math.abs(b * cos) + 2;
  for (let py = Math.max(0, Math.floor(cy - ey)); py <= Math.min(size - 1, Math.ceil(cy + ey)); py++) {
    for (let px = Math.max(0, Math.floor(cx - ex)); px <= Math.min(size - 1, Math.ceil(cx + ex)); px++) {
      const rx = px + 0.5 - cx;
      const ry = py + 0.5 - cy;
      const d = Math.max(Math.abs(rx * cos + ry * sin) - a, Math.abs(-rx * sin + ry * cos) - b);
      if (d >= 1) continue;
      const keep = Math.max(0, d);
      for (const c of cov) c[py * size + px] *= keep;
    }
  }
}

/**
 * Text masks the contour renderer needs for a field between `min` and `max` (the level labels and
 * the H/L marks); they are made asynchronously (sharp), then drawn synchronously tile by tile.
 */
export async function prepareContourText(
  min: number,
  max: number,
  options: ContourOptions,
  scales: number[] = [1],
): Promise<void> {
  for (const k of scales) {
    await labelMask("H", MARK_PX * k, scaledStyle(MARK_STYLE, k));
    await labelMask("L", MARK_PX * k, scaledStyle(MARK_STYLE, k));
    for (const ch of "0123456789-") await labelMask(ch, MARK_VALUE_PX * k, scaledStyle(LABEL_STYLE, k));
    if (!(Number.isFinite(min) && Number.isFinite(max))) continue;
    const from = Math.ceil(min / options.interval);
    const to = Math.floor(max / options.interval);
    for (let l = from; l <= to && l - from < 2000; l++) {
      await labelMask(
        options.label(l * options.interval),
        (options.fontPx ?? LABEL_PX) * k,
        scaledStyle(LABEL_STYLE, k),
      );
    }
  }
}

/** The text mask of a contour label once prepareContourText has made it. */
export function contourLabelMask(text: string, fontPx = LABEL_PX, scale = 1): LabelMask | undefined {
  return cachedLabelMask(text, fontPx * scale, scaledStyle(LABEL_STYLE, scale));
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
  const k = options.scale ?? 1;
  const spacing = Math.min(options.labelSpacing ?? 256 * k, world);
  const distance = Math.min(options.labelDistance ?? 400 * k, world * 0.45);
  const font = (options.fontPx ?? LABEL_PX) * k;
  const style = scaledStyle(LABEL_STYLE, k);
  const reachLabel = 48 * k; // half the longest label, at most
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
    const mask = cachedLabelMask(text, font, style);
    if (!mask) return;
    const hw = mask.width / 2;
    const hh = mask.height / 2;
    const ex = Math.abs(hw * Math.cos(angle)) + Math.abs(hh * Math.sin(angle));
    const ey = Math.abs(hw * Math.sin(angle)) + Math.abs(hh * Math.cos(angle));
    if (options.keep?.meets(x - ex, y - ey, x + ex, y + ey)) return;
    candidates.push({
      level: l,
      text,
      x,
      y,
      angle,
      priority: hash(l, posMod(Math.round(x), world), Math.round(y)),
      ex,
      ey,
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
        (dx < o.ex + c.ex + 4 * k && dy < o.ey + c.ey + 2 * k);
      if (conflict && outranks(o, c)) {
        wins = false;
        break;
      }
    }
    if (wins) placed.push({ level: c.level, text: c.text, x: c.x, y: c.y, angle: c.angle });
  }
  return placed;
}
