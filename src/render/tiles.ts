// Web Mercator (EPSG:3857) tile math for the XYZ scheme: x grows east from -180°, y grows south
// from the top edge at MERCATOR_MAX_LAT. All angles are degrees.
import { InvalidParameterError } from "../errors.ts";

export const TILE_SIZE = 256;
export const MAX_ZOOM = 7;
/**
 * High-DPI tiles: 512 px `{y}@2x.png` beside each 256 px tile of a base layer up to this zoom, the
 * top of the pyramid included (the four tiles of the next zoom in one image: at z7 sampled at z8).
 */
export const HIDPI_MAX_ZOOM = 7;
/** A build's @2x zoom for base layers with the pyramid ending at `maxZoom`. */
export const buildHidpiMax = (maxZoom: number): number => Math.min(HIDPI_MAX_ZOOM, maxZoom);
/** Samplers reach one zoom past the pyramid: the top's @2x tiles are sampled at the zoom above it. */
export const SAMPLE_MAX_ZOOM = MAX_ZOOM + 1;
/**
 * The orientation layer's @2x tiles stop this many zooms below the base layers' (none: to the top):
 * its 512 px tiles are drawn from the zoom's own label placement at twice the size, one set per
 * build (bench/hidpi-transparent.ts).
 */
export const ORIENTATION_HIDPI_BELOW = 0;
/**
 * Overlays' @2x tiles stop this many zooms below the base layers', by kind (none: both reach the
 * top). An @2x overlay tile is four tiles of the next zoom drawn at twice the scale from the field
 * lattice of the zoom on screen (contour-extrema.ts), so its cost is mostly the four times as many
 * pixels stroked and encoded (bench/overlays-hidpi.ts, BENCHMARKS.md).
 */
export const OVERLAY_HIDPI_BELOW = { contours: 0, arrows: 0 } as const;

/** The highest zoom with @2x tiles of an overlay kind, given the build's @2x zoom for base layers (-1: none). */
export const overlayHidpiMax = (hidpiMaxZoom: number, kind: keyof typeof OVERLAY_HIDPI_BELOW): number =>
  hidpiMaxZoom < 0 ? -1 : hidpiMaxZoom - OVERLAY_HIDPI_BELOW[kind];
export const HIDPI_SIZE = 2 * 256;
/** Latitude where the square mercator world ends: atan(sinh(π)). */
export const MERCATOR_MAX_LAT = (Math.atan(Math.sinh(Math.PI)) * 180) / Math.PI;

/** [west, south, east, north] in degrees, the TileJSON order. */
export type BBox = [west: number, south: number, east: number, north: number];

export interface TileXY {
  x: number;
  y: number;
}

export interface TileZXY extends TileXY {
  z: number;
}

const DEG = 180 / Math.PI;

/** Latitude of the horizontal line at `t` tile heights from the top of a world `n` tiles tall. */
function latAt(t: number, n: number): number {
  return Math.atan(Math.sinh(Math.PI * (1 - (2 * t) / n))) * DEG;
}

/** Fractional tile row of a latitude (clamped to the mercator band). */
function tileRowOf(lat: number, n: number): number {
  const clamped = Math.max(-MERCATOR_MAX_LAT, Math.min(MERCATOR_MAX_LAT, lat));
  const phi = clamped / DEG;
  return ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * n;
}

/** Fractional tile column of a longitude, any longitude wrapped into [-180, 180). */
function tileColOf(lon: number, n: number): number {
  const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
  return ((wrapped + 180) / 360) * n;
}

export function tileBounds(z: number, x: number, y: number): BBox {
  const n = 2 ** z;
  return [(x / n) * 360 - 180, latAt(y + 1, n), ((x + 1) / n) * 360 - 180, latAt(y, n)];
}

/** The tile holding a point; latitudes beyond the mercator band land in the edge rows. */
export function lonLatToTile(lon: number, lat: number, z: number): TileXY {
  const n = 2 ** z;
  const x = Math.min(n - 1, Math.floor(tileColOf(lon, n)));
  const y = Math.min(n - 1, Math.max(0, Math.floor(tileRowOf(lat, n))));
  return { x, y };
}

/** Longitude of the centre of pixel column `col` (0..255) in tile column `x`. */
export function pixelLon(z: number, x: number, col: number): number {
  return ((x * TILE_SIZE + col + 0.5) / (2 ** z * TILE_SIZE)) * 360 - 180;
}

/** Latitude of the centre of pixel row `row` (0..255) in tile row `y`. */
export function pixelLat(z: number, y: number, row: number): number {
  return latAt(y + (row + 0.5) / TILE_SIZE, 2 ** z);
}

/**
 * Tiles at zoom `z` intersecting a box. A box whose west is greater than its east crosses the
 * antimeridian. Edges lying exactly on a tile boundary do not pull in the neighbouring tile.
 */
export function tilesCovering(bbox: BBox, z: number): TileZXY[] {
  const [west, south, east, north] = bbox;
  if (!(south <= north) || south > MERCATOR_MAX_LAT || north < -MERCATOR_MAX_LAT) return [];
  const n = 2 ** z;
  const yMin = Math.max(0, Math.min(n - 1, Math.floor(tileRowOf(north, n))));
  // The south edge is exclusive like the east edge.
  const yMax = Math.max(yMin, Math.min(n - 1, Math.ceil(tileRowOf(south, n)) - 1));
  const columns = coveredColumns(west, east, n);
  const out: TileZXY[] = [];
  for (let y = yMin; y <= yMax; y++) for (const x of columns) out.push({ z, x, y });
  return out;
}

function coveredColumns(west: number, east: number, n: number): number[] {
  const all = Array.from({ length: n }, (_, i) => i);
  if (east - west >= 360) return all;
  // West wraps into [-180, 180) and east into (-180, 180], so a box ending at 180 keeps its last column.
  const westW = ((((west + 180) % 360) + 360) % 360) - 180;
  const eastW = 180 - ((((180 - east) % 360) + 360) % 360);
  const x0 = Math.floor(((westW + 180) / 360) * n);
  // The east edge is exclusive: a box ending on a tile boundary stops before that tile.
  const x1 = Math.ceil(((eastW + 180) / 360) * n) - 1;
  if (westW <= eastW) return all.slice(x0, Math.max(x0, x1) + 1);
  // Crossing the antimeridian: [x0, n) then [0, x1].
  if (x1 >= x0 - 1) return all;
  return [...all.slice(x0), ...all.slice(0, x1 + 1)];
}

function requireInteger(param: string, v: number): void {
  if (!Number.isInteger(v)) throw new InvalidParameterError(param, `tile ${param} must be an integer, got ${v}`);
}

/** Rejects a tile address that is not on the pyramid z0..maxZoom. */
export function validateTile(z: number, x: number, y: number, maxZoom: number = MAX_ZOOM): void {
  requireInteger("z", z);
  requireInteger("x", x);
  requireInteger("y", y);
  if (z < 0) throw new InvalidParameterError("z", `z must not be negative, got ${z}`);
  if (z > maxZoom) throw new InvalidParameterError("z", `z above the maximum zoom ${maxZoom}`, { max_zoom: maxZoom });
  const n = 2 ** z;
  for (const [param, v] of [
    ["x", x],
    ["y", y],
  ] as const) {
    if (v < 0 || v >= n) {
      throw new InvalidParameterError(
        param,
        `tile ${param} outside zoom level bounds: ${v} not in 0..${n - 1} at z ${z}`,
        {
          min: 0,
          max: n - 1,
        },
      );
    }
  }
}
