// One EDR answer (query.ts) in each encoding: CoverageJSON (a Coverage, or a CoverageCollection
// for several), EDR GeoJSON (one Point feature per node, time and level) and CSV (one row per
// node, time and level, a column per parameter). All three write each value with the same text,
// the shortest that reads back as the same number, as /point's JSON does; missing is null (empty in CSV).
import type { Answer, Coverage, ParamMeta } from "./query.ts";

export const CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";
export const COVJSON_TYPE = "application/vnd.cov+json";
export const COVJSON_TYPE_OLD = "application/prs.coverage+json";
export const GEOJSON_TYPE = "application/geo+json";
export const CSV_TYPE = "text/csv; charset=utf-8";

// As JSON writes a number (and /point's text does): its shortest round-trip text, null when not finite.
const num = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? "null" : `${v}`);

/** The EDR method of a registry temporal kind (instantaneous, sum, mean, maximum, minimum). */
export function measurementType(p: ParamMeta): { method: string; duration?: string } {
  const t = p.temporal;
  const method = t.kind === "instantaneous" ? "instantaneous" : t.kind === "accumulated" ? "sum" : t.kind;
  const duration = "interval" in t && typeof t.interval === "string" ? t.interval : undefined;
  return duration ? { method, duration } : { method };
}

// The JSON text of each parameter description, kept per registry entry and units (its temporal
// meaning is the group variable's, read once at discovery: the text changes only with the object).
const parameterTexts = new WeakMap<object, Map<string, string>>();

function parameterText(p: ParamMeta): string {
  let byUnits = parameterTexts.get(p.temporal);
  if (!byUnits) {
    byUnits = new Map();
    parameterTexts.set(p.temporal, byUnits);
  }
  const key = `${p.id}\0${p.units}`;
  let text = byUnits.get(key);
  if (text === undefined) {
    text = JSON.stringify(parameterObject(p));
    byUnits.set(key, text);
  }
  return text;
}

/** A parameter as CoverageJSON and EDR GeoJSON describe it. */
export function parameterObject(p: ParamMeta) {
  return {
    type: "Parameter",
    id: p.id,
    description: { en: `${p.entry.long_name}; ${p.temporal.description}` },
    observedProperty: {
      ...(p.entry.standard_name ? { id: `https://vocab.nerc.ac.uk/standard_name/${p.entry.standard_name}/` } : {}),
      label: { en: p.entry.long_name },
    },
    unit: { label: { en: p.units }, symbol: p.units },
    measurementType: measurementType(p),
  };
}

function axisValues(values: readonly (number | string)[]): string {
  return `{"values":${JSON.stringify(values)}}`;
}

const SPACE_TIME = [
  { coordinates: ["x", "y"], system: { type: "GeographicCRS", id: CRS84 } },
  { coordinates: ["t"], system: { type: "TemporalRS", calendar: "Gregorian" } },
];
const REFERENCING = JSON.stringify(SPACE_TIME);
const REFERENCING_Z = JSON.stringify([
  ...SPACE_TIME,
  {
    coordinates: ["z"],
    system: {
      type: "VerticalCRS",
      id: "pressure level, hPa",
      cs: { csAxes: [{ name: { en: "Pressure" }, direction: "down", unit: { symbol: "hPa" } }] },
    },
  },
]);

function domainText(c: Coverage): string {
  const axes =
    c.kind === "nodes"
      ? [
          `"composite":{"dataType":"tuple","coordinates":["x","y"],"values":${JSON.stringify(c.x.map((x, i) => [x, c.y[i]]))}}`,
        ]
      : [`"x":${axisValues(c.x)}`, `"y":${axisValues(c.y)}`];
  if (c.z) axes.push(`"z":${axisValues(c.z)}`);
  axes.push(`"t":${axisValues(c.t)}`);
  const referencing = c.z ? REFERENCING_Z : REFERENCING;
  // A point with levels is a grid of one node (x and y of length one), as CoverageJSON allows.
  const domainType = c.kind === "nodes" ? "MultiPointSeries" : c.kind === "point" && !c.z ? "PointSeries" : "Grid";
  return `{"type":"Domain","domainType":"${domainType}","axes":{${axes.join(",")}},"referencing":${referencing}}`;
}

function rangeText(c: Coverage, values: ArrayLike<number | null>): string {
  const space = c.kind === "nodes" ? ["composite"] : ["y", "x"];
  const spaceShape = c.kind === "nodes" ? [c.x.length] : [c.y.length, c.x.length];
  const axisNames = ["t", ...(c.z ? ["z"] : []), ...space];
  const shape = [c.t.length, ...(c.z ? [c.z.length] : []), ...spaceShape];
  // JSON.stringify writes each number as /point's JSON does (the shortest text of the double) and
  // NaN as null, in one native pass: several times faster than joining the texts here.
  return `{"type":"NdArray","dataType":"float","axisNames":${JSON.stringify(axisNames)},"shape":${JSON.stringify(shape)},"values":${JSON.stringify(Array.from(values))}}`;
}

function coverageText(c: Coverage, params?: string): string {
  const ranges = [...c.ranges].map(([id, v]) => `${JSON.stringify(id)}:${rangeText(c, v)}`);
  const extra = c.requested ? `,"requested":${JSON.stringify(c.requested)}` : "";
  return `{"type":"Coverage","domain":${domainText(c)}${params ?? ""},"ranges":{${ranges.join(",")}}${extra}}`;
}

/** CoverageJSON: one Coverage when the answer is one, else a CoverageCollection. */
export function coverageJson(a: Answer, collection = a.coverages.length !== 1): string {
  const params = `,"parameters":{${[...a.params].map(([id, p]) => `${JSON.stringify(id)}:${parameterText(p)}`).join(",")}}`;
  if (!collection) return coverageText(a.coverages[0], params);
  const kinds = new Set(a.coverages.map((c) => c.kind));
  const domainType =
    kinds.size !== 1 ? undefined : kinds.has("grid") ? "Grid" : kinds.has("nodes") ? "MultiPointSeries" : "PointSeries";
  const dt = domainType ? `,"domainType":"${domainType}"` : "";
  return `{"type":"CoverageCollection"${dt}${params},"coverages":[${a.coverages.map((c) => coverageText(c)).join(",")}]}`;
}

/** Every node, time and level an answer holds (nodes left out of an area or radius skipped). */
function* rows(a: Answer): Generator<{ c: Coverage; x: number; y: number; t: string; z?: number; at: number }> {
  for (const c of a.coverages) {
    const nx = c.x.length;
    const nodes = c.kind === "nodes";
    const plane = nodes ? nx : nx * c.y.length;
    const nz = c.z?.length ?? 1;
    for (let ti = 0; ti < c.t.length; ti++) {
      for (let zi = 0; zi < nz; zi++) {
        for (let k = 0; k < plane; k++) {
          if (c.mask && !c.mask[k]) continue;
          const x = nodes ? c.x[k] : c.x[k % nx];
          const y = nodes ? c.y[k] : c.y[Math.floor(k / nx)];
          const row = { c, x, y, t: c.t[ti], at: (ti * nz + zi) * plane + k };
          yield c.z ? { ...row, z: c.z[zi] } : row;
        }
      }
    }
  }
}

/** EDR GeoJSON: a FeatureCollection, one Point feature per node, time and level, values under properties. */
export function geoJson(a: Answer, endpoint: string): string {
  const features: string[] = [];
  const ids = [...a.params.keys()];
  for (const r of rows(a)) {
    const names = ids.filter((id) => r.c.ranges.has(id));
    const coords = r.z === undefined ? [r.x, r.y] : [r.x, r.y, r.z];
    let props = `"datetime":"${r.t}","parameter-name":${JSON.stringify(names)},"label":"${r.y}, ${r.x}","edrqueryendpoint":${JSON.stringify(endpoint)}`;
    if (r.z !== undefined) props += `,"z":${r.z}`;
    for (const id of names) props += `,${JSON.stringify(id)}:${num(r.c.ranges.get(id)![r.at])}`;
    features.push(
      `{"type":"Feature","geometry":{"type":"Point","coordinates":${JSON.stringify(coords)}},"properties":{${props}}}`,
    );
  }
  const params = JSON.stringify([...a.params.values()].map(parameterObject));
  return `{"type":"FeatureCollection","parameters":${params},"numberReturned":${features.length},"features":[${features.join(",")}]}`;
}

/** CSV: lon,lat,datetime (z when levels are asked) and a column per parameter; missing values empty. */
export function csv(a: Answer): string {
  const ids = [...a.params.keys()];
  const withZ = a.coverages.some((c) => c.z);
  const lines = [["lon", "lat", "datetime", ...(withZ ? ["z"] : []), ...ids].join(",")];
  for (const r of rows(a)) {
    const cells = [`${r.x}`, `${r.y}`, r.t];
    if (withZ) cells.push(r.z === undefined ? "" : `${r.z}`);
    for (const id of ids) {
      const v = r.c.ranges.get(id)?.[r.at];
      cells.push(v === null || v === undefined || !Number.isFinite(v) ? "" : `${v}`);
    }
    lines.push(cells.join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
