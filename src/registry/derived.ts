// Map layers computed from stored variables rather than read from one: wind speed from the wind
// components, direction arrows over it, and isobars from mean sea level pressure. Data only; the
// build (src/render/derived.ts) computes them, the catalog lists them like any other layer.
import type { MapStyle, Temporal } from "./variables.ts";

/**
 * speed: hypot of two components, drawn with a colour ramp like a stored field.
 * arrows: wind arrows scaled by speed on a staggered lattice (spacing_px, wider where the data is
 *   coarser than that on screen), a transparent overlay.
 * contours: smoothed lines at a fixed interval with labels and H/L marks, a transparent overlay.
 */
export type DerivedKind = "speed" | "arrows" | "contours";

export interface DerivedLayer {
  name: string;
  long_name: string;
  /** Canonical units of the computed value (the value route and legend use them). */
  units: string;
  temporal: Temporal;
  /** Canonical names of the stored variables it is computed from, in the order `kind` expects. */
  sources: string[];
  kind: DerivedKind;
  /** A base layer fills the map; an overlay is drawn over whatever base is shown. */
  role: "base" | "overlay";
  style: MapStyle;
  /** Arrows: base lattice spacing in screen pixels. Contours: interval in canonical units. */
  spacing_px?: number;
  interval?: number;
}

const WIND_DISPLAY: Pick<MapStyle, "display" | "display_alternatives"> = {
  display: { units: "m/s", scale: 1, offset: 0 },
  display_alternatives: [
    { units: "km/h", scale: 3.6, offset: 0 },
    { units: "kn", scale: 3600 / 1852, offset: 0 },
  ],
};

export const DERIVED_LAYERS: readonly DerivedLayer[] = [
  {
    name: "wind_speed",
    long_name: "10 metre wind speed",
    units: "m s-1",
    temporal: { kind: "instantaneous" },
    sources: ["u10", "v10"],
    kind: "speed",
    role: "base",
    style: { colormap: "wind", min: 0, max: 40, ...WIND_DISPLAY },
  },
  {
    name: "wind_arrows",
    long_name: "10 metre wind direction",
    units: "m s-1",
    temporal: { kind: "instantaneous" },
    sources: ["u10", "v10"],
    kind: "arrows",
    role: "overlay",
    style: { colormap: "wind", min: 0, max: 40, ...WIND_DISPLAY },
    spacing_px: 40,
  },
  {
    name: "isobars",
    long_name: "Isobars (mean sea level pressure)",
    units: "Pa",
    temporal: { kind: "instantaneous" },
    sources: ["msl"],
    kind: "contours",
    role: "overlay",
    style: { colormap: "pressure", min: 96000, max: 104000, display: { units: "hPa", scale: 0.01, offset: 0 } },
    interval: 400,
  },
];
