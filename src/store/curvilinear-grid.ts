// A curvilinear grid: rows and columns of nodes whose 2-D latitude/longitude are all gridcast
// knows of them (no projection stated: an ocean model's tripolar patch, a LAM written without its
// projection). It is served as a projected grid whose "projection" is its own index space: x and
// y are the column and row numbers, and the map between them and the earth is drawn from the
// stored nodes. Index → earth interpolates the nodes (on the sphere); earth → index starts from
// the node nearest by great circle (a CellIndex over the nodes) and refines the fractional
// position by Newton steps on that interpolation. The nearest node and a box's index window are
// found through the index directly (grid-projected.ts), so both are exact over the stored nodes.
import type proj4 from "proj4";
import { CorruptDataError } from "../errors.ts";
import { CellIndex } from "./cell-index.ts";
import { smallestArc, wrap180 } from "./grid.ts";

const RAD = Math.PI / 180;
/** Newton steps refining a point's fractional node position (each halves the error many times over). */
const NEWTON_STEPS = 6;

/** The stored nodes of a curvilinear grid and the index over them. */
export interface CurvilinearNodes {
  /** Latitude and longitude (-180..180) of each node, row-major (ny, nx). */
  lat: Float64Array;
  lon: Float64Array;
  nx: number;
  ny: number;
  /** Stored names of the latitude/longitude the nodes were read from. */
  latName: string;
  lonName: string;
  index: CellIndex;
  /** Largest angle between a node and its row or column neighbour (radians), from a sample of rows. */
  spacing: number;
}

/** The nodes of a curvilinear grid; refuses missing or out-of-range coordinates. */
export function curvilinearNodes(
  lat: ArrayLike<number>,
  lon: ArrayLike<number>,
  ny: number,
  nx: number,
  names: { lat: string; lon: string },
): CurvilinearNodes {
  if (nx < 2 || ny < 2) {
    throw new CorruptDataError("a curvilinear grid needs at least two rows and two columns of nodes");
  }
  const la = Float64Array.from(lat);
  const lo = Float64Array.from(lon, wrap180);
  for (let k = 0; k < la.length; k++) {
    if (!Number.isFinite(la[k]) || !Number.isFinite(lo[k])) {
      throw new CorruptDataError(`the 2-D ${names.lat}/${names.lon} have missing values: nodes without a place`);
    }
    if (la[k] < -90.000001 || la[k] > 90.000001) throw new CorruptDataError(`${names.lat} lies outside -90..90`);
  }
  let spacing = 0;
  const rowStep = Math.max(1, Math.floor(ny / 16));
  for (let j = 0; j < ny; j += rowStep) {
    for (let i = 0; i < nx; i++) {
      const k = j * nx + i;
      if (i + 1 < nx) spacing = Math.max(spacing, angle(la[k], lo[k], la[k + 1], lo[k + 1]));
      if (j + 1 < ny) spacing = Math.max(spacing, angle(la[k], lo[k], la[k + nx], lo[k + nx]));
    }
  }
  return { lat: la, lon: lo, nx, ny, latName: names.lat, lonName: names.lon, index: new CellIndex(la, lo), spacing };
}

function angle(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const s1 = Math.sin(((lat2 - lat1) * RAD) / 2);
  const s2 = Math.sin(((lon2 - lon1) * RAD) / 2);
  return 2 * Math.asin(Math.min(1, Math.sqrt(s1 * s1 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * s2 * s2)));
}

/**
 * The earth position (lon, lat) at fractional node position (fx, fy): the unit vectors of the four
 * nodes around it interpolated bilinearly (extrapolated beyond the outer nodes) and normalised.
 */
export function positionAt(n: CurvilinearNodes, fx: number, fy: number): [number, number] {
  const i0 = Math.max(0, Math.min(n.nx - 2, Math.floor(fx)));
  const j0 = Math.max(0, Math.min(n.ny - 2, Math.floor(fy)));
  const wx = fx - i0;
  const wy = fy - j0;
  // The nodes' unit vectors, as the index holds them.
  const v = n.index.vectors;
  const k00 = j0 * n.nx + i0;
  const k10 = k00 + n.nx;
  const w00 = (1 - wx) * (1 - wy);
  const w01 = wx * (1 - wy);
  const w10 = (1 - wx) * wy;
  const w11 = wx * wy;
  const x = w00 * v.x[k00] + w01 * v.x[k00 + 1] + w10 * v.x[k10] + w11 * v.x[k10 + 1];
  const y = w00 * v.y[k00] + w01 * v.y[k00 + 1] + w10 * v.y[k10] + w11 * v.y[k10 + 1];
  const z = w00 * v.z[k00] + w01 * v.z[k00 + 1] + w10 * v.z[k10] + w11 * v.z[k10 + 1];
  const r = Math.hypot(x, y, z);
  if (!(r > 0)) return [Number.NaN, Number.NaN];
  return [Math.atan2(y, x) / RAD, Math.asin(Math.max(-1, Math.min(1, z / r))) / RAD];
}

/**
 * The fractional node position (fx, fy) of an earth point: from the nearest node, Newton steps on
 * positionAt in the plane tangent at the point. NaN when the steps do not settle (a point far off
 * the grid, where no position of it means anything).
 */
export function fractionalAt(n: CurvilinearNodes, lon: number, lat: number): [number, number] {
  const { cell } = n.index.nearest(lat, wrap180(lon));
  if (cell < 0) return [Number.NaN, Number.NaN];
  let fx = cell % n.nx;
  let fy = Math.floor(cell / n.nx);
  const coslat = Math.cos(lat * RAD);
  // East/north offset (degrees of arc) of a position from the point.
  const offset = (p: [number, number]): [number, number] => [wrap180(p[0] - lon) * coslat, p[1] - lat];
  for (let s = 0; s < NEWTON_STEPS; s++) {
    const h = 0.01;
    const e0 = offset(positionAt(n, fx, fy));
    const ex = offset(positionAt(n, fx + h, fy));
    const ey = offset(positionAt(n, fx, fy + h));
    const a = (ex[0] - e0[0]) / h;
    const b = (ey[0] - e0[0]) / h;
    const c = (ex[1] - e0[1]) / h;
    const d = (ey[1] - e0[1]) / h;
    const det = a * d - b * c;
    if (!Number.isFinite(det) || det === 0) return [Number.NaN, Number.NaN];
    const dx = (d * e0[0] - b * e0[1]) / det;
    const dy = (-c * e0[0] + a * e0[1]) / det;
    fx -= dx;
    fy -= dy;
    if (!Number.isFinite(fx) || !Number.isFinite(fy)) return [Number.NaN, Number.NaN];
    if (Math.abs(dx) < 1e-9 && Math.abs(dy) < 1e-9) break;
  }
  return [fx, fy];
}

/** The grid's index space as a converter (forward: lon/lat → column/row numbers), for GridProjection. */
export function nodeConverter(n: CurvilinearNodes): proj4.Converter {
  const forward = (p: number[] | { x: number; y: number }) => {
    const [lon, lat] = Array.isArray(p) ? p : [p.x, p.y];
    return fractionalAt(n, lon, lat);
  };
  const inverse = (p: number[] | { x: number; y: number }) => {
    const [fx, fy] = Array.isArray(p) ? p : [p.x, p.y];
    return positionAt(n, fx, fy);
  };
  return { forward, inverse } as unknown as proj4.Converter;
}

/** Geographic bounds of the grid's cells: the outer nodes and the half cell beyond them. */
export function curvilinearBounds(n: CurvilinearNodes): [number, number, number, number] {
  const lons: number[] = [];
  const lats: number[] = [];
  const edge = (fx: number, fy: number) => {
    const [lon, lat] = positionAt(n, fx, fy);
    if (Number.isFinite(lon) && Number.isFinite(lat)) {
      lons.push(lon);
      lats.push(lat);
    }
  };
  for (let i = 0; i < n.nx; i++) for (const fy of [-0.5, n.ny - 0.5]) edge(i, fy);
  for (let j = 0; j < n.ny; j++) for (const fx of [-0.5, n.nx - 0.5]) edge(fx, j);
  for (const fx of [-0.5, n.nx - 0.5]) for (const fy of [-0.5, n.ny - 0.5]) edge(fx, fy);
  // The nodes themselves too: a grid bending past its edges' extent (near a pole) keeps them all.
  let south = Math.min(...lats);
  let north = Math.max(...lats);
  for (let k = 0; k < n.lat.length; k++) {
    if (n.lat[k] < south) south = n.lat[k];
    if (n.lat[k] > north) north = n.lat[k];
  }
  south = Math.max(-90, south);
  north = Math.min(90, north);
  const { west, span } = smallestArc(lons);
  const round9 = (x: number) => Math.round(x * 1e9) / 1e9;
  if (span >= 359.999) return [-180, round9(south), 180, round9(north)];
  return [round9(west), round9(south), round9(west + span), round9(north)];
}
