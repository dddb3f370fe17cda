// Grid math on an unstructured or reduced grid (one cell axis): the nearest cell by great-circle
// distance through the grid's spatial index, coverage as "within a cell spacing of some cell",
// and a box exported as a regular latitude/longitude grid at the cells' nominal spacing, each node
// filled from its nearest cell (the cells to read gathered into a few runs of the cell axis).
import { InvalidParameterError } from "../errors.ts";
import type { CellGrid } from "../store/cell-grid.ts";
import { wrap180, wrap360 } from "../store/grid.ts";
import type { Grid } from "../store/store.ts";

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

/**
 * Cells closer than this along the cell axis are read as one run (the values between them read and
 * dropped): a box's cells lie in many short runs (a reduced Gaussian row, an ICON patch), and one
 * read per run would cost more than the few values skipped.
 */
export const RUN_GAP_CELLS = 256;

export interface CellNode {
  iy: number;
  ix: number;
  lat: number;
  lon: number;
}

/** The cell nearest to the point and its distance in radians. */
export function nearestCellOf(cells: CellGrid, lat: number, lon: number): { cell: number; angle: number } {
  return cells.nearest(lat, wrap180(lon));
}

/** The cell nearest to the point within the grid's reach (-1 beyond it: outside a regional grid). */
function reachableCell(grid: Grid, lat: number, lon: number): { cell: number; angle: number } {
  const cells = grid.cells!;
  if (grid.global) return nearestCellOf(cells, lat, lon);
  const [west, south, east, north] = grid.bbox;
  if (lat < south || lat > north || wrap360(lon - west) > east - west)
    return { cell: -1, angle: Number.POSITIVE_INFINITY };
  return cells.index().nearest(lat, wrap180(lon), -1, cells.spacing);
}

/** True when some cell lies within the grid's spacing of the point (always, for a global grid). */
export function coversCells(grid: Grid, lat: number, lon: number): boolean {
  return reachableCell(grid, lat, lon).cell >= 0;
}

/** The nearest cell as a node: no row (iy 0), the cell as the column, its centre's latitude/longitude. */
export function nearestCell(cells: CellGrid, lat: number, lon: number): CellNode {
  const { cell } = nearestCellOf(cells, lat, lon);
  const [clat, clon] = cells.centre(cell);
  return { iy: 0, ix: cell, lat: round9(clat), lon: round9(clon) };
}

export interface CellBox {
  /** Output rows and columns, counted before anything per node is made (Infinity: no step, cells at one point). */
  nLat: number;
  nLon: number;
  /** Output latitudes (ascending) and longitudes (eastward), every `step` degrees; empty beyond `maxNodes`. */
  lats: number[];
  lons: number[];
  /** Runs [a, b) of the cell axis to read, in order. */
  runs: [number, number][];
  /** Per output node (lat-major), its value's position in the runs read one after another; -1 outside the grid. */
  gather: Int32Array;
  /** Values the runs hold together. */
  width: number;
}

/** How many nodes k·step (k whole) lie within [lo, hi], by arithmetic (Infinity without a step). */
function nodesCount(lo: number, hi: number, step: number): number {
  if (!(step > 0)) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor(hi / step + 1e-9) - Math.ceil(lo / step - 1e-9) + 1);
}

/** Nodes k·step (k whole) within [lo, hi]. */
function nodesWithin(lo: number, hi: number, step: number): number[] {
  const out: number[] = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + 1e-9; k++) out.push(round9(k * step));
  return out;
}

/**
 * A latitude/longitude box as a regular grid every `grid.dlat` degrees (multiples of it), each node
 * filled from its nearest cell; nodes farther than a spacing from every cell of a regional grid
 * are missing. 400 when the box holds no node, or no node on the grid. `maxNodes` bounds the work
 * before it is done (the caller's size limit).
 */
export function selectCellBox(
  grid: Grid,
  latMin: number,
  latMax: number,
  lonMin: number,
  lonMax: number,
  maxNodes: number,
): CellBox {
  if (latMin > latMax) throw new InvalidParameterError("lat_min", "lat_min must not exceed lat_max");
  const step = grid.dlat;
  const span = lonMax - lonMin >= 360 ? 360 - step / 2 : wrap360(lonMax - lonMin);
  const west = wrap180(lonMin);
  // Sized first: nothing per node (not even the axes) is made for a box past the caller's limit,
  // however fine the step (cells at or near one point have a step of nothing or next to it).
  const nLat = nodesCount(latMin, latMax, step);
  const nLon = nodesCount(west, west + span, step);
  if (nLat === 0 || nLon === 0) {
    throw new InvalidParameterError("lat_min", `the box holds no node of the ${step}° grid the cells are exported on`);
  }
  if (nLat * nLon > maxNodes) return { nLat, nLon, lats: [], lons: [], runs: [], gather: new Int32Array(0), width: 0 };
  const lats = nodesWithin(latMin, latMax, step);
  const lons = nodesWithin(west, west + span, step);
  const nearest = new Int32Array(lats.length * lons.length);
  let any = false;
  let k = 0;
  for (const lat of lats) {
    for (const lon of lons) {
      const { cell } = reachableCell(grid, lat, lon);
      nearest[k++] = cell;
      if (cell >= 0) any = true;
    }
  }
  if (!any) throw new InvalidParameterError("lat_min", "the box holds no cells of this group");
  // The cells read, as runs of the cell axis.
  const wanted = Int32Array.from(new Set(nearest.filter((c) => c >= 0))).sort();
  const runs: [number, number][] = [];
  for (const c of wanted) {
    const last = runs[runs.length - 1];
    if (last && c - last[1] <= RUN_GAP_CELLS) last[1] = c + 1;
    else runs.push([c, c + 1]);
  }
  // Where each cell's value lands in the runs read back to back.
  const offsets = new Map<number, number>();
  let r = 0;
  let base = 0;
  for (const c of wanted) {
    while (c >= runs[r][1]) {
      base += runs[r][1] - runs[r][0];
      r++;
    }
    offsets.set(c, base + c - runs[r][0]);
  }
  const width = runs.reduce((n, [a, b]) => n + b - a, 0);
  const gather = nearest.map((c) => (c < 0 ? -1 : offsets.get(c)!));
  return { nLat: lats.length, nLon: lons.length, lats, lons, runs, gather, width };
}
