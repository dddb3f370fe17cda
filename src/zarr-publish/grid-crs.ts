// The coordinate reference system of a published dataset, told the ways GIS clients look for it:
// a CF grid-mapping scalar named spatial_ref (grid_mapping_name plus crs_wkt and spatial_ref, the
// WKT netCDF tools and rioxarray read), `grid_mapping` on every data variable, and GDAL's own
// `_CRS` attribute (the only thing GDAL's Zarr driver reads a CRS from). Regular latitude/longitude
// groups get WGS 84; a projected group its stored mapping, with the stored WKT where there is one.
import type { ForecastGroup } from "../store/store.ts";
import type { Json } from "./zarr-json.ts";

/** Name of the grid mapping variable of every published dataset (rioxarray's and GDAL's choice). */
export const GRID_MAPPING_NAME = "spatial_ref";

/** WGS 84 geographic coordinates (EPSG:4326) as WKT 1, the dialect GDAL 3.6 and netCDF readers share. */
export const WGS84_WKT =
  'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],' +
  'AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],' +
  'UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4326"]]';

/** The CF description of WGS 84 geographic coordinates. */
const WGS84_CF: Json = {
  grid_mapping_name: "latitude_longitude",
  semi_major_axis: 6378137,
  inverse_flattening: 298.257223563,
  longitude_of_prime_meridian: 0,
  crs_wkt: WGS84_WKT,
  spatial_ref: WGS84_WKT,
};

// Attributes of a stored mapping variable about its storage, not the CRS.
const STORAGE_ATTRS = ["_FillValue", "missing_value", "_ARRAY_DIMENSIONS", "units", "dtype"];

export interface GroupCrs {
  /** Attributes of the spatial_ref scalar. */
  mappingAttrs: Json;
  /** GDAL's `_CRS` value: {wkt} or, for a CRS known only by its proj4 definition, {proj4}-free {wkt}. */
  gdal: Json;
}

/** The CRS of a group as published, or undefined when it has none gridcast can state. */
export function groupCrs(group: ForecastGroup): GroupCrs {
  const p = group.grid.projection;
  if (!p) return { mappingAttrs: { ...WGS84_CF }, gdal: { wkt: WGS84_WKT } };
  const mappingAttrs: Json = { ...p.attrs };
  for (const k of STORAGE_ATTRS) delete mappingAttrs[k];
  const stored = [mappingAttrs.crs_wkt, mappingAttrs.spatial_ref].find((w) => typeof w === "string" && w.trim());
  const wkt = typeof stored === "string" ? stored : p.definition.startsWith("+") ? undefined : p.definition;
  if (wkt) {
    mappingAttrs.crs_wkt ??= wkt;
    mappingAttrs.spatial_ref ??= wkt;
  }
  // GDAL reads `_CRS.wkt` through its user-input parser, which also takes a proj4 definition: a
  // mapping stored without WKT still georeferences in GDAL (and nowhere claims a WKT it lacks).
  return { mappingAttrs, gdal: wkt ? { wkt } : { wkt: p.definition } };
}
