// EDR queries answered by the engine /point and the box export already are: a position reads
// each point's series through pointSeries() (the same node, patch, run and values /point gives);
// a cube, area or radius (box-query.ts) plans and reads the export's box. The answer is one model
// (coverages of nodes × times × levels) that each encoder (encode.ts) writes.
import { MIB } from "../../config.ts";
import { InvalidParameterError, TooLargeError, UnknownVariableError } from "../../errors.ts";
import type { Registry, VariableEntry } from "../../registry/registry.ts";
import type { ResolvedTemporal } from "../../registry/temporal.ts";
import { isPending, type Soon } from "../../soon.ts";
import { isoNoZone } from "../../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../../store/store.ts";
import { type PointSeries, pointSeries, pointSource } from "../point.ts";
import type { PointCopies } from "../point-copy.ts";
import type { PointSource } from "../point-source.ts";
import { entryIn, requireVariable } from "../select.ts";
import { chooseUnits, convertValue, type UnitsChoice } from "../units-option.ts";
import { type TimeFilter, timeMatches } from "./datetime.ts";
import type { Vertex } from "./wkt.ts";

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
  /**
   * Positions: what every series was read from (point-source.ts), when each was answered at once
   * from one chunk of known version; whatever was made of the answer may be given again while
   * all of them still hold. Undefined otherwise.
   */
  sources?: PointSource[];
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

export interface Resolved {
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

export function levelsOf(group: ForecastGroup, r: Resolved, z: number[] | undefined): number[] | undefined {
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

export function metaOf(r: Resolved): ParamMeta {
  return {
    id: r.entry.name,
    entry: r.entry,
    units: r.choice ? r.choice.unit.units : r.v.units,
    temporal: r.v.temporal,
    ...(r.choice ? { convertedFrom: r.choice.from } : {}),
  };
}

export const zoned = (noZone: string) => `${noZone}Z`;

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
  // Every series asked for at once, so the reads of a cold request go out together; a warm one
  // comes at once (no promise), as on /point.
  const zOf = (p: Vertex) => (perVertex && p.z !== undefined ? [p.z] : q.z);
  const asked: Soon<PointSeries>[] = [];
  for (const p of points) {
    for (const r of resolved) {
      for (const level of levelsOf(q.group, r, zOf(p)) ?? [undefined]) {
        asked.push(
          pointSeries(
            store,
            registry,
            { lat: p.y, lon: p.x, var: r.entry.name, group: q.group.id, run: q.run, level },
            copies,
          ),
        );
      }
    }
  }
  const got: PointSeries[] = asked.some(isPending) ? await Promise.all(asked) : (asked as PointSeries[]);
  // Only series answered at once carry their source (pointSource): an answer is kept when all do.
  let sources: PointSource[] | undefined = asked.some(isPending) ? undefined : [];
  for (const g of got) {
    const source = sources && pointSource(g);
    if (source) sources?.push(source);
    else sources = undefined;
  }
  const coverages: Coverage[] = [];
  let at = 0;
  for (const p of points) {
    const byNode = new Map<string, Coverage>();
    const filter: TimeFilter | undefined =
      perVertex && p.m !== undefined ? { start: p.m * 1000, end: p.m * 1000 } : q.datetime;
    for (const r of resolved) {
      const levels = levelsOf(q.group, r, zOf(p));
      const series = got.slice(at, at + (levels?.length ?? 1));
      at += series.length;
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
  return sources ? { params, coverages, sources } : { params, coverages };
}
