// Named colour ramps and the 256-entry palettes built from them. Index 0 is reserved for
// "draw nothing" (NaN, no data, values at or below transparent_below). A palette maps values to
// indices with one multiply and a clamp on its axis: for a smooth ramp the axis is the value
// itself and indices 1..255 split [min, max] into equal bins; for a stepped ramp (below) the axis
// is the class number, so each class of a non-linear scale (0.1, 0.2, 0.5, 1, 2 … mm) gets the
// same share of indices and one flat colour, with its edges exactly where the scale says.
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

export type PaletteStyle = Pick<MapStyle, "colormap" | "min" | "max" | "transparent_below"> &
  Partial<Pick<MapStyle, "display">>;

export interface Palette {
  /** 256 RGBA entries, 4 bytes each; entry 0 is fully transparent. */
  rgba: Uint8Array;
  /** Value (canonical units) → palette index: 0 for NaN and transparent values, else 1..255. */
  lut: (value: number) => number;
  /**
   * The same on the palette's axis: renderers are handed fields already on it (`onAxis`), and
   * inline this arithmetic. For a smooth ramp the axis is the value and this is `lut`.
   */
  axisLut: (axisValue: number) => number;
  /** The lut's arithmetic, for loops that inline it: index = clamp(axis * scale + offset) above `below`. */
  scale: number;
  offset: number;
  below: number;
  /** Value (canonical units) → axis; undefined when the axis is the value itself. */
  toAxis?: (value: number) => number;
  /** The stepped scale drawn, when there is one. */
  steps?: SteppedScale;
}

/**
 * A stepped ramp in display units: `edges` split the line into edges.length + 1 classes (below
 * the first edge, between edges, above the last), each drawn in one colour of `colors`.
 */
export interface SteppedScale {
  units: string;
  edges: number[];
  /** One RGBA per class: edges.length + 1 of them. */
  colors: (readonly [number, number, number, number])[];
  /** Edges worth a legend label. */
  labels: number[];
}

function rampAt(ramp: Ramp, t: number, out: Uint8Array, at: number): void {
  let i = 1;
  while (i < ramp.length - 1 && ramp[i][0] < t) i++;
  const a = ramp[i - 1];
  const b = ramp[i];
  const f = b[0] === a[0] ? 0 : Math.min(1, Math.max(0, (t - a[0]) / (b[0] - a[0])));
  for (let c = 1; c <= 4; c++) out[at + c - 1] = Math.round(a[c] + (b[c] - a[c]) * f);
}

// ---- Stepped, perceptual scales -------------------------------------------------------------
// Class colours are read off anchor colours interpolated in OKLab, so equal steps look equally
// different; each scale names the display unit its edges are in and applies only to styles that
// show that unit (a style in other units keeps the smooth ramp).

type Rgb = readonly [number, number, number];

const toLinear = (c: number) => {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
};
const fromLinear = (v: number) => {
  const c = v <= 0.0031308 ? v * 12.92 : 1.055 * v ** (1 / 2.4) - 0.055;
  return Math.round(Math.min(1, Math.max(0, c)) * 255);
};

function toOklab([r, g, b]: Rgb): Rgb {
  const [lr, lg, lb] = [toLinear(r), toLinear(g), toLinear(b)];
  const l = Math.cbrt(0.4122214708 * lr + 0.5363325363 * lg + 0.0514459929 * lb);
  const m = Math.cbrt(0.2119034982 * lr + 0.6806995451 * lg + 0.1073969566 * lb);
  const s = Math.cbrt(0.0883024619 * lr + 0.2817188376 * lg + 0.6299787005 * lb);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

function fromOklab([L, A, B]: Rgb): Rgb {
  const l = (L + 0.3963377774 * A + 0.2158037573 * B) ** 3;
  const m = (L - 0.1055613458 * A - 0.0638541728 * B) ** 3;
  const s = (L - 0.0894841775 * A - 1.291485548 * B) ** 3;
  return [
    fromLinear(4.0767416621 * l - 3.3077115913 * m + 0.2309699292 * s),
    fromLinear(-1.2684380046 * l + 2.6097574011 * m - 0.3413193965 * s),
    fromLinear(-0.0041960863 * l - 0.7034186147 * m + 1.707815409 * s),
  ];
}

const hex = (h: string): Rgb => [
  Number.parseInt(h.slice(1, 3), 16),
  Number.parseInt(h.slice(3, 5), 16),
  Number.parseInt(h.slice(5, 7), 16),
];

/** The colour at display value `v` between anchors [value, "#rrggbb"], interpolated in OKLab. */
function anchoredColor(anchors: readonly (readonly [number, string])[], v: number): Rgb {
  if (v <= anchors[0][0]) return hex(anchors[0][1]);
  for (let i = 1; i < anchors.length; i++) {
    const [b, hb] = anchors[i];
    if (v <= b) {
      const [a, ha] = anchors[i - 1];
      const f = (v - a) / (b - a);
      const p = toOklab(hex(ha));
      const q = toOklab(hex(hb));
      return fromOklab([p[0] + (q[0] - p[0]) * f, p[1] + (q[1] - p[1]) * f, p[2] + (q[2] - p[2]) * f]);
    }
  }
  return hex(anchors[anchors.length - 1][1]);
}

/** Each class coloured at a representative value: its middle, or beside its one edge when open. */
function classColors(
  edges: number[],
  colorAt: (v: number) => readonly [number, number, number, number],
): (readonly [number, number, number, number])[] {
  const out: (readonly [number, number, number, number])[] = [colorAt(edges[0] - 1e-9)];
  for (let k = 1; k < edges.length; k++) out.push(colorAt((edges[k - 1] + edges[k]) / 2));
  out.push(colorAt(edges[edges.length - 1] + 1e-9));
  return out;
}

const range = (from: number, to: number, step: number): number[] => {
  const out: number[] = [];
  for (let v = from; v <= to + step * 1e-9; v += step) out.push(Number(v.toFixed(6)));
  return out;
};

// Temperature: 5 °C classes in the cold and hot tails, 1 °C classes from −20 to +35 °C where
// people live; a hue change every 5 °C and a visible break at 0 °C (blue below, green above).
const TEMPERATURE_ANCHORS: [number, string][] = [
  [-50, "#f0e6f5"],
  [-40, "#c9a5dc"],
  [-30, "#8e5bb5"],
  [-20, "#4b3a9c"],
  [-10, "#2f6fc0"],
  [-0.5, "#9fd6f2"],
  [0.5, "#b8e3a8"],
  [5, "#6cc06a"],
  [10, "#d3e35a"],
  [15, "#ffd84a"],
  [20, "#fca237"],
  [25, "#ef6030"],
  [30, "#cc2a2f"],
  [35, "#8e0f3a"],
  [50, "#3d0620"],
];
const TEMPERATURE_EDGES = [...range(-45, -25, 5), ...range(-20, 35, 1), 40, 45];

// Precipitation amount (mm) or rate (mm/h): non-linear classes from 0.1 up.
const PRECIPITATION_EDGES = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100];
const PRECIPITATION_CLASSES: Rgb[] = [
  [0, 0, 0], // below 0.1: transparent
  // Light rain in greens: a pale blue vanishes on the blue-grey sea; these stand out on the sea
  // and on the land fill alike, then blue, purple, magenta and warm colours for downpours.
  hex("#7fd9b0"),
  hex("#3fbf8f"),
  hex("#2aa6c8"),
  hex("#2f7fe0"),
  hex("#2b4fb8"),
  hex("#5a2fb0"),
  hex("#ad2ca8"),
  hex("#e2458b"),
  hex("#ff8a4c"),
  hex("#ffd83d"),
];

// Wind speed in m/s: the Beaufort scale's edges (force 0 … 12).
/**
 * Cloud veil from one tenth of cover (first of each pair) to overcast (second), per channel. The
 * thin end is a blue-grey at 40 % opacity, not a near-white: a pale veil vanished on the beige land
 * (ΔE*ab 4 at 20 % cover); this one shows a tenth of cover at ΔE*ab 12 over the land, 20 % at 14,
 * and each tenth about 3 more (docs/maps.md; test/web/ramps-dpr.test.ts measures 20 % in Chromium).
 */
const CLOUD_THIN: [number, number][] = [
  [140, 92],
  [152, 102],
  [175, 118],
];
const CLOUD_ALPHA: [number, number] = [100, 235];

const BEAUFORT_EDGES = [0.5, 1.6, 3.4, 5.5, 8, 10.8, 13.9, 17.2, 20.8, 24.5, 28.5, 32.7];
const WIND_ANCHORS: [number, string][] = [
  [0, "#eef5fb"],
  [2.5, "#a9d4ee"],
  [6.5, "#5fb8a6"],
  [9.5, "#9fd15a"],
  [12, "#f2d43f"],
  [15.5, "#f5962e"],
  [19, "#e0492e"],
  [23, "#b61f55"],
  [27, "#8a1e8e"],
  [31, "#5b1f9c"],
  [35, "#2d0f5e"],
];

export const STEPPED: Record<string, (min: number, max: number) => SteppedScale | undefined> = {
  thermal: () => ({
    units: "°C",
    edges: TEMPERATURE_EDGES,
    colors: classColors(TEMPERATURE_EDGES, (v) => [...anchoredColor(TEMPERATURE_ANCHORS, v), 255] as const),
    labels: [-30, -10, 0, 10, 20, 30, 40],
  }),
  precipitation: () => ({
    units: "mm",
    edges: PRECIPITATION_EDGES,
    colors: PRECIPITATION_CLASSES.map((c, k) => [...c, k === 0 ? 0 : 255] as const),
    labels: PRECIPITATION_EDGES,
  }),
  wind: () => ({
    units: "m/s",
    edges: BEAUFORT_EDGES,
    colors: classColors(BEAUFORT_EDGES, (v) => [...anchoredColor(WIND_ANCHORS, v), 255] as const),
    labels: [1.6, 5.5, 10.8, 17.2, 24.5, 32.7],
  }),
  // Tenths of cover: under a tenth shows the map; from there each tenth a denser, darker veil, from
  // a thin blue-grey to a slate grey that stands out on both the beige land and the blue-grey sea
  // (white cloud, as on a dark satellite base, would vanish on this light map).
  clouds: () => {
    const edges = range(10, 90, 10);
    return {
      units: "%",
      edges,
      colors: [0, ...edges].map((_edge, k) => {
        if (k === 0) return [255, 255, 255, 0] as const;
        const t = (k - 1) / 8;
        const mix = (a: number, b: number) => Math.round(a + (b - a) * t);
        return [mix(...CLOUD_THIN[0]), mix(...CLOUD_THIN[1]), mix(...CLOUD_THIN[2]), mix(...CLOUD_ALPHA)] as const;
      }),
      labels: [20, 40, 60, 80],
    };
  },
  // Pressure: 4 hPa classes (the isobar interval) over sea-level ranges, wider over others.
  pressure: (min, max) => {
    const span = max - min;
    const step = span <= 120 ? 4 : span <= 300 ? 10 : 20;
    const edges = range((Math.floor(min / step) + 1) * step, max, step).filter((e) => e < max);
    if (edges.length < 2 || edges.length > 120) return undefined;
    const ramp = RAMPS.pressure;
    const colors = classColors(edges, (v) => {
      const out = new Uint8Array(4);
      rampAt(ramp, Math.min(1, Math.max(0, (v - min) / span)), out, 0);
      return [out[0], out[1], out[2], out[3]] as const;
    });
    const labelStep = step * 5;
    return { units: "hPa", edges, colors, labels: edges.filter((e) => e % labelStep === 0) };
  },
};

/** Display units a stepped scale in `units` also accepts (same numbers, per hour or per step). */
const SAME_NUMBERS: Record<string, string[]> = { mm: ["mm", "mm/h"] };

/** The stepped scale a style is drawn with, or undefined for the smooth ramp. */
export function steppedScale(style: PaletteStyle): SteppedScale | undefined {
  const unit = style.display;
  if (!unit || !(unit.scale > 0)) return undefined;
  const make = STEPPED[style.colormap];
  if (!make) return undefined;
  const lo = style.min * unit.scale + unit.offset;
  const hi = style.max * unit.scale + unit.offset;
  const steps = make(lo, hi);
  if (!steps) return undefined;
  return (SAME_NUMBERS[steps.units] ?? [steps.units]).includes(unit.units) ? steps : undefined;
}

/**
 * Canonical value → class axis: class k (between edge k-1 and edge k) spans [k, k+1), linearly
 * in the value inside it, so bilinear sampling of the axis moves edges as the value would. Open
 * end classes sit at their middle. NaN stays NaN.
 */
function classAxis(steps: SteppedScale, scale: number, offset: number): (value: number) => number {
  const e = steps.edges;
  const n = e.length;
  return (value) => {
    const d = value * scale + offset;
    if (!(d >= e[0])) return d < e[0] ? 0.5 : Number.NaN;
    if (d >= e[n - 1]) return n + 0.5;
    let lo = 0;
    let hi = n - 1; // e[lo] <= d < e[hi]
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (e[mid] <= d) lo = mid;
      else hi = mid;
    }
    return lo + 1 + Math.min(0.999999, (d - e[lo]) / (e[hi] - e[lo]));
  };
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
  const steps = steppedScale(style);
  if (steps) {
    // Class k takes indices 1 + k*per .. (k+1)*per.
    const classes = steps.colors.length;
    const per = Math.floor(PALETTE_COLORS / classes);
    for (let i = 1; i <= PALETTE_COLORS; i++) {
      const c = steps.colors[Math.min(classes - 1, Math.floor((i - 1) / per))];
      rgba.set(c, i * 4);
    }
    const toAxis = classAxis(steps, style.display!.scale, style.display!.offset);
    const tb = style.transparent_below;
    // A transparent first class (precipitation below 0.1 mm) draws nothing, whatever the style says.
    const below = Math.max(
      tb === undefined ? Number.NEGATIVE_INFINITY : toAxis(tb),
      steps.colors[0][3] === 0 ? 1 : Number.NEGATIVE_INFINITY,
    );
    const axisLut = (t: number): number => {
      if (!(t > below)) return 0;
      const i = t * per + 1;
      return i >= PALETTE_COLORS ? PALETTE_COLORS : i | 0;
    };
    return { rgba, lut: (v) => axisLut(toAxis(v)), axisLut, scale: per, offset: 1, below, toAxis, steps };
  }
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
  return { rgba, lut, axisLut: lut, scale, offset, below };
}

/** A field on the palette's axis (a new array), or the field itself when the axis is the value. */
export function onAxis<F extends Float32Array | Float64Array>(palette: Palette, field: F): F {
  const toAxis = palette.toAxis;
  if (!toAxis) return field;
  const out = new (field.constructor as { new (n: number): F })(field.length);
  for (let i = 0; i < field.length; i++) out[i] = toAxis(field[i]);
  return out;
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
