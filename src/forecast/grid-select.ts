// Index selection on a group's grid: the nearest node to a point, and the nodes of a lat/lon box
// (including boxes that cross the antimeridian), all in the store's own index space.
import { InvalidParameterError } from "../errors.ts";
import { nearestIndex, wrap180, wrap360 } from "../store/grid.ts";
import type { Grid } from "../store/store.ts";
import { coversCells, nearestCell } from "./grid-cells.ts";
import { axisValues, coversProjected, nearestProjected, windowOfBox } from "./grid-projected.ts";

/**
 * Longitude in the grid's own numbering: the store's convention for a global grid; for a regional
 * one, the turn of the circle centred on the grid (its longitudes may run past 180, as a patch
 * across the antimeridian stored 170..178, -180..-120 is read as 170..240).
 */
function toStoreLon(grid: Grid, lon: number): number {
  if (grid.global) return grid.lon360 ? wrap360(lon) : wrap180(lon);
  const centre = (grid.lon[0] + grid.lon[grid.lon.length - 1]) / 2;
  return centre - 180 + wrap360(lon - centre + 180);
}

/** True when the point lies inside the grid's coverage (cell edges included). */
export function covers(grid: Grid, lat: number, lon: number): boolean {
  return coverageMiss(grid, lat, lon) === undefined;
}

/** Which coordinate of a point lies outside the grid's coverage ("lat" first), or undefined when none does. */
export function coverageMiss(grid: Grid, lat: number, lon: number): "lat" | "lon" | undefined {
  // A projected grid covers what its cells cover, not its bounding box (the point as a whole misses);
  // an unstructured one, what lies within a cell spacing of its cells.
  if (grid.cells) return coversCells(grid, lat, lon) ? undefined : "lat";
  if (grid.projection) return coversProjected(grid.projection, lat, lon) ? undefined : "lat";
  const [west, south, east, north] = grid.bbox;
  if (lat < south || lat > north) return "lat";
  if (grid.global) return undefined;
  return wrap360(lon - west) <= east - west ? undefined : "lon";
}

export interface Node {
  iy: number;
  ix: number;
  lat: number;
  /** Longitude of the node in -180..180. */
  lon: number;
}

export function nearestNode(grid: Grid, lat: number, lon: number): Node {
  if (grid.cells) return nearestCell(grid.cells, lat, lon);
  if (grid.projection) return nearestProjected(grid.projection, lat, lon);
  const iy = nearestIndex(grid.lat, lat);
  const target = toStoreLon(grid, lon);
  let ix = nearestIndex(grid.lon, target);
  if (grid.global) {
    // The nearest node may sit across the seam of the stored longitudes.
    const first = 0;
    const last = grid.lon.length - 1;
    // Distance east of the target; a tie goes to the western node, as in nearestIndex.
    const d = (i: number) => wrap180(grid.lon[i] - target);
    const better = (a: number, b: number) =>
      Math.abs(d(a)) < Math.abs(d(b)) || (Math.abs(d(a)) === Math.abs(d(b)) && d(a) < d(b));
    for (const cand of [first, last]) if (better(cand, ix)) ix = cand;
  }
  // Coordinates computed in floating point (0.025° steps) print as 11.575000000000045; round
  // to a nanodegree, far below any grid spacing.
  const r = (x: number) => Math.round(x * 1e9) / 1e9;
  return { iy, ix, lat: r(grid.lat[iy]), lon: r(wrap180(grid.lon[ix])) };
}

export interface BoxSelection {
  /** Storage row range [start, stop). */
  rows: [number, number];
  /** Storage column runs, in output (eastward) order. */
  cols: [number, number][];
  /** Output latitudes, ascending (south to north). */
  lats: number[];
  /** Output longitudes, eastward and monotonic (may exceed 180 across the antimeridian). */
  lons: number[];
  /** Storage rows run north to south, so output rows must be reversed. */
  flipRows: boolean;
  /** A projected grid: `lats`/`lons` hold the window's y/x coordinates (ascending), in the CRS's units. */
  projected?: boolean;
  /**
   * An unstructured grid: `cols` are the runs of the cell axis read (one after another, `width`
   * values), and each output node (lat-major) takes the value at its `gather` position (-1: missing).
   */
  gather?: Int32Array;
  width?: number;
}

export function selectBox(grid: Grid, latMin: number, latMax: number, lonMin: number, lonMax: number): BoxSelection {
  if (grid.projection) return projectedSelection(grid, windowOfBox(grid.projection, latMin, latMax, lonMin, lonMax));
  if (latMin > latMax) throw new InvalidParameterError("lat_min", "lat_min must not exceed lat_max");
  const rowIdx: number[] = [];
  for (let i = 0; i < grid.lat.length; i++) if (grid.lat[i] >= latMin && grid.lat[i] <= latMax) rowIdx.push(i);
  if (rowIdx.length === 0) {
    throw new InvalidParameterError("lat_min", "the latitude range holds no grid rows of this group");
  }
  const full = lonMax - lonMin >= 360;
  const span = full ? 360 : wrap360(lonMax - lonMin);
  const picked: { i: number; d: number }[] = [];
  for (let i = 0; i < grid.lon.length; i++) {
    const d = wrap360(grid.lon[i] - lonMin);
    if (full ? d < 360 : d <= span + 1e-9) picked.push({ i, d });
  }
  if (picked.length === 0) {
    throw new InvalidParameterError("lon_min", "the longitude range holds no grid columns of this group");
  }
  picked.sort((a, b) => a.d - b.d);
  const cols: [number, number][] = [];
  for (const { i } of picked) {
    const last = cols[cols.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else cols.push([i, i + 1]);
  }
  const rows: [number, number] = [rowIdx[0], rowIdx[rowIdx.length - 1] + 1];
  const flipRows = !grid.latAscending;
  const lats = rowIdx.map((i) => grid.lat[i]);
  if (flipRows) lats.reverse();
  const base = wrap180(lonMin);
  const lons = picked.map(({ d }) => Math.round((base + d) * 1e9) / 1e9);
  return { rows, cols, lats, lons, flipRows };
}

/** The selection of a projected grid's index window: rows of y and one run of x columns. */
export function projectedSelection(grid: Grid, w: { rows: [number, number]; cols: [number, number] }): BoxSelection {
  const p = grid.projection!;
  return {
    rows: w.rows,
    cols: [w.cols],
    lats: axisValues(p.y0, p.dy, w.rows),
    lons: axisValues(p.x0, p.dx, w.cols, false),
    flipRows: p.dy < 0,
    projected: true,
  };
}
