// MGRS 100 km tiles: the name of the tile holding a point and the geometry of a named tile (UTM
// zone, EPSG code, square origin in metres, lon/lat bbox). The mgrs package names squares; proj4
// does every projection, because mgrs's own corner conversion is approximate.
import mgrs from "mgrs";
import proj4 from "proj4";
import { InvalidParameterError } from "../errors.ts";

export const TILE_SIZE_M = 100_000;

/** Zone number, latitude band and 100 km square letters, e.g. 32TNS or 4QFJ. */
const TILE_NAME = /^(\d{1,2})([C-HJ-NP-X])([A-HJ-NP-Z])([A-HJ-NP-V])$/;
const BANDS = "CDEFGHJKLMNPQRSTUVWX";
/** Row letters repeat every 20 rows, i.e. every 2000 km of northing. */
const ROW_CYCLE_M = 2_000_000;

export interface TileGeometry {
  name: string;
  zone: number;
  band: string;
  hemisphere: "N" | "S";
  epsg: number;
  /** "EPSG:326zz" or "EPSG:327zz". */
  crs: string;
  /** proj4 definition of the tile's UTM projection. */
  proj: string;
  /** South-west corner of the square in the tile's UTM CRS (metres). */
  origin: { easting: number; northing: number };
  size_m: number;
  /** West, south, east, north in degrees; west > east when the square crosses the antimeridian. */
  bbox: [number, number, number, number];
}

export function utmProj(zone: number, south: boolean): string {
  return `+proj=utm +zone=${zone}${south ? " +south" : ""} +datum=WGS84 +units=m +no_defs`;
}

/** Name of the 100 km MGRS square containing a point (zone token first, e.g. "32TPS"). */
export function tileNameAt(lon: number, lat: number): string {
  if (!Number.isFinite(lat) || lat < -80 || lat > 84) {
    throw new InvalidParameterError("lat", "latitude must be within -80..84 (MGRS tiles do not cover the poles)");
  }
  if (!Number.isFinite(lon)) throw new InvalidParameterError("lon", "longitude must be a finite number");
  const wrapped = ((((lon + 180) % 360) + 360) % 360) - 180;
  // mgrs skips the Svalbard zones at exactly 84°N and would name a zone (32X) that does not exist;
  // a millimetre south gives the square band X really has there.
  const m = /^\d{1,2}[C-X][A-HJ-NP-Z]{2}/.exec(mgrs.forward([wrapped, Math.min(lat, 84 - 1e-8)], 0));
  if (!m) throw new InvalidParameterError("lat", "no MGRS tile at this position");
  return m[0];
}

function bandRange(band: string): [number, number] {
  const i = BANDS.indexOf(band);
  const south = -80 + i * 8;
  return [south, band === "X" ? 84 : south + 8];
}

/** Geometry of a 100 km tile by name; InvalidParameterError for a malformed or impossible name. */
export function tileGeometry(name: string): TileGeometry {
  const m = TILE_NAME.exec(name);
  const zone = m ? Number(m[1]) : 0;
  const band = m ? m[2] : "";
  if (!m || zone < 1 || zone > 60 || (band === "X" && (zone === 32 || zone === 34 || zone === 36))) {
    throw new InvalidParameterError("tile", `"${name}" is not an MGRS 100 km tile name`);
  }
  const south = band < "N";
  const proj = utmProj(zone, south);
  const toUtm = proj4("WGS84", proj);

  // Any point inside the square gives its easting column and its northing within the 2000 km
  // row cycle; which cycle is meant follows from the latitude band, not from the letters.
  const [plon, plat] = mgrs.toPoint(name);
  const [e, n] = toUtm.forward([plon, plat]);
  const easting = Math.floor(e / TILE_SIZE_M) * TILE_SIZE_M;
  const rowInCycle = (((Math.floor(n / TILE_SIZE_M) * TILE_SIZE_M) % ROW_CYCLE_M) + ROW_CYCLE_M) % ROW_CYCLE_M;
  const [bs, bn] = bandRange(band);
  const cm = zone * 6 - 183;
  const bandMid = toUtm.forward([cm, (bs + bn) / 2])[1];
  const k = Math.round((bandMid - TILE_SIZE_M / 2 - rowInCycle) / ROW_CYCLE_M);
  const northing = rowInCycle + k * ROW_CYCLE_M;

  const bbox = squareBbox(toUtm, easting, northing, cm);
  const epsg = (south ? 32700 : 32600) + zone;
  return {
    name,
    zone,
    band,
    hemisphere: south ? "S" : "N",
    epsg,
    crs: `EPSG:${epsg}`,
    proj,
    origin: { easting, northing },
    size_m: TILE_SIZE_M,
    bbox,
  };
}

/** Lon/lat bounds of the square: its corners plus edge midpoints, since the edges are curved. */
function squareBbox(
  toUtm: proj4.Converter,
  e0: number,
  n0: number,
  centralMeridian: number,
): [number, number, number, number] {
  let w = Infinity;
  let s = Infinity;
  let east = -Infinity;
  let north = -Infinity;
  for (const fe of [0, 0.5, 1]) {
    for (const fn of [0, 0.5, 1]) {
      if (fe === 0.5 && fn === 0.5) continue;
      const [lon, lat] = toUtm.inverse([e0 + fe * TILE_SIZE_M, n0 + fn * TILE_SIZE_M]);
      // Unwrap around the zone's central meridian so a square near ±180° stays contiguous.
      const ulon = centralMeridian + ((((lon - centralMeridian + 180) % 360) + 360) % 360) - 180;
      w = Math.min(w, ulon);
      east = Math.max(east, ulon);
      s = Math.min(s, lat);
      north = Math.max(north, lat);
    }
  }
  const wrap = (x: number) => (x > 180 ? x - 360 : x < -180 ? x + 360 : x);
  return [wrap(w), s, wrap(east), north];
}
