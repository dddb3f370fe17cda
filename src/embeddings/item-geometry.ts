// Where an item sits: CRS, affine transform, lon/lat and UTM bounds. Taken from the item's own
// attributes when they are there and well formed, otherwise from the MGRS tile it is named after
// (a store written by another tool may carry fewer attributes than the sample's).
import { tileGeometry, utmProj } from "./mgrs.ts";

export type Bbox = [number, number, number, number];
/** GDAL order: x = a·col + b·row + c, y = d·col + e·row + f, at pixel corners. */
export type Transform = [number, number, number, number, number, number];

export interface ItemGeometry {
  tile: string;
  crs: string;
  epsg: number | null;
  /** proj4 definition of the item's CRS (its UTM zone). */
  proj: string;
  transform: Transform;
  /** West, south, east, north in degrees. */
  bbox: Bbox;
  /** x min, y min, x max, y max in metres of the item's CRS. */
  bbox_utm: Bbox;
}

const finiteList = (v: unknown, n: number): v is number[] =>
  Array.isArray(v) && v.length === n && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** Geometry of an item from its tile, its group attributes and the (y, x, ...) shape of its latent. */
export function itemGeometry(tile: string, attrs: Record<string, unknown>, shape: number[]): ItemGeometry {
  const g = tileGeometry(tile);
  const [ny, nx] = shape;
  const crs = typeof attrs.crs === "string" && /^EPSG:\d{4,6}$/.test(attrs.crs) ? attrs.crs : g.crs;
  const epsg = Number(crs.slice(5));
  const utm = epsg >= 32601 && epsg <= 32660 ? utmProj(epsg - 32600, false) : undefined;
  const proj = utm ?? (epsg >= 32701 && epsg <= 32760 ? utmProj(epsg - 32700, true) : g.proj);
  const transform: Transform = finiteList(attrs.transform, 6)
    ? (attrs.transform.slice() as Transform)
    : [g.size_m / nx, 0, g.origin.easting, 0, -g.size_m / ny, g.origin.northing + g.size_m];
  const bbox: Bbox = finiteList(attrs.bbox, 4) ? (attrs.bbox.slice() as Bbox) : g.bbox;
  const [a, b, c, d, e, f] = transform;
  const xs = [c, c + a * nx, c + b * ny, c + a * nx + b * ny];
  const ys = [f, f + d * nx, f + e * ny, f + d * nx + e * ny];
  return {
    tile,
    crs,
    epsg: Number.isFinite(epsg) ? epsg : null,
    proj,
    transform,
    bbox,
    bbox_utm: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)],
  };
}

/** The transform of a window that starts at (row0, col0) of a larger grid. */
export function windowTransform(t: Transform, row0: number, col0: number): Transform {
  const [a, b, c, d, e, f] = t;
  return [a, b, c + a * col0 + b * row0, d, e, f + d * col0 + e * row0];
}
