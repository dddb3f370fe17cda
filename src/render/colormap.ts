// Named colour ramps and the 256-entry palettes built from them. Index 0 is reserved for
// "draw nothing" (NaN, no data, values at or below transparent_below); indices 1..255 split the
// style's [min, max] into equal bins, so a value maps to an index with one multiply and a clamp.
import { InvalidParameterError } from "../errors.ts";
import type { MapStyle } from "../registry/registry.ts";

/** Control points: position in [0, 1], then r, g, b, a (0..255). */
type Ramp = readonly (readonly [number, number, number, number, number])[];

const RAMPS: Record<string, Ramp> = {
  // Cold purples and blues through green and yellow to hot reds.
  thermal: [
    [0, 40, 0, 80, 255],
    [0.15, 60, 40, 170, 255],
    [0.3, 30, 120, 220, 255],
    [0.45, 60, 200, 200, 255],
    [0.55, 120, 210, 100, 255],
    [0.68, 240, 230, 80, 255],
    [0.8, 245, 150, 40, 255],
    [0.92, 210, 40, 30, 255],
    [1, 120, 0, 20, 255],
  ],
  // Blue for negative, white at zero (when min = -max), red for positive.
  diverging: [
    [0, 20, 60, 150, 255],
    [0.25, 90, 150, 210, 255],
    [0.5, 247, 247, 247, 255],
    [0.75, 230, 120, 90, 255],
    [1, 150, 10, 30, 255],
  ],
  // Sequential dark violet to yellow: lows read dark, highs bright.
  pressure: [
    [0, 70, 20, 100, 255],
    [0.25, 60, 80, 160, 255],
    [0.5, 40, 150, 140, 255],
    [0.75, 130, 200, 80, 255],
    [1, 250, 230, 60, 255],
  ],
  // Light blue for drizzle to dark blue and purple for downpours.
  precipitation: [
    [0, 200, 230, 250, 255],
    [0.3, 100, 170, 235, 255],
    [0.6, 30, 80, 200, 255],
    [0.85, 60, 20, 150, 255],
    [1, 110, 0, 120, 255],
  ],
  // Calm pale blue through green and yellow to storm reds and magenta.
  wind: [
    [0, 225, 240, 250, 255],
    [0.12, 150, 205, 235, 255],
    [0.25, 80, 185, 160, 255],
    [0.4, 170, 215, 70, 255],
    [0.55, 250, 210, 50, 255],
    [0.7, 240, 120, 40, 255],
    [0.85, 200, 30, 60, 255],
    [1, 140, 20, 140, 255],
  ],
  // Clear sky shows the base map; overcast is an opaque-ish grey-white veil.
  clouds: [
    [0, 255, 255, 255, 0],
    [0.5, 235, 235, 240, 140],
    [1, 200, 200, 205, 230],
  ],
};

export const COLORMAPS: readonly string[] = Object.keys(RAMPS);

/** Colour entries after the transparent index 0. */
export const PALETTE_COLORS = 255;

export type PaletteStyle = Pick<MapStyle, "colormap" | "min" | "max" | "transparent_below">;

export interface Palette {
  /** 256 RGBA entries, 4 bytes each; entry 0 is fully transparent. */
  rgba: Uint8Array;
  /** Value → palette index: 0 for NaN and transparent values, else 1..255, clamped to the range. */
  lut: (value: number) => number;
  /** The lut's arithmetic, for loops that inline it: index = clamp(value * scale + offset) above `below`. */
  scale: number;
  offset: number;
  below: number;
}

function rampAt(ramp: Ramp, t: number, out: Uint8Array, at: number): void {
  let i = 1;
  while (i < ramp.length - 1 && ramp[i][0] < t) i++;
  const a = ramp[i - 1];
  const b = ramp[i];
  const f = b[0] === a[0] ? 0 : Math.min(1, Math.max(0, (t - a[0]) / (b[0] - a[0])));
  for (let c = 1; c <= 4; c++) out[at + c - 1] = Math.round(a[c] + (b[c] - a[c]) * f);
}

export function buildPalette(style: PaletteStyle): Palette {
  const ramp = RAMPS[style.colormap];
  if (!ramp) {
    throw new InvalidParameterError("colormap", `unknown colormap "${style.colormap}"`, { available: COLORMAPS });
  }
  const { min, max } = style;
  if (!(Number.isFinite(min) && Number.isFinite(max) && max > min)) {
    throw new InvalidParameterError("style", `colour range needs finite min < max, got ${min}..${max}`);
  }
  const rgba = new Uint8Array(256 * 4);
  // Each index shows the ramp colour at the centre of its bin.
  for (let i = 1; i <= PALETTE_COLORS; i++) rampAt(ramp, (i - 0.5) / PALETTE_COLORS, rgba, i * 4);

  const scale = PALETTE_COLORS / (max - min);
  const offset = 1 - min * scale;
  const below = style.transparent_below ?? Number.NEGATIVE_INFINITY;
  const lut = (v: number): number => {
    // One comparison catches NaN and the transparent range alike.
    if (!(v > below)) return 0;
    const t = v * scale + offset;
    return t < 1 ? 1 : t >= PALETTE_COLORS ? PALETTE_COLORS : t | 0;
  };
  return { rgba, lut, scale, offset, below };
}

export interface LegendStop {
  value: number;
  /** "#rrggbb" */
  color: string;
  /** Present only when the colour is not fully opaque (clouds, the transparent range). */
  opacity?: number;
}

function hex2(v: number): string {
  return v.toString(16).padStart(2, "0");
}

/** `n` evenly spaced stops from min to max, each with exactly the colour a tile shows for that value. */
export function legendStops(style: PaletteStyle, n = 11): LegendStop[] {
  if (!(Number.isInteger(n) && n >= 2)) throw new InvalidParameterError("n", `legend needs at least 2 stops, got ${n}`);
  const { rgba, lut } = buildPalette(style);
  const stops: LegendStop[] = [];
  for (let k = 0; k < n; k++) {
    const value = Number((style.min + ((style.max - style.min) * k) / (n - 1)).toPrecision(6));
    const at = lut(value) * 4;
    const stop: LegendStop = { value, color: `#${hex2(rgba[at])}${hex2(rgba[at + 1])}${hex2(rgba[at + 2])}` };
    if (rgba[at + 3] < 255) stop.opacity = Math.round((rgba[at + 3] / 255) * 1000) / 1000;
    stops.push(stop);
  }
  return stops;
}
