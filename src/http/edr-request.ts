// From an EDR request to a query of forecast/edr/: the encoding (f, else Accept), the collection
// and run, the parameters, times, levels and CRS, the geometry of each query kind.
import type { IncomingMessage } from "node:http";
import { BoundedMap } from "../bounded-map.ts";
import { MIB } from "../config.ts";
import { InvalidParameterError, NotFoundError } from "../errors.ts";
import { boxQuery } from "../forecast/edr/box-query.ts";
import { instanceId, OUTPUT_FORMATS, type QueryType } from "../forecast/edr/collections.ts";
import { parseDatetime } from "../forecast/edr/datetime.ts";
import { COVJSON_TYPE, COVJSON_TYPE_OLD, CSV_TYPE, GEOJSON_TYPE } from "../forecast/edr/encode.ts";
import { circleBox, greatCircleKm, inPolygons, WITHIN_UNITS } from "../forecast/edr/geometry.ts";
import { positionQuery, type QueryCommon } from "../forecast/edr/query.ts";
import { parseWkt, polygonsOf, verticesOf } from "../forecast/edr/wkt.ts";
import { parseRunParam, runIndexOf } from "../forecast/layers.ts";
import { slashId, tildeId } from "../forecast/listing.ts";
import { type PointSource, sourceCurrent } from "../forecast/point-source.ts";
import { latestRun, requireGroup } from "../forecast/select.ts";
import type { ForecastGroup } from "../store/store.ts";
import type { AppContext } from "./context.ts";
import { pointCopies } from "./point-copies.ts";
import type { Reply } from "./route.ts";

export type Format = "covjson" | "geojson" | "csv";

/** The encoding: `f` when given, else the first of Accept's types gridcast writes, else CoverageJSON. */
const COVJSON = Object.freeze({ format: "covjson" as const, type: COVJSON_TYPE });

export function chooseFormat(f: string | undefined, req: IncomingMessage): { format: Format; type: string } {
  if (f !== undefined) {
    const k = f.toLowerCase();
    if (k === "coveragejson" || k === "covjson") return { format: "covjson", type: COVJSON_TYPE };
    if (k === "geojson") return { format: "geojson", type: GEOJSON_TYPE };
    if (k === "csv") return { format: "csv", type: CSV_TYPE };
    throw new InvalidParameterError("f", `f must be one of ${OUTPUT_FORMATS.join(", ")}, got "${f.slice(0, 20)}"`);
  }
  const header = req.headers.accept;
  if (header === undefined || header === "*/*") return COVJSON;
  const accept = header
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

function refusal(query: boolean, param: string, message: string, available: string[]) {
  return query
    ? new InvalidParameterError(param, message, { available })
    : new NotFoundError(message, { param, available });
}

/**
 * A collection's group. The metadata of a collection that is not there is 404 (OGC API – Common);
 * a query naming one (`query`) is a request at fault like any other unknown name: 400, naming it
 * and the collections there are.
 */
export async function groupOf(app: AppContext, collectionId: string, query = false): Promise<ForecastGroup> {
  try {
    return await requireGroup(app.store, slashId(collectionId));
  } catch (e) {
    if (e instanceof NotFoundError) {
      const available = ((e.extensions.available as string[] | undefined) ?? []).map(tildeId);
      throw refusal(query, "collectionId", `no collection "${collectionId}"`, available);
    }
    throw e;
  }
}

/** A run by instance id (the latest without one); unknown: 404 for metadata, 400 for a query. */
export function runOf(group: ForecastGroup, instance: string | undefined, query = false): number {
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
    throw refusal(query, "instanceId", `no instance ${instance} of ${tildeId(group.id)}`, group.runs.map(instanceId));
  }
}

export type QueryParams = Record<string, string | number | undefined>;

export async function answer(app: AppContext, type: QueryType, q: QueryParams, group: ForecastGroup, run: number) {
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
      pointCopies(app),
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
      if (parts.length !== 4 && parts.length !== 6) {
        throw new InvalidParameterError(
          "bbox",
          "bbox must be west,south,east,north (4 numbers), or west,south,zmin,east,north,zmax (6)",
        );
      }
      const n = parts.map((p) => {
        if (!/^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(p)) {
          throw new InvalidParameterError("bbox", `bbox: "${p.slice(0, 20)}" is not a number`);
        }
        return Number(p);
      });
      // Six numbers carry the vertical range (levels) between the corners.
      const [w, so, e, no] = n.length === 6 ? [n[0], n[1], n[3], n[4]] : n;
      if (n.length === 6) {
        if (common.z !== undefined) throw new InvalidParameterError("z", "z: the levels are given by bbox already");
        common.z = parseZ(`${n[2]}/${n[5]}`, group);
      }
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

/**
 * Position answers by request (base URL, encoding, URL), per server, each given again only while
 * every series it holds is still what the store holds (sourceCurrent: the same group objects,
 * the same chunk versions), as /point's memo does. Bounded in count and in the size of a body kept.
 */
const ANSWER_MEMO_MAX = 512;
const ANSWER_MEMO_BODY = 65_536;
const answerMemos = new WeakMap<AppContext, BoundedMap<string, { reply: Reply; sources: PointSource[] }>>();

export function keptAnswer(app: AppContext, key: string): Reply | undefined {
  const memo = answerMemos.get(app);
  const e = memo?.get(key);
  if (e === undefined) return undefined;
  for (const s of e.sources) {
    if (!sourceCurrent(app.store, s)) {
      memo!.delete(key);
      return undefined;
    }
  }
  return e.reply;
}

export function keepAnswer(app: AppContext, key: string, sources: PointSource[], reply: Reply): void {
  if (!("body" in reply) || reply.body.length > ANSWER_MEMO_BODY || key.length > 4096) return;
  let memo = answerMemos.get(app);
  if (!memo) {
    memo = new BoundedMap(ANSWER_MEMO_MAX);
    answerMemos.set(app, memo);
  }
  memo.set(key, { reply: Object.freeze(reply), sources });
}
