// The horizontal grid of a group on latitude/longitude axes: the axes read, checked and made
// into a Grid (spacing, bounds with cell edges, whether it wraps the globe), longitudes read as a
// circle when a regional grid is stored across the seam of its convention.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import type { CellGrid } from "./cell-grid.ts";
import { wrap180 } from "./grid.ts";
import type { GridProjection } from "./projected-grid.ts";

export interface Grid {
  lat: Float64Array;
  lon: Float64Array;
  latAscending: boolean;
  /** True when the stored longitudes run 0..360 rather than -180..180. */
  lon360: boolean;
  /** The stored longitudes, when `lon` runs past the seam of their convention (see circularLon). */
  storedLon?: Float64Array;
  dlat: number;
  dlon: number;
  /** West, south, east, north in degrees, -180..180, cell edges included. */
  bbox: [number, number, number, number];
  /** The grid wraps around the globe in longitude. */
  global: boolean;
  /**
   * Set for a projected or rotated grid: then `lat`/`lon` hold the projection's y/x coordinates
   * (the row and column axes, roles "lat" and "lon"), dlat/dlon the nominal spacing in degrees and
   * bbox the geographic bounds of its cells. Undefined for a regular latitude/longitude grid.
   */
  projection?: GridProjection;
  /**
   * Set for an unstructured or reduced grid (ICON, reduced Gaussian, anemoi-datasets, HEALPix): its
   * one cell axis takes the column role ("lon"), there is no row axis, `lat`/`lon` hold the cell
   * centres and dlat/dlon the nominal spacing. Undefined for grids with latitude and longitude axes.
   */
  cells?: CellGrid;
}

function spacing(c: Float64Array): number {
  return c.length > 1 ? Math.abs(c[c.length - 1] - c[0]) / (c.length - 1) : 0;
}

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

function monotonic(c: Float64Array): boolean {
  if (c.length < 2) return true;
  const up = c[1] > c[0];
  for (let i = 1; i < c.length; i++) if (!(c[i] > c[i - 1] === up && c[i] !== c[i - 1])) return false;
  return true;
}

/** A 1-D coordinate's values, scaled and offset but never masked (see readFloat in build). */
export async function readAxis(arr: StoredArray): Promise<Float64Array> {
  const { scale, offset } = arr.packing;
  return Float64Array.from(await arr.readRaw(), (x) => x * scale + offset);
}

/** Refuses grids gridcast cannot map or locate points on; the reason names the axis. */
export function checkAxis(name: "latitude" | "longitude", c: Float64Array): void {
  if (c.length < 2) {
    const what = name === "latitude" ? "row" : "column";
    throw new CorruptDataError(
      `the grid has a single ${name} ${what}: gridcast needs at least two to know the grid spacing and coverage`,
    );
  }
  for (const x of c) if (!Number.isFinite(x)) throw new CorruptDataError(`the ${name} coordinate has missing values`);
  if (!monotonic(c)) throw new CorruptDataError(`the ${name} coordinate is not strictly monotonic`);
  if (name === "latitude" && c.some((x) => x < -90.000001 || x > 90.000001)) {
    throw new CorruptDataError("latitudes lie outside -90..90");
  }
}

/**
 * Longitudes read as a circle: a regional grid stored across the seam of its convention
 * (170..178, -180..-120 in -180..180, or 350..358, 0..10 in 0..360) runs on monotonically once
 * each wrapped step is added to the previous longitude (170..240). Unchanged when already
 * monotonic, or when the steps change direction or the run covers more than the circle (then
 * checkAxis refuses it).
 */
export function circularLon(c: Float64Array): Float64Array {
  if (c.length < 2 || monotonic(c) || !c.every(Number.isFinite)) return c;
  const out = new Float64Array(c.length);
  out[0] = c[0];
  let sign = 0;
  for (let i = 1; i < c.length; i++) {
    const step = wrap180(c[i] - c[i - 1]);
    if (step === 0 || (sign !== 0 && Math.sign(step) !== sign)) return c;
    sign = Math.sign(step);
    out[i] = out[i - 1] + step;
  }
  return Math.abs(out[out.length - 1] - out[0]) < 360 ? out : c;
}

/** The grid's longitudes as the store holds them (before circularLon). */
export function storedLongitudes(grid: Grid): Float64Array {
  return grid.storedLon ?? grid.lon;
}

/** A grid from its latitudes and longitudes, read as a circle (see circularLon) from the stored ones. */
export function gridOf(lat: Float64Array, stored: Float64Array): Grid {
  const lon = circularLon(stored);
  const lon360 = Math.max(...stored) > 180;
  const dlat = spacing(lat);
  const dlon = spacing(lon);
  const latMin = Math.min(lat[0], lat[lat.length - 1]);
  const latMax = Math.max(lat[0], lat[lat.length - 1]);
  const lonSpan = dlon * lon.length;
  const global = lonSpan >= 359.999;
  let west: number;
  let east: number;
  if (global) {
    west = -180;
    east = 180;
  } else {
    west = wrap180(Math.min(lon[0], lon[lon.length - 1]) - dlon / 2);
    east = west + lonSpan;
  }
  return {
    lat,
    lon,
    latAscending: lat[lat.length - 1] >= lat[0],
    lon360,
    ...(lon === stored ? {} : { storedLon: stored }),
    dlat,
    dlon,
    bbox: [
      round9(west),
      round9(Math.max(-90, latMin - dlat / 2)),
      round9(east),
      round9(Math.min(90, latMax + dlat / 2)),
    ],
    global,
  };
}
