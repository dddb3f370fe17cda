// Grid math on a projected or rotated grid: a point projected into the grid's CRS, coverage as the
// cells' own footprint (not a bounding box), the nearest node by distance on the earth, the index
// window covering a latitude/longitude box, and winds stored relative to the grid turned to true
// north.
import { InvalidParameterError } from "../errors.ts";
import type { CurvilinearNodes } from "../store/curvilinear-grid.ts";
import { wrap180, wrap360 } from "../store/grid.ts";
import type { GridProjection } from "../store/projected-grid.ts";
import type { Grid } from "../store/store.ts";

/** Fractional storage indices (column, row) of a geographic point; NaN where the CRS cannot place it. */
export function gridIndex(p: GridProjection, lat: number, lon: number): [number, number] {
  let gx: number;
  let gy: number;
  try {
    [gx, gy] = p.converter.forward([lon, lat]);
  } catch {
    return [Number.NaN, Number.NaN];
  }
  return [(gx - p.x0) / p.dx, (gy - p.y0) / p.dy];
}

/** Geographic position (lat, lon in -180..180) of the node at storage indices (ix, iy). */
export function nodeLatLon(p: GridProjection, ix: number, iy: number): [number, number] {
  const [lon, lat] = p.converter.inverse([p.x0 + ix * p.dx, p.y0 + iy * p.dy]);
  const w = ((((lon + 180) % 360) + 360) % 360) - 180;
  return [lat, w];
}

/**
 * Where a node of a projected or curvilinear grid lies, as /point names it (lat, lon rounded to a
 * nanodegree): through the CRS, or the stored 2-D coordinates of a curvilinear grid.
 */
export function nodePosition(p: GridProjection, ix: number, iy: number): [number, number] {
  if (p.nodes) {
    const cell = iy * p.nodes.nx + ix;
    return [round9(p.nodes.lat[cell]), round9(p.nodes.lon[cell])];
  }
  const [lat, lon] = nodeLatLon(p, ix, iy);
  return [round9(lat), round9(lon)];
}

/** True when the point falls in a cell of the grid (half a cell beyond the outer nodes, as for lat/lon grids). */
export function coversProjected(p: GridProjection, lat: number, lon: number): boolean {
  const [fx, fy] = gridIndex(p, lat, lon);
  return fx >= -0.5 && fx <= p.nx - 0.5 && fy >= -0.5 && fy <= p.ny - 0.5;
}

const RAD = Math.PI / 180;

/** Central angle between two points (radians): the distance on the sphere, for ranking only. */
function angle(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const s1 = Math.sin(((lat2 - lat1) * RAD) / 2);
  const s2 = Math.sin(((lon2 - lon1) * RAD) / 2);
  return 2 * Math.asin(Math.min(1, Math.sqrt(s1 * s1 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * s2 * s2)));
}

export interface ProjectedNode {
  iy: number;
  ix: number;
  lat: number;
  lon: number;
}

/**
 * The node nearest to the point by distance on the earth, among the four corners of the cell the
 * point projects into (a rotated pole's degrees are not equal lengths, so rounding the indices is
 * not enough). Ties go to the lower indices.
 */
export function nearestProjected(p: GridProjection, lat: number, lon: number): ProjectedNode {
  if (p.nodes) return nearestNodeOf(p.nodes, lat, lon);
  const [fx, fy] = gridIndex(p, lat, lon);
  const clamp = (v: number, n: number) => Math.max(0, Math.min(n - 1, v));
  const x0 = clamp(Math.floor(fx), p.nx);
  const y0 = clamp(Math.floor(fy), p.ny);
  let best: ProjectedNode | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const iy of [y0, clamp(y0 + 1, p.ny)]) {
    for (const ix of [x0, clamp(x0 + 1, p.nx)]) {
      const [nlat, nlon] = nodeLatLon(p, ix, iy);
      const d = angle(lat, lon, nlat, nlon);
      if (d < bestD - 1e-15) {
        bestD = d;
        best = { iy, ix, lat: round9(nlat), lon: round9(nlon) };
      }
    }
  }
  return best!;
}

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

/** A curvilinear grid's node nearest by great circle over all its stored nodes (through their index). */
function nearestNodeOf(n: CurvilinearNodes, lat: number, lon: number): ProjectedNode {
  const { cell } = n.index.nearest(lat, wrap180(lon));
  return { iy: Math.floor(cell / n.nx), ix: cell % n.nx, lat: round9(n.lat[cell]), lon: round9(n.lon[cell]) };
}

/**
 * A curvilinear grid's index window of a box: the rows and columns spanning every stored node
 * inside it (the nodes near the box listed by their index, each checked). 400 when none lies inside.
 */
function nodesWindow(n: CurvilinearNodes, latMin: number, latMax: number, lonMin: number, lonMax: number) {
  const span = lonMax < lonMin ? lonMax + 360 - lonMin : lonMax - lonMin;
  let r0 = n.ny;
  let r1 = -1;
  let c0 = n.nx;
  let c1 = -1;
  n.index.eachNear(latMin, latMax, lonMin, span, (k) => {
    const lat = n.lat[k];
    if (lat < latMin || lat > latMax || wrap360(n.lon[k] - lonMin) > span) return;
    const j = Math.floor(k / n.nx);
    const i = k % n.nx;
    r0 = Math.min(r0, j);
    r1 = Math.max(r1, j);
    c0 = Math.min(c0, i);
    c1 = Math.max(c1, i);
  });
  if (r1 < 0) {
    throw new InvalidParameterError("lat_min", "the box holds no grid nodes of this group", {
      grid: { x: [0, n.nx], y: [0, n.ny] },
    });
  }
  return { rows: [r0, r1 + 1] as [number, number], cols: [c0, c1 + 1] as [number, number] };
}

export interface WindowSelection {
  rows: [number, number];
  cols: [number, number];
}

/** Points along the edges of a lat/lon box, dense enough that the projected outline bounds it. */
function outline(latMin: number, latMax: number, lonMin: number, lonMax: number): [number, number][] {
  const east = lonMax < lonMin ? lonMax + 360 : lonMax;
  const n = 64;
  const out: [number, number][] = [];
  for (let k = 0; k <= n; k++) {
    const lon = lonMin + ((east - lonMin) * k) / n;
    const lat = latMin + ((latMax - latMin) * k) / n;
    out.push([latMin, lon], [latMax, lon], [lat, lonMin], [lat, east]);
  }
  return out;
}

/**
 * The storage index window covering a latitude/longitude box: every node whose cell the box
 * touches, clipped to the grid. 400 when the box misses the grid.
 */
export function windowOfBox(p: GridProjection, latMin: number, latMax: number, lonMin: number, lonMax: number) {
  if (latMin > latMax) throw new InvalidParameterError("lat_min", "lat_min must not exceed lat_max");
  if (p.nodes) return nodesWindow(p.nodes, latMin, latMax, lonMin, lonMax);
  let fx0 = Number.POSITIVE_INFINITY;
  let fx1 = Number.NEGATIVE_INFINITY;
  let fy0 = Number.POSITIVE_INFINITY;
  let fy1 = Number.NEGATIVE_INFINITY;
  for (const [lat, lon] of outline(latMin, latMax, lonMin, lonMax)) {
    const [fx, fy] = gridIndex(p, lat, lon);
    if (!Number.isFinite(fx) || !Number.isFinite(fy)) continue;
    fx0 = Math.min(fx0, fx);
    fx1 = Math.max(fx1, fx);
    fy0 = Math.min(fy0, fy);
    fy1 = Math.max(fy1, fy);
  }
  // A box that holds a pole inside the grid reaches every column on that side.
  for (const pole of [90, -90]) {
    if (pole < latMin || pole > latMax) continue;
    const [fx, fy] = gridIndex(p, pole, 0);
    fx0 = Math.min(fx0, fx);
    fx1 = Math.max(fx1, fx);
    fy0 = Math.min(fy0, fy);
    fy1 = Math.max(fy1, fy);
  }
  return windowOf(p, fx0, fx1, fy0, fy1, "lat_min");
}

/** The index window of a box in grid units (x_min..y_max, the CRS's units). */
export function windowOfGridBox(p: GridProjection, xMin: number, xMax: number, yMin: number, yMax: number) {
  if (xMin > xMax) throw new InvalidParameterError("x_min", "x_min must not exceed x_max");
  if (yMin > yMax) throw new InvalidParameterError("y_min", "y_min must not exceed y_max");
  const fx = [(xMin - p.x0) / p.dx, (xMax - p.x0) / p.dx];
  const fy = [(yMin - p.y0) / p.dy, (yMax - p.y0) / p.dy];
  return windowOf(p, Math.min(...fx), Math.max(...fx), Math.min(...fy), Math.max(...fy), "x_min");
}

function windowOf(p: GridProjection, fx0: number, fx1: number, fy0: number, fy1: number, param: string) {
  // Nodes whose cells (±half a cell) the box reaches into; a box edge on a cell's edge leaves it out.
  const c0 = Math.max(0, Math.floor(fx0 - 0.5) + 1);
  const c1 = Math.min(p.nx, Math.ceil(fx1 + 0.5));
  const r0 = Math.max(0, Math.floor(fy0 - 0.5) + 1);
  const r1 = Math.min(p.ny, Math.ceil(fy1 + 0.5));
  if (!(c1 > c0 && r1 > r0)) {
    throw new InvalidParameterError(param, "the box holds no grid nodes of this group", {
      grid: { x: [0, p.nx], y: [0, p.ny] },
    });
  }
  return { rows: [r0, r1] as [number, number], cols: [c0, c1] as [number, number] };
}

/** Axis values of a storage index range; ascending when `ascending` (the rows of an export), else storage order. */
export function axisValues(origin: number, step: number, [a, b]: [number, number], ascending = true): number[] {
  const out: number[] = [];
  for (let i = a; i < b; i++) out.push(round9(origin + i * step));
  return ascending && step < 0 ? out.reverse() : out;
}

const bearings = new WeakMap<GridProjection, Float32Array>();

/**
 * Per node, the bearing of the grid's +y axis, degrees clockwise from true north: the direction
 * from the node to a point a small step up the grid, on the sphere. Made once per grid.
 */
export function gridNorthBearings(p: GridProjection): Float32Array {
  // Stated by the store (WRF's COSALPHA/SINALPHA): taken as it is.
  if (p.gridNorth) return p.gridNorth;
  let b = bearings.get(p);
  if (b) return b;
  b = new Float32Array(p.nx * p.ny);
  const step = 0.01 * Math.sign(p.dy);
  for (let j = 0; j < p.ny; j++) {
    for (let i = 0; i < p.nx; i++) {
      const [lat1, lon1] = nodeLatLon(p, i, j);
      const [lat2, lon2] = nodeLatLon(p, i, j + step);
      const f1 = lat1 * RAD;
      const f2 = lat2 * RAD;
      const dl = (lon2 - lon1) * RAD;
      const y = Math.sin(dl) * Math.cos(f2);
      const x = Math.cos(f1) * Math.sin(f2) - Math.sin(f1) * Math.cos(f2) * Math.cos(dl);
      b[j * p.nx + i] = Math.atan2(y, x) / RAD;
    }
  }
  bearings.set(p, b);
  return b;
}

/**
 * The wind at one node turned to east/north: grid-relative components (u along the grid's +x, v
 * along its +y; a conformal grid's +x lies 90° clockwise of its +y) by the bearing of grid north there.
 */
export function rotateOne(p: GridProjection, ix: number, iy: number, u: number, v: number): [number, number] {
  const beta = gridNorthBearings(p)[iy * p.nx + ix] * RAD;
  return [u * Math.cos(beta) + v * Math.sin(beta), -u * Math.sin(beta) + v * Math.cos(beta)];
}

/** The projected part of a grid, or undefined for a regular lat/lon grid. */
export const projectionOfGrid = (g: Grid): GridProjection | undefined => g.projection;
