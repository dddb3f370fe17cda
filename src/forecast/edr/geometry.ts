// The shapes an area or radius query keeps nodes by: great-circle distance on a sphere, the
// bounding box of a circle, polygons with holes (even-odd), and a cube's latitude/longitude box.
import type { Vertex } from "./wkt.ts";

/** Mean earth radius (IUGG), km: radius distances are great-circle on this sphere. */
export const EARTH_RADIUS_KM = 6371.0088;
/** The `within-units` a radius takes, in km. */
export const WITHIN_UNITS: Record<string, number> = { km: 1, mi: 1.609344, m: 0.001 };

/** Which nodes of a box an area or radius keeps. */
export type NodeTest = (lat: number, lon: number) => boolean;

export interface LatLonBox {
  latMin: number;
  latMax: number;
  lonMin: number;
  lonMax: number;
}

/** The cube's test: latitude within, longitude within (across the antimeridian when west > east). */
export function inBox(q: LatLonBox): NodeTest {
  const span = (((q.lonMax - q.lonMin) % 360) + 360) % 360;
  const full = q.lonMax - q.lonMin >= 360;
  return (lat, lon) =>
    lat >= q.latMin && lat <= q.latMax && (full || (((lon - q.lonMin) % 360) + 360) % 360 <= span + 1e-9);
}

/** Great-circle distance in km between two points in degrees (haversine). */
export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** The lat/lon box around a circle of `km` about a point (a pole inside it: every longitude). */
export function circleBox(lat: number, lon: number, km: number) {
  const d = km / EARTH_RADIUS_KM;
  const deg = 180 / Math.PI;
  const latMin = Math.max(-90, lat - d * deg);
  const latMax = Math.min(90, lat + d * deg);
  const c = Math.cos(lat / deg);
  if (latMax >= 90 || latMin <= -90 || Math.sin(d) >= c) return { latMin, latMax, lonMin: -180, lonMax: 180 };
  const dLon = Math.asin(Math.sin(d) / c) * deg;
  if (dLon >= 180) return { latMin, latMax, lonMin: -180, lonMax: 180 };
  const w = ((((lon - dLon + 180) % 360) + 360) % 360) - 180;
  let e = w + 2 * dLon;
  if (e > 180) e -= 360;
  return { latMin, latMax, lonMin: w, lonMax: e };
}

/** Even-odd test of a point against polygons (outer ring and holes), longitudes taken as given. */
export function inPolygons(polygons: Vertex[][][], lat: number, lon: number): boolean {
  const test = (x: number) => {
    let inside = false;
    for (const rings of polygons) {
      let inThis = false;
      for (const ring of rings) {
        for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
          const a = ring[i];
          const b = ring[j];
          if (a.y > lat !== b.y > lat && x < ((b.x - a.x) * (lat - a.y)) / (b.y - a.y) + a.x) inThis = !inThis;
        }
      }
      if (inThis) inside = true;
    }
    return inside;
  };
  // A polygon written in 0..360 or across 180 still meets nodes numbered -180..180.
  return test(lon) || test(lon + 360) || test(lon - 360);
}
