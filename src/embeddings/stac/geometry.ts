// The spatial side of a STAC search: a query area (a bbox, or a GeoJSON geometry) checked and
// turned into longitude ranges and a latitude range, and the exact test of an item's footprint
// (its lon/lat bbox, split at the antimeridian) against it. Pure functions.
import { InvalidParameterError } from "../../errors.ts";

/** West, south, east, north in degrees; west > east crosses the antimeridian. */
export type Bbox = [number, number, number, number];
/** [west, east] with west <= east. */
export type LonRange = [number, number];

export interface Area {
  /** Longitude ranges covered (one, or two when it crosses the antimeridian), sorted. */
  lons: LonRange[];
  south: number;
  north: number;
  /** The exact test of a footprint rectangle; absent when the area is the rectangles themselves. */
  touches?: (r: Rect) => boolean;
}

/** A footprint part: lon/lat rectangle with west <= east. */
export interface Rect {
  w: number;
  s: number;
  e: number;
  n: number;
}

/** Positions a geometry may hold (a named limit: the body size bounds it too). */
export const MAX_POSITIONS = 10_000;

export const lonRanges = (w: number, e: number): LonRange[] =>
  w <= e
    ? [[w, e]]
    : [
        [-180, e],
        [w, 180],
      ];

/** A footprint bbox as rectangles (two across the antimeridian). */
export const rectsOf = ([w, s, e, n]: readonly number[]): Rect[] =>
  lonRanges(w, e).map(([a, b]) => ({ w: a, s, e: b, n }));

/** bbox of 4 (2D) or 6 (3D) numbers, within WGS84 bounds, south <= north. */
export function parseBbox(v: unknown): Bbox {
  const bad = (why: string): never => {
    throw new InvalidParameterError("bbox", `bbox ${why}`);
  };
  if (!Array.isArray(v) || (v.length !== 4 && v.length !== 6)) {
    return bad("must be 4 numbers (west,south,east,north) or 6 (with heights)");
  }
  if (!v.every((x) => typeof x === "number" && Number.isFinite(x))) return bad("must hold numbers only");
  const [w, s, e, n] = v.length === 4 ? v : [v[0], v[1], v[3], v[4]];
  if (w < -180 || w > 180 || e < -180 || e > 180) bad("longitudes must be within -180..180");
  if (s < -90 || n > 90 || s > n) bad("latitudes must be within -90..90 with south <= north");
  return [w, s, e, n];
}

export function bboxArea(b: Bbox): Area {
  return { lons: lonRanges(b[0], b[2]), south: b[1], north: b[3] };
}

type Pos = [number, number];
type Geometry =
  | { type: "Point"; coordinates: Pos }
  | { type: "MultiPoint"; coordinates: Pos[] }
  | { type: "LineString"; coordinates: Pos[] }
  | { type: "MultiLineString"; coordinates: Pos[][] }
  | { type: "Polygon"; coordinates: Pos[][] }
  | { type: "MultiPolygon"; coordinates: Pos[][][] };

/** A GeoJSON geometry (not a Feature or GeometryCollection) checked position by position. */
export function parseGeometry(v: unknown): Area {
  const bad = (why: string): never => {
    throw new InvalidParameterError("intersects", `intersects must be a GeoJSON geometry: ${why}`);
  };
  if (!v || typeof v !== "object" || Array.isArray(v)) return bad("an object with type and coordinates");
  const g = v as { type?: unknown; coordinates?: unknown };
  let count = 0;
  const pos = (p: unknown): Pos => {
    if (++count > MAX_POSITIONS) bad(`more than ${MAX_POSITIONS} positions`);
    if (
      !Array.isArray(p) ||
      p.length < 2 ||
      p.length > 3 ||
      !p.every((x) => typeof x === "number" && Number.isFinite(x))
    ) {
      bad("a position is [longitude, latitude] (and an optional height) of numbers");
    }
    const [x, y] = p as number[];
    if (x < -180 || x > 180 || y < -90 || y > 90) bad("positions must be within -180..180, -90..90");
    return [x, y];
  };
  const list = <T>(a: unknown, each: (x: unknown) => T, min: number, what: string): T[] => {
    if (!Array.isArray(a) || a.length < min) bad(`${what} needs at least ${min}`);
    return (a as unknown[]).map(each);
  };
  const line = (a: unknown) => list(a, pos, 2, "a line string's positions");
  const ring = (a: unknown) => {
    const r = list(a, pos, 4, "a polygon ring's positions");
    const [f, l] = [r[0], r[r.length - 1]];
    if (f[0] !== l[0] || f[1] !== l[1]) bad("a polygon ring must end where it starts");
    return r;
  };
  const polygon = (a: unknown) => list(a, ring, 1, "a polygon's rings");
  let geom: Geometry;
  switch (g.type) {
    case "Point":
      geom = { type: "Point", coordinates: pos(g.coordinates) };
      break;
    case "MultiPoint":
      geom = { type: "MultiPoint", coordinates: list(g.coordinates, pos, 1, "a multi point's positions") };
      break;
    case "LineString":
      geom = { type: "LineString", coordinates: line(g.coordinates) };
      break;
    case "MultiLineString":
      geom = { type: "MultiLineString", coordinates: list(g.coordinates, line, 1, "a multi line string's lines") };
      break;
    case "Polygon":
      geom = { type: "Polygon", coordinates: polygon(g.coordinates) };
      break;
    case "MultiPolygon":
      geom = { type: "MultiPolygon", coordinates: list(g.coordinates, polygon, 1, "a multi polygon's polygons") };
      break;
    default:
      return bad("type must be Point, MultiPoint, LineString, MultiLineString, Polygon or MultiPolygon");
  }
  const all = flat(geom);
  let [w, s, e, n] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [x, y] of all) {
    w = Math.min(w, x);
    e = Math.max(e, x);
    s = Math.min(s, y);
    n = Math.max(n, y);
  }
  return { lons: [[w, e]], south: s, north: n, touches: (r) => touches(geom, r) };
}

function flat(g: Geometry): Pos[] {
  switch (g.type) {
    case "Point":
      return [g.coordinates];
    case "MultiPoint":
    case "LineString":
      return g.coordinates;
    case "MultiLineString":
    case "Polygon":
      return g.coordinates.flat();
    case "MultiPolygon":
      return g.coordinates.flat(2);
  }
}

const inRect = ([x, y]: Pos, r: Rect) => x >= r.w && x <= r.e && y >= r.s && y <= r.n;

/** Orientation sign of c relative to the line a→b. */
const side = (a: Pos, b: Pos, c: Pos) => Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));

function segmentsCross(a: Pos, b: Pos, c: Pos, d: Pos): boolean {
  const [d1, d2, d3, d4] = [side(a, b, c), side(a, b, d), side(c, d, a), side(c, d, b)];
  if (d1 !== d2 && d3 !== d4) return true;
  const on = (p: Pos, q: Pos, r: Pos) =>
    Math.min(p[0], q[0]) <= r[0] &&
    r[0] <= Math.max(p[0], q[0]) &&
    Math.min(p[1], q[1]) <= r[1] &&
    r[1] <= Math.max(p[1], q[1]);
  return (
    (d1 === 0 && on(a, b, c)) || (d2 === 0 && on(a, b, d)) || (d3 === 0 && on(c, d, a)) || (d4 === 0 && on(c, d, b))
  );
}

function segmentTouches(a: Pos, b: Pos, r: Rect): boolean {
  if (inRect(a, r) || inRect(b, r)) return true;
  const c: Pos[] = [
    [r.w, r.s],
    [r.e, r.s],
    [r.e, r.n],
    [r.w, r.n],
  ];
  return c.some((p, i) => segmentsCross(a, b, p, c[(i + 1) % 4]));
}

function lineTouches(line: Pos[], r: Rect): boolean {
  for (let i = 1; i < line.length; i++) if (segmentTouches(line[i - 1], line[i], r)) return true;
  return false;
}

/** Even-odd point in ring. */
function inRing([x, y]: Pos, ring: Pos[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i];
    const [xj, yj] = ring[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function polygonTouches(rings: Pos[][], r: Rect): boolean {
  if (rings.some((ring) => lineTouches(ring, r))) return true;
  // No edge meets the rectangle: it lies wholly inside the polygon, or wholly outside it.
  const corner: Pos = [r.w, r.s];
  return inRing(corner, rings[0]) && !rings.slice(1).some((h) => inRing(corner, h));
}

function touches(g: Geometry, r: Rect): boolean {
  switch (g.type) {
    case "Point":
      return inRect(g.coordinates, r);
    case "MultiPoint":
      return g.coordinates.some((p) => inRect(p, r));
    case "LineString":
      return lineTouches(g.coordinates, r);
    case "MultiLineString":
      return g.coordinates.some((l) => lineTouches(l, r));
    case "Polygon":
      return polygonTouches(g.coordinates, r);
    case "MultiPolygon":
      return g.coordinates.some((p) => polygonTouches(p, r));
  }
}

/** Whether a footprint bbox meets the area (closed intervals: a shared edge counts). */
export function footprintMeets(bbox: readonly number[], area: Area): boolean {
  for (const r of rectsOf(bbox)) {
    if (r.n < area.south || r.s > area.north) continue;
    if (!area.lons.some(([w, e]) => r.e >= w && r.w <= e)) continue;
    if (!area.touches || area.touches(r)) return true;
  }
  return false;
}
