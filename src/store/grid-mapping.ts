// A grid's coordinate reference system from its CF grid mapping: the grid_mapping_name and its
// parameters turned into a proj4 definition, else the WKT (crs_wkt, or GDAL's spatial_ref) or a
// proj4 string the producer wrote. The result is checked by the caller against the stored 2-D
// latitude/longitude, so a mapping read wrongly is refused rather than served.
import { CorruptDataError } from "../errors.ts";
import type { Json } from "./metadata.ts";

export interface Crs {
  /** proj4 definition (a "+proj=..." string or the producer's WKT). */
  definition: string;
  /** What it was read from: the CF grid_mapping_name, "crs_wkt", "spatial_ref" or "proj4". */
  source: string;
}

const num = (v: unknown): number | undefined => {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
};

/** The figure of the earth as proj4 parameters (CF: earth_radius, semi-axes, inverse flattening). */
function earth(a: Json): string {
  const r = num(a.earth_radius);
  if (r !== undefined) return `+R=${r}`;
  const major = num(a.semi_major_axis);
  const minor = num(a.semi_minor_axis);
  const rf = num(a.inverse_flattening);
  if (major !== undefined && minor !== undefined) return major === minor ? `+R=${major}` : `+a=${major} +b=${minor}`;
  if (major !== undefined && rf !== undefined) return rf === 0 ? `+R=${major}` : `+a=${major} +rf=${rf}`;
  if (major !== undefined) return `+R=${major}`;
  // CF leaves the figure to the producer when it is not given; WGS 84 is what every reader assumes.
  return "+ellps=WGS84";
}

function parallels(v: unknown): number[] {
  const list = Array.isArray(v) ? v : [v];
  return list.map(num).filter((x): x is number => x !== undefined);
}

/** proj4 parameters of the CF mappings gridcast projects; undefined for any other name. */
function fromCf(a: Json): string | undefined {
  const name = typeof a.grid_mapping_name === "string" ? a.grid_mapping_name : undefined;
  const p = (k: string, d = 0) => num(a[k]) ?? d;
  const offsets = `+x_0=${p("false_easting")} +y_0=${p("false_northing")}`;
  switch (name) {
    case "lambert_conformal_conic": {
      const sp = parallels(a.standard_parallel);
      if (sp.length === 0)
        throw new CorruptDataError("the lambert_conformal_conic grid mapping has no standard_parallel");
      // With one standard parallel the origin lies on it (pyproj's to_cf leaves it out then).
      const lat0 = num(a.latitude_of_projection_origin) ?? (sp.length === 1 ? sp[0] : 0);
      return `+proj=lcc +lat_1=${sp[0]} +lat_2=${sp[1] ?? sp[0]} +lat_0=${lat0} +lon_0=${p("longitude_of_central_meridian")} ${offsets} ${earth(a)} +units=m +no_defs`;
    }
    case "polar_stereographic": {
      const lat0 = p("latitude_of_projection_origin", 90);
      const lon0 = num(a.straight_vertical_longitude_from_pole) ?? p("longitude_of_projection_origin");
      const ts = parallels(a.standard_parallel)[0];
      const scale = ts === undefined ? ` +k_0=${p("scale_factor_at_projection_origin", 1)}` : ` +lat_ts=${ts}`;
      return `+proj=stere +lat_0=${lat0 >= 0 ? 90 : -90} +lon_0=${lon0}${scale} ${offsets} ${earth(a)} +units=m +no_defs`;
    }
    case "stereographic":
      return `+proj=stere +lat_0=${p("latitude_of_projection_origin")} +lon_0=${p("longitude_of_projection_origin")} +k_0=${p("scale_factor_at_projection_origin", 1)} ${offsets} ${earth(a)} +units=m +no_defs`;
    case "rotated_latitude_longitude": {
      const poleLat = num(a.grid_north_pole_latitude);
      const poleLon = num(a.grid_north_pole_longitude);
      if (poleLat === undefined || poleLon === undefined) {
        throw new CorruptDataError(
          "the rotated_latitude_longitude grid mapping lacks its grid_north_pole latitude/longitude",
        );
      }
      // The rotated grid's meridian 0 lies opposite the grid's north pole.
      const lon0 = ((((poleLon + 180 + 180) % 360) + 360) % 360) - 180;
      return `+proj=ob_tran +o_proj=longlat +o_lat_p=${poleLat} +o_lon_p=${p("north_pole_grid_longitude")} +lon_0=${lon0} ${earth(a)} +no_defs`;
    }
    case "lambert_azimuthal_equal_area":
      return `+proj=laea +lat_0=${p("latitude_of_projection_origin")} +lon_0=${p("longitude_of_projection_origin")} ${offsets} ${earth(a)} +units=m +no_defs`;
    case "transverse_mercator":
      return `+proj=tmerc +lat_0=${p("latitude_of_projection_origin")} +lon_0=${p("longitude_of_central_meridian")} +k_0=${p("scale_factor_at_central_meridian", 1)} ${offsets} ${earth(a)} +units=m +no_defs`;
    case "mercator": {
      const ts = parallels(a.standard_parallel)[0];
      const scale = ts === undefined ? `+k_0=${p("scale_factor_at_projection_origin", 1)}` : `+lat_ts=${ts}`;
      return `+proj=merc +lon_0=${p("longitude_of_projection_origin")} ${scale} ${offsets} ${earth(a)} +units=m +no_defs`;
    }
    case "albers_conical_equal_area": {
      const sp = parallels(a.standard_parallel);
      if (sp.length === 0)
        throw new CorruptDataError("the albers_conical_equal_area grid mapping has no standard_parallel");
      return `+proj=aea +lat_1=${sp[0]} +lat_2=${sp[1] ?? sp[0]} +lat_0=${p("latitude_of_projection_origin")} +lon_0=${p("longitude_of_central_meridian")} ${offsets} ${earth(a)} +units=m +no_defs`;
    }
    default:
      return undefined;
  }
}

/**
 * The CRS a grid mapping variable's attributes describe, or undefined when they describe none
 * gridcast can read (the caller refuses the grid by name).
 */
export function crsOf(attrs: Json): Crs | undefined {
  const cf = fromCf(attrs);
  if (cf) return { definition: cf, source: String(attrs.grid_mapping_name) };
  for (const key of ["crs_wkt", "spatial_ref"]) {
    const wkt = attrs[key];
    if (typeof wkt === "string" && /^\s*(PROJCRS|PROJCS|PROJECTEDCRS|GEOGCRS|GEOGCS)\s*\[/i.test(wkt)) {
      return { definition: wkt, source: key };
    }
  }
  for (const key of ["proj4", "proj4text", "proj4_params", "proj_params"]) {
    const text = attrs[key];
    if (typeof text === "string" && /\+proj=/.test(text)) return { definition: text.trim(), source: "proj4" };
  }
  return undefined;
}

/** The proj4 definition of geographic coordinates on the CRS's own figure of the earth. */
export function geographicOf(definition: string): string {
  if (!definition.trim().startsWith("+")) return "WGS84";
  const keep = definition.match(/\+(R|a|b|rf|ellps|datum|towgs84)=\S+/g) ?? [];
  return `+proj=longlat ${keep.join(" ") || "+ellps=WGS84"} +no_defs`;
}
