// A layer's legend: a horizontal colour-ramp PNG (min on the left, max on the right) drawn with
// the same palette as the tiles, and the JSON that labels it.

import { legendTicks, type Tick, unitChoices } from "../registry/display.ts";
import type { DisplayUnit, MapStyle, Temporal } from "../registry/registry.ts";
import { temporalText } from "../registry/temporal.ts";
import { buildPalette, type LegendStop, legendStops, type SteppedScale, steppedScale } from "./colormap.ts";
import { HATCH_RGBA, NO_DATA_LABEL } from "./no-data.ts";
import { encodeIndexedPng } from "./png.ts";

export const LEGEND_WIDTH = 256;
export const LEGEND_HEIGHT = 16;

/** What a legend needs to know about a variable; a registry entry with a style fits. */
export interface LegendSource {
  units: string;
  style: MapStyle;
  temporal: Temporal;
  long_name?: string;
}

export interface UnitOption {
  units: string;
  /** shown = canonical value * scale + offset */
  scale: number;
  offset: number;
  ticks: Tick[];
}

export interface LegendJson {
  long_name?: string;
  /** Canonical units of the stored values (and of min, max, stops). */
  units: string;
  /** The unit legends and popups show by default: units_options[0].units. */
  display_units: string;
  /** Labelled ticks in display units: the default choice's ticks. */
  ticks: Tick[];
  /** Every unit the viewer may switch to, the default first, each with its own ticks. */
  units_options: UnitOption[];
  colormap: string;
  min: number;
  max: number;
  /** Values at or below this are not drawn. */
  transparent_below?: number;
  stops: LegendStop[];
  temporal: Temporal["kind"];
  /** For accumulated variables, e.g. "amount over the previous 1 h". */
  interval?: string;
  /** How tiles draw nodes without a value (base layers: diagonal hatching, no-data.ts). */
  no_data?: NoDataKey;
}

export interface NoDataKey {
  label: string;
  pattern: "hatch";
  /** "#rrggbb" of the stripes and their opacity (0..1); between stripes the map shows. */
  color: string;
  opacity: number;
}

/** The legend's key for missing nodes, in the colours the tiles use. */
export function noDataKey(): NoDataKey {
  const [r, g, b, a] = HATCH_RGBA;
  const color = `#${[r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("")}`;
  return { label: NO_DATA_LABEL, pattern: "hatch", color, opacity: Math.round((a / 255) * 1000) / 1000 };
}

/** Each column shows the colour of the value at its centre, so the transparent range stays transparent. */
export function renderLegendPng(style: MapStyle, width = LEGEND_WIDTH, height = LEGEND_HEIGHT): Buffer {
  const { rgba, lut, axisLut, steps } = buildPalette(style);
  const indices = new Uint8Array(width * height);
  if (steps) {
    // A stepped scale: every class the same width, whatever its span in value.
    const classes = steps.colors.length;
    for (let x = 0; x < width; x++) indices[x] = axisLut(Math.floor(((x + 0.5) / width) * classes) + 0.5);
  } else {
    for (let x = 0; x < width; x++) indices[x] = lut(style.min + ((x + 0.5) / width) * (style.max - style.min));
  }
  for (let y = 1; y < height; y++) indices.copyWithin(y * width, 0, width);
  return encodeIndexedPng(indices, width, height, rgba);
}

export function intervalText(temporal: Temporal): string | undefined {
  return temporal.kind === "instantaneous" ? undefined : temporalText(temporal);
}

/** `noData`: the layer's tiles hatch missing nodes (base layers do; overlays draw nothing there). */
export function legendJson(source: LegendSource, stopCount = 11, noData = false): LegendJson {
  const { style } = source;
  const steps = steppedScale(style);
  const options = unitChoices(style, source.units).map((u) => ({
    ...u,
    ticks: steps ? steppedTicks(style, steps, u) : legendTicks(style, u),
  }));
  const legend: LegendJson = {
    units: source.units,
    display_units: options[0].units,
    ticks: options[0].ticks,
    units_options: options,
    colormap: style.colormap,
    min: style.min,
    max: style.max,
    stops: legendStops(style, stopCount),
    temporal: source.temporal.kind,
  };
  if (source.long_name !== undefined) legend.long_name = source.long_name;
  if (style.transparent_below !== undefined) legend.transparent_below = style.transparent_below;
  const interval = intervalText(source.temporal);
  if (interval !== undefined) legend.interval = interval;
  if (noData) legend.no_data = noDataKey();
  return legend;
}

/**
 * Ticks of a stepped legend: its labelled edges, each at the boundary between two equal-width
 * classes. In another unit than the scale's (km/h, knots, °F) each edge is converted and rounded
 * to a number a reader takes in at a glance (see roundTick), and the tick is put where that
 * rounded value falls on the class axis, so a label always names the value under its mark.
 */
export function steppedTicks(style: MapStyle, steps: SteppedScale, unit: DisplayUnit): Tick[] {
  const d = style.display!;
  const classes = steps.colors.length;
  if (unit.units === d.units) {
    return steps.labels.map((edge) => {
      const k = steps.edges.indexOf(edge) + 1;
      return { value: edge, position: Number((k / classes).toFixed(6)), label: String(edge) };
    });
  }
  const ticks: Tick[] = [];
  for (const edge of steps.labels) {
    const canonical = (edge - d.offset) / d.scale;
    const shown = roundTick(canonical * unit.scale + unit.offset);
    if (ticks.some((t) => t.value === shown)) continue;
    // Back into the scale's unit to find its place among the class edges.
    const inScale = ((shown - unit.offset) / unit.scale) * d.scale + d.offset;
    const position = classPosition(steps.edges, inScale) / classes;
    if (position > 0 && position < 1)
      ticks.push({ value: shown, position: Number(position.toFixed(6)), label: String(shown) });
  }
  return ticks;
}

/** A converted edge this close to a whole number is exact and keeps it (0 °C is 32 °F, not 30). */
const WHOLE_ENOUGH = 1e-6;

/**
 * A converted edge as a round number: whole numbers stay; others go to the nearest ten from 10
 * up, the nearest whole number from 1 up, one significant digit below (5.8 → 6, 19.8 → 20, 38.9 →
 * 40, 117.7 → 120 km/h).
 */
export function roundTick(v: number): number {
  if (Math.abs(v - Math.round(v)) < WHOLE_ENOUGH) return Math.round(v) || 0;
  const step = Math.min(10, 10 ** Math.floor(Math.log10(Math.abs(v))));
  return Number((Math.round(v / step) * step).toPrecision(12)) || 0;
}

/**
 * Where a value (in the scale's unit) sits on the class axis: edge k−1 at k, linear between edges
 * (the ramp drawn by renderLegendPng, every class the same width).
 */
function classPosition(edges: number[], v: number): number {
  if (v <= edges[0]) return 1;
  const n = edges.length;
  if (v >= edges[n - 1]) return n;
  let k = 1;
  while (edges[k] <= v) k++;
  return k + (v - edges[k - 1]) / (edges[k] - edges[k - 1]);
}
