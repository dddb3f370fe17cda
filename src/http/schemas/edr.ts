// The EDR routes' request and response declarations (TypeBox: validation and the OpenAPI
// document), the conformance classes and the conventions every query's description states.
import Type from "typebox";
import type { QueryType } from "../../forecast/edr/collections.ts";
import { COVJSON_TYPE, COVJSON_TYPE_OLD, GEOJSON_TYPE } from "../../forecast/edr/encode.ts";
import { UNITS_STORED, unitsParamDescription } from "../../forecast/units-option.ts";

export const CONFORMANCE = [
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/core",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/collections",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/json",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/geojson",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/edr-geojson",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/covjson",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/instances",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/queries",
  "http://www.opengis.net/spec/ogcapi-edr-1/1.0/conf/oas30",
  "http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
  "http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
];

/** The conventions every EDR answer follows; the OpenAPI description of each query says them. */
export const EDR_CONVENTIONS =
  "Conventions: parameter names are the registry's canonical names (aliases and a group's stored names are " +
  "accepted in `parameter-name`; an unknown one is 400 naming it, as is an unknown collection or instance in a " +
  "query), each with `unit.symbol` equal to the units " +
  "its values are in. Without `datetime` a query answers the latest run (an instance: its run), every lead, " +
  "with `t` as valid times (RFC 3339, UTC); `datetime` (an instant, a/b, ../b or a/..) keeps the valid times of " +
  "that run it matches. Values are the stored units unless `units` asks otherwise, as on /point. A position " +
  "answers each point's nearest node exactly as /point does (the most local regional patch covering it, its " +
  "own grid on projected, curvilinear and unstructured groups), and the domain's x/y name that node's " +
  "longitude/latitude (the point asked for is in `requested`). Cube, area and radius read the box the .npy " +
  "export reads for the same bounds (the same nodes, the same values; an unstructured group's regular nodes at " +
  "its nominal step), area and radius then leaving the nodes outside as null (and out of GeoJSON and CSV). On " +
  "projected and curvilinear grids they answer the nodes of the export's window that the box, polygon or circle " +
  "holds, each placed by its own longitude/latitude (a MultiPointSeries: a composite x/y axis, as /point names " +
  "the node). Radius distances are great-circle on a sphere of 6371.0088 km, " +
  "`within-units` km, mi or m. A trajectory answers one sample per vertex (the node nearest it, no points added " +
  "between vertices): with LINESTRING M (or ZM) at the valid time M gives (seconds since 1970; 400 when it is " +
  "not a valid time of the run), with Z (or ZM) at the level Z gives. Levelled parameters answer every level " +
  "unless `z` names some. CoverageJSON (application/vnd.cov+json; application/prs.coverage+json accepted) " +
  "ranges are inline NdArrays with every value placed by x, y, (z) and t (axis order t, z, y, x); several " +
  "coverages (several points, or parameters on different nodes or grids) form a CoverageCollection. GeoJSON " +
  "is one Point feature per position, time (and level) per the EDR GeoJSON schema with the value under " +
  "`properties.<parameter>`. CSV has `lon,lat,datetime` (and `z`) and a column per parameter, one row per " +
  "node, time (and level); a missing value is an empty field (null in JSON). `f` (CoverageJSON, GeoJSON, CSV) " +
  "chooses the encoding, else the Accept header, else CoverageJSON. An empty intersection (no valid time " +
  "matches `datetime`, no node lies in the box, polygon or circle) is 204 No Content; a position outside the " +
  "group's coverage is 400, as on /point. Queries need an API key with the weather scope (X-API-Key), count " +
  "against its rate limit with the same RateLimit headers as /point, and carry no credit charge; an answer " +
  "larger than field_export_max_mb is 413 before anything is read.";

export const CollectionPath = Type.Object({
  collectionId: Type.String({
    pattern: "^forecast~[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    description: "Collection id: a forecast group in the ~ form (forecast~global)",
  }),
});
export const InstancePath = Type.Object({
  collectionId: CollectionPath.properties.collectionId,
  instanceId: Type.String({
    maxLength: 40,
    description: "A run of the group: its initialisation time, RFC 3339 (2026-11-20T12:00:00Z), as /instances lists it",
  }),
});

export const MetaQuery = Type.Object({
  f: Type.Optional(Type.String({ maxLength: 16, enum: ["json", "JSON"], description: "json (the only encoding)" })),
});

const common = {
  "parameter-name": Type.Optional(
    Type.String({
      maxLength: 1024,
      description: "Comma-separated parameter names (canonical or aliases); default every parameter",
    }),
  ),
  datetime: Type.Optional(
    Type.String({ maxLength: 64, description: "An instant, or an interval a/b with open ends .. (RFC 3339)" }),
  ),
  z: Type.Optional(
    Type.String({ maxLength: 256, description: "Levels (hPa), comma-separated, or an interval min/max" }),
  ),
  crs: Type.Optional(Type.String({ maxLength: 64, description: "CRS84 (the default and only one)" })),
  f: Type.Optional(Type.String({ maxLength: 16, description: "CoverageJSON (default), GeoJSON or CSV" })),
  units: Type.Optional(Type.String({ maxLength: 16, default: UNITS_STORED, description: unitsParamDescription })),
};
const coords = (what: string) => Type.String({ minLength: 1, maxLength: 200_000, description: what });

export const QUERIES: Record<QueryType, object> = {
  position: Type.Object({ coords: coords("POINT(lon lat) or MULTIPOINT((lon lat),(lon lat))"), ...common }),
  radius: Type.Object({
    coords: coords("POINT(lon lat): the centre"),
    within: Type.Number({ exclusiveMinimum: 0, description: "The distance from the centre" }),
    "within-units": Type.String({ maxLength: 8, description: "km, mi or m" }),
    ...common,
  }),
  area: Type.Object({ coords: coords("POLYGON((lon lat,...)) or MULTIPOLYGON(((lon lat,...)),...)"), ...common }),
  cube: Type.Object({
    bbox: Type.String({
      maxLength: 200,
      description: "west,south,east,north (CRS84), or west,south,zmin,east,north,zmax: levels from zmin to zmax",
    }),
    ...common,
  }),
  trajectory: Type.Object({
    coords: coords("LINESTRING(lon lat,...), LINESTRING M(lon lat t,...), LINESTRING Z / ZM"),
    ...common,
  }),
};

/** Parameters the EDR standard writes comma-separated (style form, explode false). */
export const FORM_LISTS = ["parameter-name", "z", "bbox", "datetime", "coords", "within", "within-units", "crs", "f"];

const Json = Type.Object({}, { additionalProperties: true });
export const jsonContent = (description: string) => ({
  description,
  content: { "application/json": { schema: Json } },
});

export const QUERY_RESPONSES = {
  200: {
    description: "The data, in the encoding `f` or Accept asks for",
    content: {
      [COVJSON_TYPE]: { schema: Json },
      [COVJSON_TYPE_OLD]: { schema: Json },
      [GEOJSON_TYPE]: { schema: Json },
      "text/csv": { schema: { type: "string" } },
    },
  },
  204: {
    description: "Empty intersection: no valid time matches datetime, or no node lies in the box, polygon or circle",
  },
  413: {
    description: "The answer would exceed field_export_max_mb (checked before anything is read)",
    content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
  },
};
