// Sizes of the synthetic store per preset: grids, lead times, chunking, embedding shapes, tiles.
// Grid steps are rationals (num/den degrees) so every coordinate is one correctly rounded
// division, identical whichever order or longitude convention a layout uses.
import type { Format } from "./zarr-writer.ts";

export type PresetName = "tiny" | "demo" | "full";
export const PRESET_NAMES: readonly PresetName[] = ["tiny", "demo", "full"];

export interface Step {
  num: number;
  den: number;
}

export interface GroupLayout {
  /** Name below forecast/. */
  name: string;
  kind: "global" | "regional";
  format: Format;
  step: Step;
  /** Inclusive latitude and longitude ranges (regional groups; global grids cover the sphere). */
  lat: [number, number];
  lon: [number, number];
  /** Spatial chunk size (rows, cols); a chunk spans all lead times. */
  chunk: [number, number];
  /** Canonical variable name → stored array name. */
  variables: Record<string, string>;
  model: string;
  title: string;
}

export interface Preset {
  name: PresetName;
  /** Run (initialisation) times, UTC ms. */
  runs: number[];
  leads: number[];
  levels: number[];
  groups: GroupLayout[];
  /** [y, x, feature] of each embedding product. */
  products: Record<"tokens" | "map" | "vector", [number, number, number]>;
  /** Points (lon, lat) whose 100 km MGRS tiles get embeddings. */
  tilePoints: [number, number][];
  zstdLevel: number;
}

export const RUNS = [Date.UTC(2026, 10, 20, 0), Date.UTC(2026, 10, 20, 12)];

const GLOBAL_VARS = { t2m: "t2m", u10: "u10", v10: "v10", msl: "msl", tp_1h: "tp_1h", tcc: "tcc", t: "t" };
const EUROPE_VARS = { t2m: "t2m", u10: "u10", v10: "v10", msl: "msl", tp_1h: "tp_1h" };
// The alps patch stores u10 under its ECMWF short name so alias resolution of stored names is used.
const ALPS_VARS = { t2m: "t2m", u10: "10u", v10: "v10", tp_1h: "tp_1h" };

function groups(fine: boolean, europeFormat: Format): GroupLayout[] {
  return [
    {
      name: "global",
      kind: "global",
      format: 3,
      step: fine ? { num: 1, den: 4 } : { num: 2, den: 1 },
      lat: [-90, 90],
      lon: [-180, 180],
      chunk: fine ? [180, 180] : [90, 90],
      variables: GLOBAL_VARS,
      model: "gridcast-synth-global",
      title: "Synthetic global forecast",
    },
    {
      name: "europe",
      kind: "regional",
      format: europeFormat,
      step: fine ? { num: 1, den: 10 } : { num: 1, den: 2 },
      lat: [34, 72],
      lon: [-12, 40],
      chunk: fine ? [180, 180] : [90, 90],
      variables: EUROPE_VARS,
      model: "gridcast-synth-europe",
      title: "Synthetic regional forecast: Europe",
    },
    {
      name: "alps",
      kind: "regional",
      format: 3,
      step: fine ? { num: 1, den: 40 } : { num: 1, den: 10 },
      lat: [43.5, 48.5],
      lon: [5, 17],
      chunk: fine ? [180, 180] : [90, 90],
      variables: ALPS_VARS,
      model: "gridcast-synth-alps",
      title: "Synthetic regional forecast: Alps",
    },
  ];
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// Both sides of a zone boundary (6°E, 12°E), Norway's widened zone 32V, Svalbard (33X), the
// equator and the southern hemisphere.
const TINY_TILES: [number, number][] = [
  [11.5, 48.1],
  [5.99, 47.0],
  [6.01, 47.0],
  [5.3, 60.4],
  [15.6, 78.2],
  [37.0, 0.0],
  [36.8, -1.3],
  [151.2, -33.9],
  [18.4, -33.9],
  [-46.6, -23.5],
  [-74.0, 40.7],
  [139.7, 35.7],
];

const MORE_TILES: [number, number][] = [
  [11.9, 48.1],
  [12.1, 48.1],
  [-21.9, 64.1],
  [-149.9, 61.2],
  [-157.9, 21.3],
  [77.2, 28.6],
  [-58.4, -34.6],
  [174.8, -36.8],
  [-47.9, -15.8],
  [-0.1, 51.5],
  [2.35, 48.85],
  [12.5, 41.9],
  [31.2, 30.0],
  [103.8, 1.35],
  [115.9, -31.95],
  [-77.0, -12.0],
  [-105.0, 39.7],
  [37.6, 55.75],
];

export const PRESETS: Record<PresetName, Preset> = {
  tiny: {
    name: "tiny",
    runs: RUNS,
    leads: range(7),
    levels: [500, 850],
    groups: groups(false, 2),
    products: { tokens: [16, 16, 64], map: [32, 32, 16], vector: [1, 1, 64] },
    tilePoints: TINY_TILES,
    zstdLevel: 3,
  },
  demo: {
    name: "demo",
    runs: RUNS,
    leads: range(3),
    levels: [500, 850],
    groups: groups(true, 3),
    products: { tokens: [32, 32, 256], map: [64, 64, 32], vector: [1, 1, 256] },
    tilePoints: [...TINY_TILES, ...MORE_TILES],
    zstdLevel: 3,
  },
  full: {
    name: "full",
    runs: RUNS,
    leads: range(13),
    levels: [500, 850],
    groups: groups(true, 3),
    products: { tokens: [32, 32, 256], map: [64, 64, 32], vector: [1, 1, 256] },
    tilePoints: [...TINY_TILES, ...MORE_TILES],
    zstdLevel: 3,
  },
};
