// The indexed palette overlay tiles are stored in, and the quantiser from their RGBA pixels to it.
import { HIGH_COLOUR, LOW_COLOUR } from "./overlay-paint.ts";

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
