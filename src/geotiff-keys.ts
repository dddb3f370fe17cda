// GeoTIFF GeoKeys (GeoTIFF 1.1, OGC 19-008r4) of a CRS: WGS 84 geographic coordinates by their
// EPSG code, and the map projections gridcast reads from CF grid mappings as user-defined
// projected systems (projection method, its parameters, the figure of the earth) built from the
// grid's proj4 definition. A CRS outside this list has no GeoKeys here: the caller refuses it by
// name rather than write a GeoTIFF that places the grid wrongly.

/** One GeoKey: a SHORT value, or a DOUBLE kept in GeoDoubleParams. */
export type GeoKey = { id: number; short: number } | { id: number; double: number };

const GT_MODEL_TYPE = 1024;
const GT_RASTER_TYPE = 1025;
const GEOGRAPHIC_TYPE = 2048;
const GEOG_GEODETIC_DATUM = 2050;
const GEOG_ANGULAR_UNITS = 2054;
const GEOG_ELLIPSOID = 2056;
const GEOG_SEMI_MAJOR = 2057;
const GEOG_SEMI_MINOR = 2058;
const PROJECTED_CS_TYPE = 3072;
const PROJECTION = 3074;
const PROJ_COORD_TRANS = 3075;
const PROJ_LINEAR_UNITS = 3076;
const STD_PARALLEL_1 = 3078;
const STD_PARALLEL_2 = 3079;
const NAT_ORIGIN_LONG = 3080;
const NAT_ORIGIN_LAT = 3081;
const FALSE_EASTING = 3082;
const FALSE_NORTHING = 3083;
const FALSE_ORIGIN_LONG = 3084;
const FALSE_ORIGIN_LAT = 3085;
const FALSE_ORIGIN_EASTING = 3086;
const FALSE_ORIGIN_NORTHING = 3087;
const CENTER_LONG = 3088;
const CENTER_LAT = 3089;
const SCALE_AT_NAT_ORIGIN = 3092;
const STRAIGHT_VERT_POLE_LONG = 3095;

const USER_DEFINED = 32767;
const MODEL_PROJECTED = 1;
const MODEL_GEOGRAPHIC = 2;
const PIXEL_IS_AREA = 1;
const EPSG_WGS84 = 4326;
const ANGULAR_DEGREE = 9102;
const LINEAR_METRE = 9001;

// Coordinate transformation codes.
const CT_TRANSVERSE_MERCATOR = 1;
const CT_LAMBERT_CONF_CONIC_2SP = 8;
const CT_LAMBERT_AZIM_EQUAL_AREA = 10;
const CT_ALBERS_EQUAL_AREA = 11;
const CT_POLAR_STEREOGRAPHIC = 15;

/** Figures of the earth proj4 names: semi-major axis and inverse flattening. */
const ELLIPSOIDS: Record<string, [number, number]> = {
  WGS84: [6378137, 298.257223563],
  GRS80: [6378137, 298.257222101],
};

/** GeoKeys of WGS 84 geographic coordinates, pixels as areas. */
export function wgs84Keys(): GeoKey[] {
  return [
    { id: GT_MODEL_TYPE, short: MODEL_GEOGRAPHIC },
    { id: GT_RASTER_TYPE, short: PIXEL_IS_AREA },
    { id: GEOGRAPHIC_TYPE, short: EPSG_WGS84 },
  ];
}

function params(definition: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of definition.matchAll(/\+([a-z_0-9]+)(?:=(\S+))?/gi)) out.set(m[1], m[2] ?? "");
  return out;
}

/** Semi-major and semi-minor axes of the definition's figure of the earth. */
function axes(p: Map<string, string>): [number, number] {
  const num = (k: string) => (p.has(k) ? Number(p.get(k)) : undefined);
  const r = num("R");
  if (r !== undefined) return [r, r];
  const [a0, rf0] = ELLIPSOIDS[p.get("ellps") ?? p.get("datum") ?? "WGS84"] ?? ELLIPSOIDS.WGS84;
  const a = num("a") ?? a0;
  const b = num("b");
  if (b !== undefined) return [a, b];
  const rf = num("rf") ?? rf0;
  return [a, rf === 0 ? a : a * (1 - 1 / rf)];
}

/**
 * GeoKeys of a projected CRS given by its proj4 definition, or the reason there are none (a
 * projection GeoTIFF cannot state this way, or a CRS known only by WKT).
 */
export function projectedKeys(definition: string): GeoKey[] | string {
  if (!definition.trim().startsWith("+")) return "a CRS known only by its WKT";
  const p = params(definition);
  const units = p.get("units");
  if (units !== undefined && units !== "m") return `a projection in ${units}`;
  const v = (k: string, fallback = 0) => (p.has(k) ? Number(p.get(k)) : fallback);
  let method: GeoKey[];
  switch (p.get("proj")) {
    case "lcc":
      method = [
        { id: PROJ_COORD_TRANS, short: CT_LAMBERT_CONF_CONIC_2SP },
        { id: STD_PARALLEL_1, double: v("lat_1") },
        { id: STD_PARALLEL_2, double: v("lat_2", v("lat_1")) },
        { id: FALSE_ORIGIN_LONG, double: v("lon_0") },
        { id: FALSE_ORIGIN_LAT, double: v("lat_0") },
        { id: FALSE_ORIGIN_EASTING, double: v("x_0") },
        { id: FALSE_ORIGIN_NORTHING, double: v("y_0") },
      ];
      break;
    case "stere":
      if (Math.abs(v("lat_0")) !== 90) return "an oblique stereographic projection";
      method = [
        { id: PROJ_COORD_TRANS, short: CT_POLAR_STEREOGRAPHIC },
        // The latitude of true scale when given (variant B), else the pole with a scale factor.
        { id: NAT_ORIGIN_LAT, double: p.has("lat_ts") ? v("lat_ts") : v("lat_0") },
        { id: STRAIGHT_VERT_POLE_LONG, double: v("lon_0") },
        { id: SCALE_AT_NAT_ORIGIN, double: v("k_0", v("k", 1)) },
        { id: FALSE_EASTING, double: v("x_0") },
        { id: FALSE_NORTHING, double: v("y_0") },
      ];
      break;
    case "tmerc":
      method = [
        { id: PROJ_COORD_TRANS, short: CT_TRANSVERSE_MERCATOR },
        { id: NAT_ORIGIN_LONG, double: v("lon_0") },
        { id: NAT_ORIGIN_LAT, double: v("lat_0") },
        { id: SCALE_AT_NAT_ORIGIN, double: v("k_0", v("k", 1)) },
        { id: FALSE_EASTING, double: v("x_0") },
        { id: FALSE_NORTHING, double: v("y_0") },
      ];
      break;
    case "laea":
      method = [
        { id: PROJ_COORD_TRANS, short: CT_LAMBERT_AZIM_EQUAL_AREA },
        { id: CENTER_LONG, double: v("lon_0") },
        { id: CENTER_LAT, double: v("lat_0") },
        { id: FALSE_EASTING, double: v("x_0") },
        { id: FALSE_NORTHING, double: v("y_0") },
      ];
      break;
    case "aea":
      method = [
        { id: PROJ_COORD_TRANS, short: CT_ALBERS_EQUAL_AREA },
        { id: STD_PARALLEL_1, double: v("lat_1") },
        { id: STD_PARALLEL_2, double: v("lat_2", v("lat_1")) },
        { id: NAT_ORIGIN_LAT, double: v("lat_0") },
        { id: NAT_ORIGIN_LONG, double: v("lon_0") },
        { id: FALSE_EASTING, double: v("x_0") },
        { id: FALSE_NORTHING, double: v("y_0") },
      ];
      break;
    default:
      return `the ${p.get("proj") ?? "unnamed"} projection`;
  }
  if (p.has("towgs84")) return "a datum shift (towgs84)";
  const [a, b] = axes(p);
  return [
    { id: GT_MODEL_TYPE, short: MODEL_PROJECTED },
    { id: GT_RASTER_TYPE, short: PIXEL_IS_AREA },
    { id: GEOGRAPHIC_TYPE, short: USER_DEFINED },
    { id: GEOG_GEODETIC_DATUM, short: USER_DEFINED },
    { id: GEOG_ANGULAR_UNITS, short: ANGULAR_DEGREE },
    { id: GEOG_ELLIPSOID, short: USER_DEFINED },
    { id: GEOG_SEMI_MAJOR, double: a },
    { id: GEOG_SEMI_MINOR, double: b },
    { id: PROJECTED_CS_TYPE, short: USER_DEFINED },
    { id: PROJECTION, short: USER_DEFINED },
    ...method,
    { id: PROJ_LINEAR_UNITS, short: LINEAR_METRE },
  ].sort((x, y) => x.id - y.id);
}

/** The GeoKeyDirectory (SHORTs) and GeoDoubleParams of a list of keys, sorted by id. */
export function keyDirectory(keys: GeoKey[]): { directory: number[]; doubles: number[] } {
  const sorted = [...keys].sort((x, y) => x.id - y.id);
  const doubles: number[] = [];
  const entries: number[] = [];
  for (const k of sorted) {
    if ("short" in k) entries.push(k.id, 0, 1, k.short);
    else {
      entries.push(k.id, 34736, 1, doubles.length);
      doubles.push(k.double);
    }
  }
  return { directory: [1, 1, 0, sorted.length, ...entries], doubles };
}
