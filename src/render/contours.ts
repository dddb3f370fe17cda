// A contour overlay tile (isobars): the traced lines over their halo, labels along them and H/L
// marks at the centres, composed into one RGBA tile.
import { findExtrema } from "./contour-extrema.ts";
import {
  digitsSize,
  drawDigits,
  drawRotatedLabel,
  knockOut,
  LABEL_PX,
  LABEL_STYLE,
  MARK_PX,
  MARK_STYLE,
  placeLabels,
  scaledStyle,
} from "./contour-labels.ts";
import { type ContourOptions, traceContours } from "./contour-trace.ts";
import {
  type Field,
  HALO_COLOUR,
  HIGH_COLOUR,
  LINE_COLOUR,
  LOW_COLOUR,
  OVERLAY_BYTES,
  paint,
  posMod,
  strokeSegment,
} from "./overlay-paint.ts";
import type { TileBoxes } from "./png.ts";
import type { LevelSampler } from "./resample.ts";
import { cachedLabelMask } from "./text.ts";
import { TILE_SIZE } from "./tiles.ts";

/**
 * Isobars (or any contour lines) of one tile into `out` (RGBA, size×size×4): smoothed anti-aliased
 * lines at multiples of `interval` over a light halo, every fifth a little heavier, labels along
 * the lines and H/L marks. Text masks must have been made first (prepareContourText). The tile is
 * (x, y) among tiles of `size` world pixels: 256 for a map tile, 512 for an @2x tile drawn whole at
 * the next zoom (scale 2), its lines traced, labels placed and centres found once for all of it.
 */
export function renderContours(
  sampler: LevelSampler,
  x: number,
  y: number,
  field: Field,
  options: ContourOptions,
  out: Uint8Array = new Uint8Array(OVERLAY_BYTES),
  marks?: TileBoxes,
  size = TILE_SIZE,
): Uint8Array {
  out.fill(0);
  const k = options.scale ?? 1;
  const step = Math.max(1, Math.round(options.step ?? 4));
  const smooth = options.smooth ?? Math.min(4, Math.floor(Math.log2(step)));
  const left = x * size;
  const top = y * size;
  const margin = step * (smooth + 3) + 8;
  const lines = traceContours(
    sampler,
    field,
    [left - margin, top - margin, left + size + margin, top + size + margin],
    options.interval,
    step,
    smooth,
  );
  const line = new Float32Array(size * size);
  const halo = new Float32Array(size * size);
  const heavy = new Float32Array(size * size);
  for (const c of lines) {
    const bold = posMod(c.level, 5) === 0;
    const p = c.points;
    const n = p.length / 2;
    const segs = c.closed ? n : n - 1;
    const hw = (bold ? 1.1 : 0.65) * k;
    for (let s = 0; s < segs; s++) {
      const a = s * 2;
      const b = ((s + 1) % n) * 2;
      const x0 = p[a] - left;
      const y0 = p[a + 1] - top;
      const x1 = p[b] - left;
      const y1 = p[b + 1] - top;
      if (Math.max(x0, x1) < -4 * k || Math.min(x0, x1) > size + 4 * k) continue;
      if (Math.max(y0, y1) < -4 * k || Math.min(y0, y1) > size + 4 * k) continue;
      strokeSegment(halo, x0, y0, x1, y1, hw + 1.2 * k, size);
      strokeSegment(bold ? heavy : line, x0, y0, x1, y1, hw, size);
    }
  }
  const area: [number, number, number, number] = [left, top, left + size, top + size];
  const labels = placeLabels(sampler, field, area, options);
  const font = (options.fontPx ?? LABEL_PX) * k;
  const masks = labels.map((l) => cachedLabelMask(l.text, font, scaledStyle(LABEL_STYLE, k))!);
  labels.forEach((l, i) => {
    knockOut([line, heavy, halo], masks[i], l.x - left, l.y - top, l.angle, 3 * k, size);
  });
  for (let k = 0; k < line.length; k++) if (heavy[k] > line[k]) line[k] = heavy[k];
  paint(out, halo, HALO_COLOUR);
  paint(out, line, LINE_COLOUR);
  const note = (cx: number, cy: number, ex: number, ey: number) => {
    const box: TileBoxes[number] = [Math.floor(cx - ex), Math.floor(cy - ey), Math.ceil(cx + ex), Math.ceil(cy + ey)];
    if (box[2] > 0 && box[3] > 0 && box[0] < size && box[1] < size) marks?.push(box);
  };
  labels.forEach((l, i) => {
    drawRotatedLabel(out, masks[i], l.x - left, l.y - top, l.angle, undefined, undefined, size);
    const hw = masks[i].width / 2;
    const hh = masks[i].height / 2;
    const [c, s] = [Math.abs(Math.cos(l.angle)), Math.abs(Math.sin(l.angle))];
    note(l.x - left, l.y - top, hw * c + hh * s + 1, hw * s + hh * c + 1);
  });
  const radius = options.extremaRadius ?? 160 * k;
  if (radius > 0) {
    for (const e of findExtrema(sampler, field, area, radius, options.extremaDepth ?? options.interval, k)) {
      const mask = cachedLabelMask(e.kind, MARK_PX * k, scaledStyle(MARK_STYLE, k));
      const colour = e.kind === "H" ? HIGH_COLOUR : LOW_COLOUR;
      if (mask) drawRotatedLabel(out, mask, e.x - left, e.y - top, 0, colour, undefined, size);
      const value = options.label(e.value);
      drawDigits(out, value, e.x - left, e.y - top + 15 * k, colour, k, size);
      // The letter and the value under it: one box round both.
      const d = digitsSize(value, k);
      const hw = Math.max(mask ? mask.width / 2 : 0, d.width / 2) + 1;
      const topY = e.y - top - (mask ? mask.height / 2 : 0) - 1;
      const bottomY = e.y - top + 15 * k + d.height / 2 + 1;
      note(e.x - left, (topY + bottomY) / 2, hw, (bottomY - topY) / 2);
    }
  }
  return out;
}
