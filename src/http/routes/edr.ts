// OGC API – Environmental Data Retrieval at /edr: thin over forecast/edr/ (collections from the
// groups, queries through the engine /point and the export use), with the keys, rate limits,
// concurrency cap and problem+json of every keyed weather route. Metadata is public, as /api/models is.
import { collectionOf, QUERY_TYPES, type QueryType } from "../../forecast/edr/collections.ts";
import { coverageJson, csv, geoJson } from "../../forecast/edr/encode.ts";
import type { Answer } from "../../forecast/edr/query.ts";
import type { AppContext } from "../context.ts";
import {
  answer,
  chooseFormat,
  type Format,
  groupOf,
  keepAnswer,
  keptAnswer,
  type QueryParams,
  runOf,
} from "../edr-request.ts";
import { linkBase } from "../public-base.ts";
import { type Reply, type RouteDef, route } from "../route.ts";
import {
  CONFORMANCE,
  CollectionPath,
  EDR_CONVENTIONS,
  FORM_LISTS,
  InstancePath,
  jsonContent,
  MetaQuery,
  QUERIES,
  QUERY_RESPONSES,
} from "../schemas/edr.ts";

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
  const def = route({
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
    // A position or trajectory asked again is given again, without a promise, while the store
    // holds what it was read from; anything else is answered().
    handler: ({ app, query, params, req }) => {
      const format = chooseFormat((query as QueryParams).f as string | undefined, req);
      const { base } = linkBase(app.settings, req);
      const key = type === "position" || type === "trajectory" ? `${format.type} ${base}${req.url}` : undefined;
      const kept = key === undefined ? undefined : keptAnswer(app, key);
      return kept ?? answered(app, query as QueryParams, params, format, base, key);
    },
  });

  /** The query read and encoded (and kept, for a position or trajectory read at once). */
  async function answered(
    app: AppContext,
    query: QueryParams,
    params: Record<string, string>,
    format: { format: Format; type: string },
    base: string,
    key: string | undefined,
  ): Promise<Reply> {
    const group = await groupOf(app, params.collectionId, true);
    const run = runOf(group, instance ? params.instanceId : undefined, true);
    const a = await answer(app, type, query, group, run);
    const reply = encode(
      a,
      format,
      `${base}${path.replace("{collectionId}", params.collectionId).replace("{instanceId}", params.instanceId ?? "")}`,
    );
    if (key !== undefined && a?.sources) keepAnswer(app, key, a.sources, reply);
    return reply;
  }
  return def;
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
