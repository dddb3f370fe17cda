// EDR queries answered by the engine /point and the box export already are: a position reads
// each point's series through pointSeries() (the same node, patch, run and values /point gives);
// a cube, area or radius plans and reads a box through planBox()/boxLeads() (the same nodes and
// values the .npy export gives), an area or a radius then leaving out the nodes outside it.
// The answer is one model (coverages of nodes × times × levels) that each encoder writes.
import { MIB } from "../../config.ts";
import { InvalidParameterError, TooLargeError, UnknownVariableError } from "../../errors.ts";
import { recycleSlab } from "../../read-ahead.ts";
import type { Registry, VariableEntry } from "../../registry/registry.ts";
import type { ResolvedTemporal } from "../../registry/temporal.ts";
import { isoNoZone } from "../../store/describe.ts";
import type { GridProjection } from "../../store/projected-grid.ts";
import type { ForecastGroup, GroupVariable, Store } from "../../store/store.ts";
import { type BoxPlan, boxLeads, planBox } from "../box.ts";
import { nodePosition } from "../grid-projected.ts";
import { pointSeries } from "../point.ts";
import type { PointCopies } from "../point-copy.ts";
import { entryIn, requireVariable } from "../select.ts";
import { chooseUnits, convertValue, type UnitsChoice } from "../units-option.ts";
import { type TimeFilter, timeMatches } from "./datetime.ts";
import type { Vertex } from "./wkt.ts";

/** Mean earth radius (IUGG), km: radius distances are great-circle on this sphere. */
export const EARTH_RADIUS_KM = 6371.0088;
export const WITHIN_UNITS: Record<string, number> = { km: 1, mi: 1.609344, m: 0.001 };

/** What a parameter of an answer is: its canonical name, units and meaning. */
export interface ParamMeta {
  id: string;
  entry: VariableEntry;
  units: string;
  temporal: ResolvedTemporal;
  /** Set when a `units` option converted the values from the stored units. */
  convertedFrom?: string;
}

/** Values of one coverage: nodes (x, y), times and levels, each parameter laid out (t, z, y, x). */
export interface Coverage {
  /**
   * "grid": x and y are axes (every x at every y); "nodes": x[k], y[k] place node k (a projected
   * grid's nodes); "point": one node.
   */
  kind: "point" | "grid" | "nodes";
  x: number[];
  y: number[];
  /** "nodes": the index of each node in its window's (y, x) plane. */
  picked?: Int32Array;
  /** Valid times, RFC 3339 (UTC, Z). */
  t: string[];
  /** Levels, when the parameters have them. */
  z?: number[];
  /** Parameter id → values (t, z, y, x), or (t, z, node), in row-major order; NaN and null are missing. */
  ranges: Map<string, ArrayLike<number | null>>;
  /** Area and radius: per node (y, x) 1 where it is inside, 0 where it is left out. */
  mask?: Uint8Array;
  /** A position's request point (the node answering it is x[0], y[0]). */
  requested?: { lon: number; lat: number };
}

export interface Answer {
  params: Map<string, ParamMeta>;
  coverages: Coverage[];
}

export interface QueryCommon {
  group: ForecastGroup;
  run: number;
  /** Canonical names or aliases; empty: every parameter of the group. */
  names: string[];
  datetime?: TimeFilter;
  /** Levels asked for; undefined: every level of a levelled parameter. */
  z?: number[];
  units?: string;
}

interface Resolved {
  entry: VariableEntry;
  v: GroupVariable;
  choice: UnitsChoice;
}

/** The parameters asked for (aliases resolved, each once), in request order. */
export function resolveParams(registry: Registry, q: QueryCommon): Resolved[] {
  const names = q.names.length ? q.names : [...q.group.variables.keys()];
  const out = new Map<string, Resolved>();
  for (const name of names) {
    let entry: VariableEntry;
    let v: GroupVariable;
    try {
      entry = entryIn(registry, q.group, name);
      v = requireVariable(q.group, entry);
    } catch (e) {
      // A parameter the collection does not hold is a fault of the request (400), named as EDR names it.
      if (e instanceof UnknownVariableError) {
        throw new InvalidParameterError("parameter-name", `parameter-name: ${e.message}`, {
          ...e.extensions,
          param: "parameter-name",
        });
      }
      throw e;
    }
    if (out.has(entry.name)) continue;
    out.set(entry.name, { entry, v, choice: chooseUnits(entry, v.units, q.units) });
  }
  if (q.z !== undefined && ![...out.values()].some((r) => r.v.roles.includes("level"))) {
    throw new InvalidParameterError("z", "z: none of the parameters asked for has levels");
  }
  return [...out.values()];
}

function levelsOf(group: ForecastGroup, r: Resolved, z: number[] | undefined): number[] | undefined {
  if (!r.v.roles.includes("level")) return undefined;
  const levels = group.levels ?? [];
  if (z === undefined) return levels;
  for (const l of z) {
    if (!levels.includes(l)) {
      throw new InvalidParameterError("z", `z: level ${l} is not one of ${levels.join(", ")}`, { available: levels });
    }
  }
  return z;
}

function metaOf(r: Resolved): ParamMeta {
  return {
    id: r.entry.name,
    entry: r.entry,
    units: r.choice ? r.choice.unit.units : r.v.units,
    temporal: r.v.temporal,
    ...(r.choice ? { convertedFrom: r.choice.from } : {}),
  };
}

const zoned = (noZone: string) => `${noZone}Z`;

/** Positions (POINT, MULTIPOINT, a trajectory's vertices): each point's series as /point reads it. */
export async function positionQuery(
  store: Store,
  registry: Registry,
  q: QueryCommon,
  points: Vertex[],
  limitMb: number,
  copies?: PointCopies,
  /** Trajectory: each vertex's own time (its M) and level (its Z) instead of the query's. */
  perVertex = false,
): Promise<Answer> {
  const resolved = resolveParams(registry, q);
  const params = new Map(resolved.map((r) => [r.entry.name, metaOf(r)]));
  // Sized before anything is read: one value per point, parameter, level and lead.
  let count = 0;
  for (const r of resolved) count += points.length * (levelsOf(q.group, r, q.z)?.length ?? 1) * q.group.leads.length;
  if (count * 4 > limitMb * MIB) {
    throw new TooLargeError(
      `the answer would hold ${count} values, above the ${limitMb} MiB limit`,
      count * 4,
      limitMb,
      "ask for fewer positions, parameters, levels or times",
    );
  }
  const coverages: Coverage[] = [];
  for (const p of points) {
    const byNode = new Map<string, Coverage>();
    const filter: TimeFilter | undefined =
      perVertex && p.m !== undefined ? { start: p.m * 1000, end: p.m * 1000 } : q.datetime;
    const z = perVertex && p.z !== undefined ? [p.z] : q.z;
    for (const r of resolved) {
      const levels = levelsOf(q.group, r, z);
      const series = await Promise.all(
        (levels ?? [undefined]).map((level) =>
          pointSeries(
            store,
            registry,
            { lat: p.y, lon: p.x, var: r.entry.name, group: q.group.id, run: q.run, level },
            copies,
          ),
        ),
      );
      const first = series[0];
      const keep: number[] = [];
      for (let i = 0; i < first.times.length; i++) {
        if (timeMatches(filter, Date.parse(zoned(first.times[i])))) keep.push(i);
      }
      if (perVertex && p.m !== undefined && keep.length === 0) {
        throw new InvalidParameterError(
          "coords",
          `coords: the vertex time M=${p.m} (${isoNoZone(p.m * 1000)}Z) is not a valid time of this run`,
        );
      }
      if (keep.length === 0) continue;
      const key = `${first.grid_lat},${first.grid_lon}|${keep.map((i) => first.times[i]).join()}|${levels ?? ""}`;
      let c = byNode.get(key);
      if (!c) {
        c = {
          kind: "point",
          x: [first.grid_lon],
          y: [first.grid_lat],
          t: keep.map((i) => zoned(first.times[i])),
          ...(levels ? { z: levels } : {}),
          ranges: new Map(),
          requested: { lon: p.x, lat: p.y },
        };
        byNode.set(key, c);
      }
      // (t, z): a variable without a lead axis holds one value for every lead (as the export repeats it).
      const nz = levels?.length ?? 1;
      const out = new Array<number | null>(keep.length * nz);
      for (let k = 0; k < keep.length; k++) {
        for (let l = 0; l < nz; l++) {
          const vals = series[l].values;
          out[k * nz + l] = convertValue(r.choice, vals.length === 1 ? vals[0] : vals[keep[k]]);
        }
      }
      c.ranges.set(r.entry.name, out);
    }
    coverages.push(...byNode.values());
  }
  return { params, coverages };
}

/** Which nodes of a box an area or radius keeps. */
export type NodeTest = (lat: number, lon: number) => boolean;

export interface BoxQuery extends QueryCommon {
  latMin: number;
  latMax: number;
  lonMin: number;
  lonMax: number;
  /** Area and radius: the nodes kept (the others are left out as missing). */
  keep?: NodeTest;
}

/** Lead indices [first, last] of the group whose valid times the filter keeps (contiguous: one run). */
function leadRange(group: ForecastGroup, run: number, f: TimeFilter | undefined): [number, number] | undefined {
  let first = -1;
  let last = -1;
  for (let i = 0; i < group.leads.length; i++) {
    if (timeMatches(f, group.runs[run] + group.leads[i] * 3_600_000)) {
      if (first < 0) first = i;
      last = i;
    }
  }
  return first < 0 ? undefined : [first, last];
}

/**
 * A cube, area or radius: per parameter (and level) the box planned as the .npy export plans it
 * (the 413 before any chunk is read, here over the whole answer) and read as it reads it.
 * Undefined for an empty intersection (no valid time, no node in the box, none kept).
 */
export async function boxQuery(
  store: Store,
  registry: Registry,
  q: BoxQuery,
  limitMb: number,
  slabBytes: number,
  scanBytes: number,
): Promise<Answer | undefined> {
  const resolved = resolveParams(registry, q);
  const params = new Map(resolved.map((r) => [r.entry.name, metaOf(r)]));
  const leads = leadRange(q.group, q.run, q.datetime);
  if (!leads) return undefined;
  const plans: { r: Resolved; level: number | undefined; plan: BoxPlan }[] = [];
  let bytes = 0;
  for (const r of resolved) {
    for (const level of levelsOf(q.group, r, q.z) ?? [undefined]) {
      let plan: BoxPlan;
      try {
        plan = await planBox(
          store,
          registry,
          {
            group: q.group.id,
            var: r.entry.name,
            time_index: q.run,
            lead_start: leads[0],
            lead_stop: leads[1],
            lat_min: q.latMin,
            lat_max: q.latMax,
            lon_min: q.lonMin,
            lon_max: q.lonMax,
            level,
          },
          limitMb,
        );
      } catch (e) {
        // A box holding no node of the grid is an empty intersection, not a fault of the request.
        if (e instanceof InvalidParameterError && /holds no/.test(e.message)) return undefined;
        throw e;
      }
      bytes += plan.bytes;
      plans.push({ r, level, plan });
    }
  }
  if (bytes > limitMb * MIB) {
    throw new TooLargeError(
      `the answer would be ${(bytes / MIB).toFixed(1)} MiB of values, above the ${limitMb} MiB limit`,
      bytes,
      limitMb,
      "narrow the box, the times, the levels or the parameters",
    );
  }
  const t = q.group.leads
    .slice(leads[0], leads[1] + 1)
    .map((h) => zoned(isoNoZone(q.group.runs[q.run] + h * 3_600_000)));
  // One coverage per grid the parameters' boxes lie on (a group may hold several) and level set.
  const coverages = new Map<string, Coverage>();
  const kept = new Map<string, Uint8Array>();
  for (const r of resolved) {
    const mine = plans.filter((p) => p.r === r);
    const sel = mine[0].plan.sel;
    const levels = mine[0].level === undefined ? undefined : mine.map((p) => q.group.levels![p.level!]);
    const key = `${sel.lats.join()}|${sel.lons.join()}|${levels ?? ""}`;
    let c = coverages.get(key);
    const proj = r.v.grid.projection;
    if (!c && proj) {
      // A projected or curvilinear window: each node placed by its own latitude/longitude, the
      // nodes the box, polygon or circle does not hold left out.
      c = projectedNodes(proj, mine[0].plan, t, levels, q.keep ?? inBox(q));
      if (!c) return undefined;
      coverages.set(key, c);
    }
    if (!c) {
      c = { kind: "grid", x: sel.lons, y: sel.lats, t, ...(levels ? { z: levels } : {}), ranges: new Map() };
      coverages.set(key, c);
      if (q.keep) {
        const mask = new Uint8Array(sel.lats.length * sel.lons.length);
        let any = false;
        for (let iy = 0; iy < sel.lats.length; iy++) {
          for (let ix = 0; ix < sel.lons.length; ix++) {
            if (q.keep(sel.lats[iy], sel.lons[ix])) {
              mask[iy * sel.lons.length + ix] = 1;
              any = true;
            }
          }
        }
        if (!any) return undefined;
        kept.set(key, mask);
        c.mask = mask;
      }
    }
    const ny = sel.lats.length;
    const nx = sel.lons.length;
    const nz = mine.length;
    const plane = ny * nx;
    const out = new Float32Array(t.length * nz * plane);
    const mask = kept.get(key);
    for (let zi = 0; zi < nz; zi++) {
      let lead = 0;
      let at = 0;
      // Slabs come in lead order, whole leads (or bands of rows of one lead, south first).
      for await (const slab of boxLeads(mine[zi].plan, slabBytes, scanBytes)) {
        if (nz === 1) {
          out.set(slab, lead * plane + at);
          at += slab.length;
          recycleSlab(slab);
          lead += Math.floor(at / plane);
          at %= plane;
          continue;
        }
        for (let k = 0; k < slab.length; k++) {
          const node = at + k;
          const v = slab[k];
          out[(lead + Math.floor(node / plane)) * nz * plane + zi * plane + (node % plane)] = v;
        }
        at += slab.length;
        lead += Math.floor(at / plane);
        at %= plane;
        recycleSlab(slab);
      }
    }
    if (r.choice) for (let i = 0; i < out.length; i++) out[i] = convertValue(r.choice, out[i]) as number;
    if (c.picked) {
      c.ranges.set(r.entry.name, pick(out, plane, c.picked));
      continue;
    }
    if (mask) for (let i = 0; i < out.length; i++) if (!mask[i % plane]) out[i] = Number.NaN;
    c.ranges.set(r.entry.name, out);
  }
  return { params, coverages: [...coverages.values()] };
}

/** The cube's test: latitude within, longitude within (across the antimeridian when west > east). */
function inBox(q: BoxQuery): NodeTest {
  const span = (((q.lonMax - q.lonMin) % 360) + 360) % 360;
  const full = q.lonMax - q.lonMin >= 360;
  return (lat, lon) =>
    lat >= q.latMin && lat <= q.latMax && (full || (((lon - q.lonMin) % 360) + 360) % 360 <= span + 1e-9);
}

/** The nodes of a projected window a test keeps, each with its latitude/longitude; undefined for none. */
function projectedNodes(
  p: GridProjection,
  plan: BoxPlan,
  t: string[],
  levels: number[] | undefined,
  keep: NodeTest,
): Coverage | undefined {
  const { rows, cols, flipRows } = plan.sel;
  const [, ny, nx] = plan.shape;
  const x: number[] = [];
  const y: number[] = [];
  const picked: number[] = [];
  for (let oy = 0; oy < ny; oy++) {
    const iy = flipRows ? rows[1] - 1 - oy : rows[0] + oy;
    for (let ox = 0; ox < nx; ox++) {
      const [lat, lon] = nodePosition(p, cols[0][0] + ox, iy);
      if (!keep(lat, lon)) continue;
      x.push(lon);
      y.push(lat);
      picked.push(oy * nx + ox);
    }
  }
  if (picked.length === 0) return undefined;
  return {
    kind: "nodes",
    x,
    y,
    t,
    ...(levels ? { z: levels } : {}),
    ranges: new Map(),
    picked: Int32Array.from(picked),
  };
}

/** The picked nodes of each (t, z) plane of `plane` values, in order. */
function pick(values: Float32Array, plane: number, picked: Int32Array): Float32Array {
  const planes = values.length / plane;
  const out = new Float32Array(planes * picked.length);
  for (let k = 0; k < planes; k++) {
    for (let i = 0; i < picked.length; i++) out[k * picked.length + i] = values[k * plane + picked[i]];
  }
  return out;
}

/** Great-circle distance in km between two points in degrees (haversine). */
export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** The lat/lon box around a circle of `km` about a point (a pole inside it: every longitude). */
export function circleBox(lat: number, lon: number, km: number) {
  const d = km / EARTH_RADIUS_KM;
  const deg = 180 / Math.PI;
  const latMin = Math.max(-90, lat - d * deg);
  const latMax = Math.min(90, lat + d * deg);
  const c = Math.cos(lat / deg);
  if (latMax >= 90 || latMin <= -90 || Math.sin(d) >= c) return { latMin, latMax, lonMin: -180, lonMax: 180 };
  const dLon = Math.asin(Math.sin(d) / c) * deg;
  if (dLon >= 180) return { latMin, latMax, lonMin: -180, lonMax: 180 };
  const w = ((((lon - dLon + 180) % 360) + 360) % 360) - 180;
  let e = w + 2 * dLon;
  if (e > 180) e -= 360;
  return { latMin, latMax, lonMin: w, lonMax: e };
}

/** Even-odd test of a point against polygons (outer ring and holes), longitudes taken as given. */
export function inPolygons(polygons: Vertex[][][], lat: number, lon: number): boolean {
  const test = (x: number) => {
    let inside = false;
    for (const rings of polygons) {
      let inThis = false;
      for (const ring of rings) {
        for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
          const a = ring[i];
          const b = ring[j];
          if (a.y > lat !== b.y > lat && x < ((b.x - a.x) * (lat - a.y)) / (b.y - a.y) + a.x) inThis = !inThis;
        }
      }
      if (inThis) inside = true;
    }
    return inside;
  };
  // A polygon written in 0..360 or across 180 still meets nodes numbered -180..180.
  return test(lon) || test(lon + 360) || test(lon - 360);
}
