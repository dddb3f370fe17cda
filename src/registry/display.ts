// Display units: the canonical (stored) value of a layer is shown as value * scale + offset with
// the style's unit label (°C, hPa, mm, %, m/s). One transform for legends, popups, the value route
// and TileJSON, so a number reads the same everywhere.
import type { DisplayUnit, MapStyle } from "./registry.ts";

/** The style's display unit, or the canonical units unchanged when the style names none. */
export function displayUnit(style: MapStyle | undefined, canonicalUnits: string): DisplayUnit {
  return style?.display ?? { units: canonicalUnits, scale: 1, offset: 0 };
}

/** Every unit the viewer may offer: the default first. */
export function unitChoices(style: MapStyle | undefined, canonicalUnits: string): DisplayUnit[] {
  return [displayUnit(style, canonicalUnits), ...(style?.display_alternatives ?? [])];
}

export function toDisplay(unit: DisplayUnit, value: number): number {
  // Rounded to 10 significant digits so 273.15 K reads 0 °C, not 1.1e-13.
  return Number((value * unit.scale + unit.offset).toPrecision(10));
}

export interface Tick {
  /** In display units. */
  value: number;
  /** 0 at the legend's left end (style.min), 1 at its right end (style.max). */
  position: number;
  label: string;
}

/** Step of 1, 2, 2.5 or 5 × 10^k giving at least `target` - 1 intervals over `span`. */
function niceStep(span: number, target: number): number {
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function decimals(step: number): number {
  for (let d = 0; d < 6; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-9) return d;
  return 6;
}

/**
 * Round-numbered ticks in display units over the style's range, about `target` of them, each at
 * the position of its value on the colour ramp. Ranges that run backwards in display (a negative
 * scale) work too.
 */
export function legendTicks(style: MapStyle, unit: DisplayUnit, target = 6): Tick[] {
  const a = style.min * unit.scale + unit.offset;
  const b = style.max * unit.scale + unit.offset;
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  const step = niceStep(hi - lo, target);
  const d = decimals(step);
  const eps = step * 1e-9;
  const ticks: Tick[] = [];
  for (let k = Math.ceil((lo - eps) / step); k * step <= hi + eps; k++) {
    const value = Number((k * step).toFixed(d));
    const position = Number(((value - a) / (b - a)).toFixed(6));
    ticks.push({ value: Object.is(value, -0) ? 0 : value, position, label: (value === 0 ? 0 : value).toFixed(d) });
  }
  return ticks;
}
