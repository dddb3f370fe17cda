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
  return { iy: 0, ix: cell, lat: round9(cells.lat[cell]), lon: round9(cells.lon[cell]) };
}

export interface CellBox {
  /** Output latitudes (ascending) and longitudes (eastward), every `step` degrees. */
  lats: number[];
  lons: number[];
  /** Runs [a, b) of the cell axis to read, in order. */
  runs: [number, number][];
  /** Per output node (lat-major), its value's position in the runs read one after another; -1 outside the grid. */
  gather: Int32Array;
  /** Values the runs hold together. */
  width: number;
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
  const lats = nodesWithin(latMin, latMax, step);
  const span = lonMax - lonMin >= 360 ? 360 - step / 2 : wrap360(lonMax - lonMin);
  const west = wrap180(lonMin);
  const lons = nodesWithin(west, west + span, step);
  if (lats.length === 0 || lons.length === 0) {
    throw new InvalidParameterError("lat_min", `the box holds no node of the ${step}° grid the cells are exported on`);
  }
  if (lats.length * lons.length > maxNodes) return { lats, lons, runs: [], gather: new Int32Array(0), width: 0 };
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
  return { lats, lons, runs, gather, width };
}
