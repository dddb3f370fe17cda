// The projection of a grid stored with 2-D latitude/longitude and no x/y coordinate values
// (cfgrib's Lambert grids: CERRA, HRRR read by cfgrib, kerchunk or Herbie; raw WRF output), read
// back from what the producer left: a CF grid mapping, cfgrib's GRIB_* keys, or WRF's MAP_PROJ
// globals. The x/y axes are then rebuilt from the first stored node and the grid spacing; the
// caller checks them against every node of a few whole rows and columns of the stored
// latitude/longitude (projected-grid.ts's crossCheck), so a projection read wrongly is refused,
// never served.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import { wrap180 } from "./grid.ts";
import { type Crs, crsOf } from "./grid-mapping.ts";
import type { Json } from "./metadata.ts";

/** Radius of GRIB's spherical earth (shapeOfTheEarth 6), the figure of NCEP's and ECMWF's limited-area grids. */
const GRIB_SPHERE_M = 6_371_229;
/** Radius of the sphere WRF projects on (its EARTH_RADIUS_M). */
const WRF_SPHERE_M = 6_370_000;

/** A CRS recovered for a grid without x/y values, with the grid spacing where the producer states it. */
export interface RecoveredCrs {
  /** CF attributes of the mapping (republished as the grid's mapping). */
  attrs: Json;
  crs: Crs;
  /** Grid spacing in metres along x and y, signed by the storage order; undefined: from the nodes. */
  dx: number | undefined;
  dy: number | undefined;
  /** Where the projection was read from, in words. */
  from: string;
}

const num = (v: unknown): number | undefined => {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
};

/** The figure of the earth GRIB's shapeOfTheEarth code names, as CF attributes; undefined for one not known. */
function gribEarth(a: Json): Json | undefined {
  const shape = num(a.GRIB_shapeOfTheEarth);
  // cfgrib does not keep the shape by default: the sphere of NCEP's and ECMWF's LAM grids.
  if (shape === undefined || shape === 6) return { earth_radius: GRIB_SPHERE_M };
  if (shape === 0) return { earth_radius: 6_367_470 };
  if (shape === 5) return { semi_major_axis: 6_378_137, inverse_flattening: 298.257223563 };
  if (shape === 4) return { semi_major_axis: 6_378_137, inverse_flattening: 298.257222101 };
  if (shape === 1) {
    const r = num(a.GRIB_radius) ?? num(a.GRIB_scaledValueOfRadiusOfSphericalEarth);
    return r === undefined ? undefined : { earth_radius: r };
  }
  return undefined;
}

/** The CF mapping cfgrib's GRIB_* keys describe (Lambert conformal, polar stereographic), else why not. */
function fromGrib(a: Json): RecoveredCrs | string | undefined {
  const type = typeof a.GRIB_gridType === "string" ? a.GRIB_gridType : undefined;
  if (!type) return undefined;
  const earth = gribEarth(a);
  if (!earth) return `GRIB_shapeOfTheEarth ${String(a.GRIB_shapeOfTheEarth)} is not a figure gridcast knows`;
  const dxM = num(a.GRIB_DxInMetres);
  const dyM = num(a.GRIB_DyInMetres);
  const iNeg = num(a.GRIB_iScansNegatively) === 1;
  const jPos = num(a.GRIB_jScansPositively) === 1;
  const dx = dxM === undefined ? undefined : iNeg ? -dxM : dxM;
  const dy = dyM === undefined ? undefined : jPos ? dyM : -dyM;
  let attrs: Json;
  if (type === "lambert") {
    const lat1 = num(a.GRIB_Latin1InDegrees);
    const lat2 = num(a.GRIB_Latin2InDegrees) ?? lat1;
    const lov = num(a.GRIB_LoVInDegrees);
    if (lat1 === undefined || lov === undefined)
      return "its GRIB_* keys lack GRIB_Latin1InDegrees or GRIB_LoVInDegrees";
    attrs = {
      grid_mapping_name: "lambert_conformal_conic",
      standard_parallel: lat1 === lat2 ? lat1 : [lat1, lat2 as number],
      longitude_of_central_meridian: wrap180(lov),
      latitude_of_projection_origin: num(a.GRIB_LaDInDegrees) ?? lat1,
      ...earth,
    };
  } else if (type === "polar_stereographic") {
    const lov = num(a.GRIB_orientationOfTheGridInDegrees) ?? num(a.GRIB_LoVInDegrees);
    if (lov === undefined) return "its GRIB_* keys lack GRIB_orientationOfTheGridInDegrees";
    const south = num(a.GRIB_southPoleOnProjectionPlane) === 1;
    attrs = {
      grid_mapping_name: "polar_stereographic",
      latitude_of_projection_origin: south ? -90 : 90,
      straight_vertical_longitude_from_pole: wrap180(lov),
      standard_parallel: num(a.GRIB_LaDInDegrees) ?? (south ? -60 : 60),
      ...earth,
    };
  } else {
    return `GRIB_gridType ${type} is not a projection gridcast rebuilds (lambert, polar_stereographic)`;
  }
  const crs = crsOf(attrs);
  if (!crs) return `GRIB_gridType ${type} could not be turned into a CRS`;
  return { attrs, crs, dx, dy, from: `the GRIB_* keys (GRIB_gridType ${type})` };
}

/** The CF mapping WRF's MAP_PROJ globals describe (Lambert, polar stereographic, Mercator), else why not. */
function fromWrf(g: Json): RecoveredCrs | string | undefined {
  const proj = num(g.MAP_PROJ);
  if (proj === undefined) return undefined;
  // WRF's latitude-longitude grid (6; rotated by POLE_LAT/POLE_LON): not rebuilt, its stored nodes
  // place it as a curvilinear grid (winds turned by COSALPHA/SINALPHA where the store has them).
  if (proj === 6) return undefined;
  const t1 = num(g.TRUELAT1);
  const t2 = num(g.TRUELAT2) ?? t1;
  const lon0 = num(g.STAND_LON);
  const dx = num(g.DX);
  const dy = num(g.DY);
  const earth = { earth_radius: WRF_SPHERE_M };
  let attrs: Json;
  if (t1 === undefined || lon0 === undefined) return "the WRF globals lack TRUELAT1 or STAND_LON";
  if (proj === 1) {
    attrs = {
      grid_mapping_name: "lambert_conformal_conic",
      standard_parallel: t1 === t2 ? t1 : [t1, t2 as number],
      longitude_of_central_meridian: lon0,
      latitude_of_projection_origin: num(g.MOAD_CEN_LAT) ?? num(g.CEN_LAT) ?? t1,
      ...earth,
    };
  } else if (proj === 2) {
    attrs = {
      grid_mapping_name: "polar_stereographic",
      latitude_of_projection_origin: t1 >= 0 ? 90 : -90,
      straight_vertical_longitude_from_pole: lon0,
      standard_parallel: t1,
      ...earth,
    };
  } else if (proj === 3) {
    attrs = { grid_mapping_name: "mercator", longitude_of_projection_origin: lon0, standard_parallel: t1, ...earth };
  } else {
    return `WRF MAP_PROJ ${proj} is not a projection gridcast rebuilds (1 Lambert, 2 polar stereographic, 3 Mercator; 6 is served from its nodes)`;
  }
  const crs = crsOf(attrs)!;
  return { attrs, crs, dx, dy, from: `the WRF globals (MAP_PROJ ${proj})` };
}

/**
 * The projection of a grid with 2-D latitude/longitude and no x/y values: the CF grid mapping
 * its variables name (Herbie), else the GRIB_* keys of a variable on the grid (cfgrib, kerchunk),
 * else WRF's MAP_PROJ globals. A string says why none could be read; undefined, that none is stated.
 * A CF mapping without a spacing borrows the GRIB_* keys' (Herbie keeps them beside it).
 */
export function recoverCrs(
  onGrid: StoredArray[],
  mapping: { name: string; attrs: Json } | undefined,
  groupAttrs: Json,
): RecoveredCrs | string | undefined {
  const withGrib = onGrid.find((a) => typeof a.meta.attrs.GRIB_gridType === "string");
  const grib = withGrib ? fromGrib(withGrib.meta.attrs) : undefined;
  if (mapping) {
    const crs = crsOf(mapping.attrs);
    if (!crs) return `its grid mapping ${mapping.name} is not one gridcast can project`;
    const spacing = typeof grib === "object" ? grib : undefined;
    return {
      attrs: mapping.attrs,
      crs,
      dx: spacing?.dx,
      dy: spacing?.dy,
      from: `the CF grid mapping ${mapping.name}`,
    };
  }
  if (grib !== undefined) return grib;
  return fromWrf(groupAttrs);
}

/**
 * Regular x/y axes through the first stored node: its projected position is the origin, the
 * spacing the stated one or, without one, the mean step from the first node to the last of row 0
 * and of column 0. Every node is checked afterwards (crossCheck), so an estimate cannot pass wrong.
 */
export function rebuildAxes(
  forward: (lonLat: [number, number]) => number[],
  corner: { lat: number; lon: number },
  rowEnd: { lat: number; lon: number },
  colEnd: { lat: number; lon: number },
  nx: number,
  ny: number,
  dx: number | undefined,
  dy: number | undefined,
): { x: Float64Array; y: Float64Array } {
  const at = (p: { lat: number; lon: number }) => {
    const [gx, gy] = forward([p.lon, p.lat]);
    if (!Number.isFinite(gx) || !Number.isFinite(gy)) {
      throw new CorruptDataError("the recovered projection puts the grid's corner nodes off the earth");
    }
    return [gx, gy];
  };
  const [x0, y0] = at(corner);
  const stepX = dx ?? (nx > 1 ? (at(rowEnd)[0] - x0) / (nx - 1) : Number.NaN);
  const stepY = dy ?? (ny > 1 ? (at(colEnd)[1] - y0) / (ny - 1) : Number.NaN);
  if (!Number.isFinite(stepX) || !Number.isFinite(stepY) || stepX === 0 || stepY === 0) {
    throw new CorruptDataError("the grid's spacing cannot be recovered (a single row or column, or no DX/DY)");
  }
  return {
    x: Float64Array.from({ length: nx }, (_, i) => x0 + i * stepX),
    y: Float64Array.from({ length: ny }, (_, j) => y0 + j * stepY),
  };
}
