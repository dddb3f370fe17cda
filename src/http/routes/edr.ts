// OGC API – Environmental Data Retrieval at /edr: thin over forecast/edr/ (collections from the
// groups, queries through the engine /point and the export use), with the keys, rate limits,
// concurrency cap and problem+json of every keyed weather route. Metadata is public, as /api/models is.
import type { IncomingMessage } from "node:http";
import Type from "typebox";
import { MIB } from "../../config.ts";
import { InvalidParameterError, NotFoundError } from "../../errors.ts";
import {
  collectionOf,
  instanceId,
  OUTPUT_FORMATS,
  QUERY_TYPES,
  type QueryType,
} from "../../forecast/edr/collections.ts";
import { parseDatetime } from "../../forecast/edr/datetime.ts";
import {
  COVJSON_TYPE,
  COVJSON_TYPE_OLD,
  CSV_TYPE,
  coverageJson,
  csv,
  GEOJSON_TYPE,
  geoJson,
} from "../../forecast/edr/encode.ts";
import {
  type Answer,
  boxQuery,
  circleBox,
  greatCircleKm,
  inPolygons,
  positionQuery,
  type QueryCommon,
  WITHIN_UNITS,
} from "../../forecast/edr/query.ts";
import { parseWkt, polygonsOf, verticesOf } from "../../forecast/edr/wkt.ts";
import { parseRunParam, runIndexOf } from "../../forecast/layers.ts";
import { slashId, tildeId } from "../../forecast/listing.ts";
import { latestRun, requireGroup } from "../../forecast/select.ts";
import { UNITS_STORED, unitsParamDescription } from "../../forecast/units-option.ts";
import type { ForecastGroup } from "../../store/store.ts";
import type { AppContext } from "../context.ts";
import { pointCopies } from "../point-copies.ts";
import { linkBase } from "../public-base.ts";
import { type Reply, type RouteDef, route } from "../route.ts";

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
  "accepted in `parameter-name`; an unknown one is 400 naming it), each with `unit.symbol` equal to the units " +
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

const CollectionPath = Type.Object({
  collectionId: Type.String({
    pattern: "^forecast~[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    description: "Collection id: a forecast group in the ~ form (forecast~global)",
  }),
});
const InstancePath = Type.Object({
  collectionId: CollectionPath.properties.collectionId,
  instanceId: Type.String({
    maxLength: 40,
    description: "A run of the group: its initialisation time, RFC 3339 (2026-11-20T12:00:00Z), as /instances lists it",
  }),
});

const MetaQuery = Type.Object({
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

const QUERIES: Record<QueryType, object> = {
  position: Type.Object({ coords: coords("POINT(lon lat) or MULTIPOINT((lon lat),(lon lat))"), ...common }),
  radius: Type.Object({
    coords: coords("POINT(lon lat): the centre"),
    within: Type.Number({ exclusiveMinimum: 0, description: "The distance from the centre" }),
    "within-units": Type.String({ maxLength: 8, description: "km, mi or m" }),
    ...common,
  }),
  area: Type.Object({ coords: coords("POLYGON((lon lat,...)) or MULTIPOLYGON(((lon lat,...)),...)"), ...common }),
  cube: Type.Object({
    bbox: Type.String({ maxLength: 200, description: "west,south,east,north (CRS84)" }),
    ...common,
  }),
  trajectory: Type.Object({
    coords: coords("LINESTRING(lon lat,...), LINESTRING M(lon lat t,...), LINESTRING Z / ZM"),
    ...common,
  }),
};

/** Parameters the EDR standard writes comma-separated (style form, explode false). */
const FORM_LISTS = ["parameter-name", "z", "bbox", "datetime", "coords", "within", "within-units", "crs", "f"];

const Json = Type.Object({}, { additionalProperties: true });
const jsonContent = (description: string) => ({ description, content: { "application/json": { schema: Json } } });

const QUERY_RESPONSES = {
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

type Format = "covjson" | "geojson" | "csv";

/** The encoding: `f` when given, else the first of Accept's types gridcast writes, else CoverageJSON. */
function chooseFormat(f: string | undefined, req: IncomingMessage): { format: Format; type: string } {
  if (f !== undefined) {
    const k = f.toLowerCase();
    if (k === "coveragejson" || k === "covjson") return { format: "covjson", type: COVJSON_TYPE };
    if (k === "geojson") return { format: "geojson", type: GEOJSON_TYPE };
    if (k === "csv") return { format: "csv", type: CSV_TYPE };
    throw new InvalidParameterError("f", `f must be one of ${OUTPUT_FORMATS.join(", ")}, got "${f.slice(0, 20)}"`);
  }
  const accept = String(req.headers.accept ?? "")
    .split(",")
    .map((part, i) => {
      const [type, ...ps] = part.trim().toLowerCase().split(";");
      const q = ps.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { type: type.trim(), q: q ? Number(q[1]) : 1, i };
    })
    .filter((a) => a.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const a of accept) {
    if (a.type === COVJSON_TYPE || a.type === "application/json") return { format: "covjson", type: COVJSON_TYPE };
    if (a.type === COVJSON_TYPE_OLD) return { format: "covjson", type: COVJSON_TYPE_OLD };
    if (a.type === GEOJSON_TYPE) return { format: "geojson", type: GEOJSON_TYPE };
    if (a.type === "text/csv") return { format: "csv", type: CSV_TYPE };
  }
  return { format: "covjson", type: COVJSON_TYPE };
}

function checkCrs(crs: string | undefined): void {
  if (crs === undefined) return;
  const ok = [
    "CRS84",
    "OGC:CRS84",
    "http://www.opengis.net/def/crs/OGC/1.3/CRS84",
    "https://www.opengis.net/def/crs/OGC/1.3/CRS84",
  ];
  if (!ok.includes(crs))
    throw new InvalidParameterError("crs", `crs: only CRS84 is offered, got "${crs.slice(0, 40)}"`);
}

function parseZ(text: string | undefined, group: ForecastGroup): number[] | undefined {
  if (text === undefined) return undefined;
  const number = (s: string) => {
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s.trim())) {
      throw new InvalidParameterError("z", `z: "${s.slice(0, 20)}" is not a number`);
    }
    return Number(s);
  };
  const range = text.split("/");
  if (range.length === 2) {
    const [a, b] = range.map(number);
    const picked = (group.levels ?? []).filter((l) => l >= Math.min(a, b) && l <= Math.max(a, b));
    if (!picked.length) throw new InvalidParameterError("z", `z: no level of ${group.id} lies within ${text}`);
    return picked;
  }
  return [...new Set(text.split(",").map(number))];
}

async function groupOf(app: AppContext, collectionId: string): Promise<ForecastGroup> {
  try {
    return await requireGroup(app.store, slashId(collectionId));
  } catch (e) {
    if (e instanceof NotFoundError) {
      throw new NotFoundError(`no collection "${collectionId}"`, { ...e.extensions, param: "collectionId" });
    }
    throw e;
  }
}

function runOf(group: ForecastGroup, instance: string | undefined): number {
  if (instance === undefined) return latestRun(group);
  let t: number;
  try {
    t = parseRunParam(instance);
  } catch {
    throw new InvalidParameterError("instanceId", `instanceId must be a run time like ${instanceId(group.runs[0])}`);
  }
  try {
    return runIndexOf(group, t);
  } catch {
    throw new NotFoundError(`no instance ${instance} of ${tildeId(group.id)}`, {
      param: "instanceId",
      available: group.runs.map(instanceId),
    });
  }
}

type QueryParams = Record<string, string | number | undefined>;

async function answer(app: AppContext, type: QueryType, q: QueryParams, group: ForecastGroup, run: number) {
  checkCrs(q.crs as string | undefined);
  const s = app.settings;
  const common: QueryCommon = {
    group,
    run,
    names:
      q["parameter-name"] === undefined
        ? []
        : String(q["parameter-name"])
            .split(",")
            .map((n) => n.trim()),
    datetime: q.datetime === undefined ? undefined : parseDatetime(String(q.datetime)),
    z: parseZ(q.z as string | undefined, group),
    units: q.units as string | undefined,
  };
  if (common.names.some((n) => n === "")) {
    throw new InvalidParameterError("parameter-name", "parameter-name: an empty name in the list");
  }
  const box = (
    b: { latMin: number; latMax: number; lonMin: number; lonMax: number },
    keep?: (lat: number, lon: number) => boolean,
  ) =>
    boxQuery(
      app.store,
      app.registry,
      { ...common, ...b, keep },
      s.field_export_max_mb,
      s.read_slab_mb * MIB,
      s.scan_hold_mb * MIB,
    );
  switch (type) {
    case "position": {
      const points = verticesOf(parseWkt(String(q.coords), ["POINT", "MULTIPOINT"]));
      return positionQuery(app.store, app.registry, common, points, s.field_export_max_mb, pointCopies(app));
    }
    case "trajectory": {
      const points = verticesOf(parseWkt(String(q.coords), ["LINESTRING"]));
      return positionQuery(app.store, app.registry, common, points, s.field_export_max_mb, pointCopies(app), true);
    }
    case "cube": {
      const parts = String(q.bbox).split(",");
      if (parts.length !== 4) throw new InvalidParameterError("bbox", "bbox must be west,south,east,north (4 numbers)");
      const n = parts.map((p) => {
        if (!/^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(p)) {
          throw new InvalidParameterError("bbox", `bbox: "${p.slice(0, 20)}" is not a number`);
        }
        return Number(p);
      });
      const [w, so, e, no] = n;
      if (!(so >= -90 && no <= 90 && so <= no))
        throw new InvalidParameterError("bbox", "bbox: south and north must be within -90..90, south ≤ north");
      if (!(w >= -180 && w <= 360 && e >= -180 && e <= 360))
        throw new InvalidParameterError("bbox", "bbox: west and east must be within -180..360");
      return box({ latMin: so, latMax: no, lonMin: w, lonMax: e });
    }
    case "area": {
      const polygons = polygonsOf(parseWkt(String(q.coords), ["POLYGON", "MULTIPOLYGON"]));
      const all = polygons.flat(2);
      const b = {
        latMin: Math.min(...all.map((v) => v.y)),
        latMax: Math.max(...all.map((v) => v.y)),
        lonMin: Math.min(...all.map((v) => v.x)),
        lonMax: Math.max(...all.map((v) => v.x)),
      };
      return box(b, (lat, lon) => inPolygons(polygons, lat, lon));
    }
    case "radius": {
      const [c] = verticesOf(parseWkt(String(q.coords), ["POINT"]));
      const unit = String(q["within-units"]).toLowerCase();
      const factor = WITHIN_UNITS[unit];
      if (factor === undefined) {
        throw new InvalidParameterError(
          "within-units",
          `within-units must be one of ${Object.keys(WITHIN_UNITS).join(", ")}`,
        );
      }
      const km = Number(q.within) * factor;
      return box(circleBox(c.y, c.x, km), (lat, lon) => greatCircleKm(c.y, c.x, lat, lon) <= km);
    }
  }
}

function encode(a: Answer | undefined, format: { format: Format; type: string }, endpoint: string): Reply {
  if (!a || a.coverages.length === 0) return { status: 204, body: "", type: format.type };
  const body =
    format.format === "covjson" ? coverageJson(a) : format.format === "geojson" ? geoJson(a, endpoint) : csv(a);
  return { body, type: format.type };
}

function queryRoute(type: QueryType, instance: boolean): RouteDef {
  const path = instance
    ? `/edr/collections/{collectionId}/instances/{instanceId}/${type}`
    : `/edr/collections/{collectionId}/${type}`;
  return route({
    method: "GET",
    path,
    operationId: `edr${type[0].toUpperCase()}${type.slice(1)}${instance ? "Instance" : ""}`,
    summary: `EDR ${type} query${instance ? " of one run" : ""}`,
    description: `${collectionWords(type)} ${EDR_CONVENTIONS}`,
    tags: ["edr"],
    auth: "weather",
    heavy: true,
    pathParams: instance ? InstancePath : CollectionPath,
    query: QUERIES[type],
    formLists: FORM_LISTS,
    responses: QUERY_RESPONSES,
    handler: async ({ app, query, params, req }) => {
      const format = chooseFormat((query as QueryParams).f as string | undefined, req);
      const group = await groupOf(app, params.collectionId);
      const run = runOf(group, instance ? params.instanceId : undefined);
      const a = await answer(app, type, query as QueryParams, group, run);
      return encode(
        a,
        format,
        `${linkBase(app.settings, req).base}${path.replace("{collectionId}", params.collectionId).replace("{instanceId}", params.instanceId ?? "")}`,
      );
    },
  });
}

function collectionWords(type: QueryType): string {
  return {
    position: "Series at one point (POINT) or several (MULTIPOINT), the nearest node of each.",
    radius: "Every node within `within` `within-units` of a point (great-circle).",
    area: "Every node inside a polygon (POLYGON, MULTIPOLYGON, holes honoured).",
    cube: "Every node in a box (`bbox`), at the levels `z` names.",
    trajectory: "One sample per vertex of a LINESTRING (M: the vertex's valid time; Z: its level).",
  }[type];
}

export const edrRoutes: RouteDef[] = [
  route({
    method: "GET",
    path: "/edr",
    operationId: "edrLanding",
    summary: "OGC API – EDR landing page",
    description: `Links to the API description, conformance and the collections (one per forecast group). ${EDR_CONVENTIONS}`,
    tags: ["edr"],
    auth: "public",
    query: MetaQuery,
    responses: { 200: jsonContent("Landing page") },
    handler: ({ app, req }) => {
      const { base, headers } = linkBase(app.settings, req);
      return {
        json: {
          title: "gridcast OGC API – Environmental Data Retrieval",
          description: "Forecast groups as EDR collections: positions, radius, areas, cubes and trajectories",
          links: [
            { href: `${base}/edr`, rel: "self", type: "application/json", title: "this document" },
            {
              href: `${base}/openapi.json`,
              rel: "service-desc",
              type: "application/vnd.oai.openapi+json;version=3.1",
              title: "OpenAPI",
            },
            { href: `${base}/api-docs`, rel: "service-doc", type: "text/html", title: "API documentation" },
            { href: `${base}/edr/conformance`, rel: "conformance", type: "application/json", title: "conformance" },
            { href: `${base}/edr/collections`, rel: "data", type: "application/json", title: "collections" },
          ],
        },
        headers,
        cache: "public, max-age=60",
      };
    },
  }),
  route({
    method: "GET",
    path: "/edr/conformance",
    operationId: "edrConformance",
    summary: "Conformance classes",
    tags: ["edr"],
    auth: "public",
    query: MetaQuery,
    responses: { 200: jsonContent("Conformance") },
    handler: () => ({ json: { conformsTo: CONFORMANCE }, cache: "public, max-age=60" }),
  }),
  route({
    method: "GET",
    path: "/edr/collections",
    operationId: "edrCollections",
    summary: "Collections: one per forecast group",
    tags: ["edr"],
    auth: "public",
    query: MetaQuery,
    responses: { 200: jsonContent("Collections") },
    handler: async ({ app, req }) => {
      const { base, headers } = linkBase(app.settings, req);
      const groups = await app.store.forecastGroups();
      return {
        json: {
          links: [{ href: `${base}/edr/collections`, rel: "self", type: "application/json" }],
          collections: groups.map((g) => collectionOf(g, base)),
        },
        headers,
        cache: "public, max-age=60",
      };
    },
  }),
  route({
    method: "GET",
    path: "/edr/collections/{collectionId}",
    operationId: "edrCollection",
    summary: "One collection: extent, parameters, CRS, formats and queries",
    tags: ["edr"],
    auth: "public",
    pathParams: CollectionPath,
    query: MetaQuery,
    responses: { 200: jsonContent("Collection") },
    handler: async ({ app, req, params }) => {
      const { base, headers } = linkBase(app.settings, req);
      return {
        json: collectionOf(await groupOf(app, params.collectionId), base),
        headers,
        cache: "public, max-age=60",
      };
    },
  }),
  route({
    method: "GET",
    path: "/edr/collections/{collectionId}/instances",
    operationId: "edrInstances",
    summary: "The runs of a collection",
    tags: ["edr"],
    auth: "public",
    pathParams: CollectionPath,
    query: MetaQuery,
    responses: { 200: jsonContent("Instances") },
    handler: async ({ app, req, params }) => {
      const { base, headers } = linkBase(app.settings, req);
      const group = await groupOf(app, params.collectionId);
      const runs = [...group.runs].sort((a, b) => b - a);
      return {
        json: {
          links: [
            { href: `${base}/edr/collections/${params.collectionId}/instances`, rel: "self", type: "application/json" },
          ],
          instances: runs.map((r) => collectionOf(group, base, r)),
        },
        headers,
        cache: "public, max-age=60",
      };
    },
  }),
  route({
    method: "GET",
    path: "/edr/collections/{collectionId}/instances/{instanceId}",
    operationId: "edrInstance",
    summary: "One run of a collection",
    tags: ["edr"],
    auth: "public",
    pathParams: InstancePath,
    query: MetaQuery,
    responses: { 200: jsonContent("Instance") },
    handler: async ({ app, req, params }) => {
      const { base, headers } = linkBase(app.settings, req);
      const group = await groupOf(app, params.collectionId);
      return {
        json: collectionOf(group, base, group.runs[runOf(group, params.instanceId)]),
        headers,
        cache: "public, max-age=60",
      };
    },
  }),
  ...QUERY_TYPES.map((t) => queryRoute(t, false)),
  ...QUERY_TYPES.map((t) => queryRoute(t, true)),
];
