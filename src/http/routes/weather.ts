// Keyed weather routes: /point, the export catalogue and .npy export, models and registry.

import Type from "typebox";
import { MIB } from "../../config.ts";
import { embeddingFamilies } from "../../embeddings/catalogue.ts";
import { itemKeySpace } from "../../embeddings/published-catalogue.ts";
import { StoreUnavailableError } from "../../errors.ts";
import { type BoxRequest, boxLeads, planBox } from "../../forecast/box.ts";
import { boxGeoTiffHead, northUp } from "../../forecast/box-geotiff.ts";
import { exportCatalogue, modelsListing, registryListing, slashId } from "../../forecast/listing.ts";
import { pointJson, pointSeries, pointSource, type PointSeries as Series } from "../../forecast/point.ts";
import { AnswerMemo } from "../../forecast/point-source.ts";
import { defaultGroup } from "../../forecast/select.ts";
import {
  chooseUnits,
  convertSlabs,
  convertValue,
  UNITS_STORED,
  unitsParamDescription,
} from "../../forecast/units-option.ts";
import { recycleSlab } from "../../read-ahead.ts";
import type { Registry } from "../../registry/registry.ts";
import { type Soon, then } from "../../soon.ts";
import type { AppContext } from "../context.ts";
import { npyResponseHeaders } from "../npy-stream.ts";
import { pointCopies } from "../point-copies.ts";
import { linkBase } from "../public-base.ts";
import { type Reply, route } from "../route.ts";
import { GridCoordinates, Lat, Lon, Temporal } from "../schemas/common.ts";

const PointQuery = Type.Object({
  lat: Lat,
  lon: Lon,
  var: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      "Canonical variable name, a registered alias (2t, u10m, ...), or the stored name of a variable the group " +
      "recognised by its CF standard_name (x_wind_10m). Wind components stored along a projected grid's axes " +
      "(x_wind/y_wind, GRIB_uvRelativeToGrid) answer as u10/v10 turned to true north.",
  }),
  group: Type.Optional(
    Type.String({
      maxLength: 80,
      description: "Group id in the / form, forecast/<name>; default default_forecast_group",
    }),
  ),
  run: Type.Optional(
    Type.String({ maxLength: 40, description: "Run index or ISO 8601 initialisation time; default the latest run" }),
  ),
  level: Type.Optional(
    Type.Number({ description: "Level (hPa) for variables with a level dimension; required there" }),
  ),
  member: Type.Optional(
    Type.String({
      maxLength: 12,
      description:
        "Ensemble member number, or all for every member at once (in `members`); default the control member (number 0), or the first member when there is none " +
        "(number 0, else the first). Refused for variables without a member dimension.",
    }),
  ),
  units: Type.Optional(Type.String({ maxLength: 16, default: UNITS_STORED, description: unitsParamDescription })),
});

export const PointSeries = Type.Object({
  var: Type.String(),
  lat: Type.Number(),
  lon: Type.Number(),
  times: Type.Array(Type.String(), { description: "Valid times, ISO 8601 without zone (UTC)" }),
  values: Type.Array(Type.Union([Type.Number(), Type.Null()]), {
    description: "One value per time; null where missing",
  }),
  source: Type.String({ description: "global when the global group answered, regional when a downscale patch did" }),
  region: Type.Union([Type.String(), Type.Null()], {
    description: "Name of the patch used; null for the global group",
  }),
  group: Type.String(),
  units: Type.String({ description: "Units of `values`: the stored (canonical) units unless `units` asked otherwise" }),
  converted_from: Type.Optional(
    Type.String({
      description: "With a `units` option other than stored: the stored units the values were converted from",
    }),
  ),
  grid_lat: Type.Number({ description: "Latitude of the grid node used" }),
  grid_lon: Type.Number({ description: "Longitude of the grid node used" }),
  run: Type.String(),
  lead_hours: Type.Array(Type.Number()),
  level: Type.Union([Type.Number(), Type.Null()]),
  member: Type.Union([Type.Number(), Type.Null()], {
    description: "Ensemble member of `values`; null without a member dimension",
  }),
  members: Type.Optional(
    Type.Array(Type.Object({ member: Type.Number(), values: Type.Array(Type.Union([Type.Number(), Type.Null()])) }), {
      description: "With member=all: each member's series",
    }),
  ),
  temporal: Temporal,
  intervals: Type.Optional(
    Type.Array(Type.Object({ start: Type.String(), end: Type.String() }), {
      description:
        "Non-instantaneous variables: the interval each value covers, from the store's own steps (absent when " +
        "temporal.window is undecided)",
    }),
  ),
  grid_coordinates: GridCoordinates,
  ingested_lead_hours: Type.Optional(
    Type.Number({
      description:
        "When the store says how far this run is ingested (dynamical.org's ingested_forecast_length): the last " +
        "lead written; values of later leads are null",
    }),
  ),
});

const ExportQuery = Type.Object({
  var: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "Canonical variable name, alias, or the stored name of a variable recognised by its CF meaning",
  }),
  time_index: Type.Integer({ minimum: 0, description: "Index along the time (run) axis" }),
  lead_start: Type.Integer({ minimum: 0, description: "First lead step (index), included" }),
  lead_stop: Type.Integer({
    minimum: 0,
    description:
      "Last lead step (index), included: lead_start=0&lead_stop=2 is three leads. The embedding slices' " +
      "y_stop, x_stop and feature_stop are excluded instead, as Python slices are; each parameter says which.",
  }),
  lat_min: Type.Optional(Lat),
  lat_max: Type.Optional(Lat),
  lon_min: Type.Optional(Lon),
  lon_max: Type.Optional(Lon),
  x_min: Type.Optional(
    Type.Number({
      description:
        "Projected grids only: the box in the grid's own coordinates (the CRS's units, metres or rotated degrees), " +
        "instead of lat_min..lon_max; all four of x_min, x_max, y_min, y_max together",
    }),
  ),
  x_max: Type.Optional(Type.Number({ description: "Projected grids only: see x_min" })),
  y_min: Type.Optional(Type.Number({ description: "Projected grids only: see x_min" })),
  y_max: Type.Optional(Type.Number({ description: "Projected grids only: see x_min" })),
  level: Type.Optional(
    Type.Number({ description: "Level (hPa); required for fields with a level dimension, rejected elsewhere" }),
  ),
  member: Type.Optional(
    Type.String({
      maxLength: 12,
      description:
        "Ensemble member number; default the control member (number 0), or the first member when there is none",
    }),
  ),
  units: Type.Optional(Type.String({ maxLength: 16, default: UNITS_STORED, description: unitsParamDescription })),
});

const GroupIdPath = Type.Object({
  id: Type.String({
    pattern: "^forecast~[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
    description: "Group id in the ~ form (forecast~global)",
  }),
});

const AnyObject = Type.Object({}, { additionalProperties: true });

/** Embedding families of the published catalogue (else the store's); null when neither can be read. */
async function embeddingsListing(app: AppContext) {
  try {
    return embeddingFamilies((await itemKeySpace(app.published, app.store)).names);
  } catch (e) {
    if (e instanceof StoreUnavailableError) return null;
    throw e;
  }
}

interface PointParams {
  lat: number;
  lon: number;
  var: string;
  group?: string;
  run?: string;
  level?: number;
  member?: string;
  units?: string;
}

/** The series in the units asked for (a copy; the stored one is shared with other answers). */
function inUnits(registry: Registry, s: Series, requested: string | undefined): Series {
  if (requested === undefined || requested === UNITS_STORED) return s;
  const choice = chooseUnits(registry.resolve(s.var), s.units, requested);
  if (choice === null) return s;
  const convert = (xs: (number | null)[]) => xs.map((v) => convertValue(choice, v));
  const out: Series = { ...s, values: convert(s.values), units: choice.unit.units };
  if (s.members) out.members = s.members.map((m) => ({ member: m.member, values: convert(m.values) }));
  out.converted_from = choice.from; // last, where pointJson writes it
  return out;
}

export function pointReply(registry: Registry, series: Series, units: string | undefined): Reply {
  const s = inUnits(registry, series, units);
  return { json: s, text: pointJson(s) };
}

/**
 * Replies of warm /point requests by request, per server, each given again only while the store
 * holds the groups and the chunk version it was read from (AnswerMemo): a rewritten chunk, a
 * rebuilt group or a changed list of patches reads afresh. The same text object each time, so
 * its ETag is a lookup that hashes nothing. Bounded in count and in the size of a body kept.
 */
const POINT_MEMO_MAX = 512;
const POINT_MEMO_TEXT = 16_384;
const pointMemos = new WeakMap<AppContext, AnswerMemo<Reply>>();

function pointMemo(app: AppContext): AnswerMemo<Reply> {
  let m = pointMemos.get(app);
  if (!m) {
    m = new AnswerMemo(POINT_MEMO_MAX);
    pointMemos.set(app, m);
  }
  return m;
}

/** Every parameter /point takes: the memo key holds them all, so none can be left out of it. */
const POINT_PARAMS = Object.keys(PointQuery.properties) as (keyof PointParams)[];

/**
 * Memo keys by parsed query: the HTTP layer hands every request with the same query text the same
 * frozen object (app.ts), so its key is built once and every later request looks the memo up with
 * the same string, whose hash V8 has kept, instead of joining and hashing a new one.
 */
const pointKeys = new WeakMap<object, { group: string; key: string | undefined }>();

/** The request as the memo knows it (the group resolved); undefined when a value holds the separator. */
function pointKey(q: PointParams, group: string): string | undefined {
  const kept = pointKeys.get(q);
  if (kept !== undefined && kept.group === group) return kept.key;
  const texts = POINT_PARAMS.map((k) => (k === "group" ? group : String(q[k] ?? "")));
  let key: string | undefined = texts.join("\0");
  for (const t of texts) if (t.includes("\0")) key = undefined;
  // Only a frozen query cannot change after its key was taken.
  if (Object.isFrozen(q)) pointKeys.set(q, { group, key });
  return key;
}

function point(app: AppContext, q: PointParams, group: string): Soon<Reply> {
  const key = pointKey(q, group);
  const memo = pointMemo(app);
  const kept = key === undefined ? undefined : memo.get(app.store, key, app.settings.point_copy !== 0);
  if (kept) return kept;
  const series = pointSeries(app.store, app.registry, { ...q, group }, pointCopies(app));
  return then(series, (s) => {
    const reply = pointReply(app.registry, s, q.units);
    const source = pointSource(s);
    if (key !== undefined && source && "text" in reply && reply.text!.length <= POINT_MEMO_TEXT) {
      memo.set(key, source, Object.freeze(reply));
    }
    return reply;
  });
}

/**
 * What the .npy and GeoTIFF exports share: the box planned against field_export_max_mb (the 413
 * before any chunk is read), the field description in the units asked for, the converted lead
 * slabs (read only when called), and the file name with the format's extension.
 */
async function plannedExport(app: AppContext, query: unknown, params: Record<string, string>, ext: "npy" | "tif") {
  const { units, ...box } = query as Omit<BoxRequest, "group"> & { units?: string };
  const plan = await planBox(
    app.store,
    app.registry,
    { ...box, group: slashId(params.id) },
    app.settings.field_export_max_mb,
  );
  const choice = chooseUnits(plan.variable.entry, plan.variable.units, units);
  if (choice !== null) plan.field = { ...plan.field, units: choice.unit.units, converted_from: choice.from };
  // A GeoTIFF is north-up: a lead sent in bands of rows sends its northern band first.
  const slabs = () =>
    convertSlabs(
      boxLeads(plan, app.settings.read_slab_mb * MIB, app.settings.scan_hold_mb * MIB, ext === "tif", pointCopies(app)),
      choice,
    );
  const filename = `${params.id}_${plan.variable.name}_t${plan.run}_l${plan.leads[0]}-${plan.leads[1]}.${ext}`;
  return { plan, slabs, filename };
}

export const weatherRoutes = [
  route({
    method: "GET",
    path: "/point",
    operationId: "getPoint",
    summary: "Time series at one coordinate",
    description:
      "Reads the one spatial column of the grid node nearest to the point, from the most local regional patch " +
      "that covers it and has the variable (otherwise the requested global group). 404 when the group or the " +
      "variable is not in the store; 400 for a point outside the group's coverage; 503 when the group or the " +
      "store cannot be read right now. Ensemble variables answer the control member (number 0; the first member when there is none) unless `member` says otherwise. " +
      "On a projected or rotated grid (Lambert conformal, rotated pole, polar stereographic; see `grid` in " +
      "/api/models) the point is projected into the grid's CRS, the node nearest by distance on the earth answers " +
      "with its own latitude/longitude in grid_lat/grid_lon, and a point outside the cells (even inside the " +
      "bounding box) is 400; a regional patch is chosen where its cells really cover the point. In a group whose " +
      "variables sit on several grids (`grids` in /api/models) the variable's own grid answers: its nearest node, " +
      "its coverage, and `grid_coordinates` naming it.",
    tags: ["weather"],
    auth: "weather",
    heavy: true,
    query: PointQuery,
    responses: { 200: { description: "Point series", content: { "application/json": { schema: PointSeries } } } },
    // A warm request (groups known, the column's chunk decoded and cached) is answered without
    // a promise; the JSON text is built from pieces kept per variable and run (pointJson).
    handler: ({ app, query }) => {
      const q = query as PointParams;
      const group = q.group ?? defaultGroup(app.store, app.settings.default_forecast_group);
      return then(group, (g) => point(app, q, g));
    },
  }),
  route({
    method: "GET",
    path: "/api/export",
    operationId: "listExports",
    summary: "Exportable groups and fields",
    description:
      "Every group (in the ~ form) with its fields: canonical and stored names, aliases, units, dims, shape, dtype, " +
      "chunking, coordinate ranges and a schema revision that changes whenever the field's layout or encoding changes. " +
      "A group whose variables sit on several grids lists each under `grids` (coordinates, data_dims, kind, bbox, " +
      "lat/lon ranges, variables) and gives each field its `grid_coordinates` and its own dims; the group's own " +
      "coordinates, kind and bbox describe its first grid.",
    tags: ["weather"],
    auth: "weather",
    responses: { 200: { description: "Export catalogue", content: { "application/json": { schema: AnyObject } } } },
    handler: async ({ app, req }) => {
      const { base, headers } = linkBase(app.settings, req);
      const catalogue = await exportCatalogue(app.store);
      // Links on the server's base URL when it is known (one entry per group, never per field).
      const groups = catalogue.groups.map((g) => ({ ...g, npy: `${base}${g.npy}`, tiff: `${base}${g.tiff}` }));
      return { json: { ...catalogue, groups }, headers };
    },
  }),
  route({
    method: "GET",
    path: "/api/export/{id}/npy",
    operationId: "exportNpy",
    summary: "A bounded field as NumPy .npy",
    description:
      "Float32 array with dims (lead_time, lat, lon): latitude ascending, longitude eastward from lon_min. A box " +
      "with lon_min > lon_max crosses the antimeridian and is returned contiguous (longitudes then exceed 180). " +
      "The size is computed before any chunk is read; above field_export_max_mb the answer is 413. The body is " +
      "streamed a few leads at a time; should a read fail after the headers went out, the connection is cut " +
      "short of Content-Length, never left looking complete. The X-SVC-Field header describes names, dims, " +
      "shape, dtype, units and every axis, in one header line of at most 8 KiB: text attributes are cut to 4,096 " +
      "characters with a note, and should it still be longer, lists of more than 8 entries are given as count, " +
      "first and last and named in `omitted`. lat_min, lat_max, lon_min and lon_max are required, except on a projected " +
      "grid selected by x_min..y_max.\n\n" +
      "A projected or rotated grid (HRRR's Lambert conformal, a rotated pole, polar stereographic) exports the " +
      "storage index window that covers the latitude/longitude box (every node whose cell the box touches): dims " +
      "(lead_time, y, x), y ascending, x in storage order. X-SVC-Field then gives `y` and `x` (first/step/count in " +
      "the CRS's units), `window` (the storage index ranges [start, stop) of y and x), `crs` (proj4, crs_wkt, " +
      "grid_mapping_name) and `lat_lon`, which says where the nodes' 2-D latitude/longitude are (the Zarr view " +
      "under /data).\n\n" +
      "In a group whose variables sit on several grids the box selects the variable's own grid, and X-SVC-Field " +
      "says which in `grid_coordinates`. A stored dimension of one entry the values were read at index 0 of " +
      "(MET Norway's height1, GraphCast's batch) is named in `squeezed`. `var` is a registered name or alias, or the " +
      "name the store gives a variable recognised by its CF standard_name.\n\n" +
      "An unstructured or reduced grid (ICON, octahedral reduced Gaussian, anemoi-datasets, HEALPix) exports a " +
      "regular latitude/longitude grid at the cells' nominal step (the largest of 1, 2 or 5 × 10^k degrees not " +
      "above their spacing; nodes on multiples of it inside the box), each node holding the value of its nearest " +
      "cell by great-circle distance; nodes farther than a cell spacing from every cell of a regional grid are " +
      "NaN. X-SVC-Field's `cells` says so (`layout`, `resampled`, `step_deg`). The 413 limit counts the exported " +
      "nodes, and is checked before any node is located or chunk read.",
    tags: ["weather"],
    auth: "weather",
    heavy: true,
    pathParams: GroupIdPath,
    query: ExportQuery,
    responses: {
      200: {
        description: "NumPy .npy body",
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
        headers: npyResponseHeaders,
      },
    },
    handler: async ({ app, query, params }) => {
      const { plan, slabs, filename } = await plannedExport(app, query, params, "npy");
      return {
        npy: {
          header: plan.header,
          bytes: plan.bytes,
          field: plan.field,
          filename,
          chunks: slabs(),
          recycle: recycleSlab,
        },
      };
    },
  }),
  route({
    method: "GET",
    path: "/api/export/{id}/tiff",
    operationId: "exportGeoTiff",
    summary: "A bounded field as GeoTIFF",
    description:
      "The box of /api/export/{id}/npy (the same parameters, key, limit and 413) as a GeoTIFF: one float32 band " +
      "per lead, north-up whatever the store's latitude order, in the grid's CRS (EPSG:4326 for latitude/longitude " +
      "grids; a projected grid in its own projection), NaN as no-data, uncompressed strips. Each band's " +
      "description and metadata give its valid time and lead; the file's metadata the variable, its units and the " +
      "run. A grid a GeoTIFF cannot place exactly (unevenly spaced axes, a rotated pole, a CRS known only by WKT) " +
      "is refused with 400, naming why; the .npy export serves it. The file is streamed as it is read (its size, " +
      "in Content-Length, is the .npy's plus a directory), so its strips are uncompressed: every strip's offset " +
      "is written before the first value is read; a read failing after the headers went out cuts it short.",
    tags: ["weather"],
    auth: "weather",
    heavy: true,
    pathParams: GroupIdPath,
    query: ExportQuery,
    responses: {
      200: {
        description: "GeoTIFF body",
        content: { "image/tiff": { schema: { type: "string", format: "binary" } } },
      },
    },
    handler: async ({ app, query, params }) => {
      const { plan, slabs, filename } = await plannedExport(app, query, params, "tif");
      // Refused before any chunk is read when the grid cannot be written as GeoTIFF; the head holds
      // every strip's offset, so the values go out as they are read, like the .npy's.
      const { head, bytes } = boxGeoTiffHead(plan);
      return {
        npy: {
          header: head,
          bytes,
          filename,
          type: "image/tiff; application=geotiff",
          chunks: northUp(plan, slabs()),
          recycle: recycleSlab,
        },
      };
    },
  }),
  route({
    method: "GET",
    path: "/api/models",
    operationId: "listModels",
    summary: "Available forecast models and embedding families",
    description:
      "Each forecast group with its grid, runs, leads, levels, members and variables, and `unregistered`: each " +
      "stored array left out with the reason and what would serve it. A group whose variables " +
      "sit on several grids (cfgrib hypercubes merged, atmosphere and wave fields in one dataset) also lists " +
      "`grids`: per grid its stored coordinates (`coordinates`: lat/lon names, the grid's key), the names its " +
      "dimensions have under /data (`data_dims`), kind, resolution_deg, bbox, lat/lon ranges and the variables " +
      "on it. Every route reads a variable on its own grid; the group-level kind, resolution_deg and bbox " +
      "describe the first grid.",
    tags: ["catalog"],
    auth: "public",
    responses: { 200: { description: "Models", content: { "application/json": { schema: AnyObject } } } },
    handler: async ({ app }) => ({
      json: { ...(await modelsListing(app.store)), embeddings: await embeddingsListing(app) },
      cache: "public, max-age=60",
    }),
  }),
  route({
    method: "GET",
    path: "/api/registry",
    operationId: "listRegistry",
    summary: "Registered variables with aliases, units and temporal semantics",
    tags: ["catalog"],
    auth: "public",
    responses: { 200: { description: "Registry", content: { "application/json": { schema: AnyObject } } } },
    handler: async ({ app }) => ({
      json: registryListing(app.registry, await app.store.forecastGroups().catch(() => [])),
      cache: "public, max-age=60",
    }),
  }),
];
