// A contour overlay tile (isobars): the traced lines over their halo, labels along them and H/L
// marks at the centres, composed into one RGBA tile.
import { findExtrema } from "./contour-extrema.ts";
import {
  drawDigits,
  drawRotatedLabel,
  knockOut,
  LABEL_PX,
  LABEL_STYLE,
  MARK_PX,
  MARK_STYLE,
  placeLabels,
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
import type { LevelSampler } from "./resample.ts";
import { cachedLabelMask } from "./text.ts";
import { TILE_SIZE } from "./tiles.ts";

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
