// The map layers of a store: every group × registered variable with a map style × level. The
// build names its tiles by these ids and the click-value route resolves them the same way, so a
// click always reads the field the tile was drawn from.
import { InvalidParameterError, NotFoundError, UnsupportedEncodingError } from "../errors.ts";
import { DERIVED_LAYERS, type DerivedLayer } from "../registry/derived.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";

export interface MapLayerRef {
  /** <group name>.<variable>[.<level>], e.g. global.t2m or global.t.500 */
  id: string;
  group: ForecastGroup;
  variable: GroupVariable;
  level: number | null;
  /** Index into group.levels; null for single-level variables. */
  levelIndex: number | null;
  /** Set for a layer computed from several stored variables; `variable` is then its first source. */
  derived?: { def: DerivedLayer; sources: GroupVariable[] };
}

export function layerId(groupName: string, variable: string, level: number | null): string {
  return level === null ? `${groupName}.${variable}` : `${groupName}.${variable}.${level}`;
}

/** The map layers of one group, sorted by id. */
export function groupLayers(group: ForecastGroup): MapLayerRef[] {
  const out: MapLayerRef[] = [];
  for (const v of group.variables.values()) {
    if (!v.entry.style) continue;
    if (v.roles.includes("level")) {
      (group.levels ?? []).forEach((level, levelIndex) => {
        out.push({ id: layerId(group.name, v.name, level), group, variable: v, level, levelIndex });
      });
    } else {
      // A variable on one level it has no dimension for (a scalar level coordinate) is named with it.
      const level = v.scalarLevel?.value ?? null;
      out.push({ id: layerId(group.name, v.name, level), group, variable: v, level, levelIndex: null });
    }
  }
  // Derived layers of single-level sources, wherever the group stores every source.
  for (const def of DERIVED_LAYERS) {
    const sources = def.sources.map((name) => group.variables.get(name));
    if (sources.some((v) => !v || v.roles.includes("level"))) continue;
    const vs = sources as GroupVariable[];
    // Sources on different grids of one group have no common nodes to combine.
    if (vs.some((v) => v.grid !== vs[0].grid)) continue;
    out.push({
      id: layerId(group.name, def.name, null),
      group,
      variable: vs[0],
      level: null,
      levelIndex: null,
      derived: { def, sources: vs },
    });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The error for a registered variable the group stores in an encoding gridcast cannot decode
 * (named with the reason), or undefined when the group does not refuse it.
 */
export function refusal(group: ForecastGroup, variable: string): UnsupportedEncodingError | undefined {
  const u = group.unregistered.find((a) => a.refused?.variable === variable);
  if (!u?.refused) return undefined;
  const err = new UnsupportedEncodingError(
    `${variable} in ${group.id} (stored as ${u.stored}) is not served: ${u.refused.problem}`,
    { variable, group: group.id, stored: u.stored },
  );
  err.logFields = { group: group.id, array: u.stored };
  return err;
}

/** The layer with this id; NotFoundError (404) when no group of the store draws it. */
export async function findMapLayer(store: Store, id: string): Promise<MapLayerRef> {
  // Group names may hold dots too, so every group whose name prefixes the id is a candidate.
  for (const gid of await store.forecastGroupIds()) {
    const name = gid.slice("forecast/".length);
    if (!id.startsWith(`${name}.`)) continue;
    let group: ForecastGroup;
    try {
      group = await store.forecastGroup(gid);
    } catch {
      continue; // an unreadable group has no layers; another group may still draw this one
    }
    const found = groupLayers(group).find((l) => l.id === id);
    if (found) return found;
    const refused = refusal(group, id.slice(name.length + 1).split(".")[0]);
    if (refused) throw refused;
  }
  throw new NotFoundError(`no map layer "${id}"`, { param: "layer" });
}

const TOKEN = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})$/;

/** A run named by an ISO 8601 time (UTC when no zone is given) or a run token (20261120T1200). */
export function parseRunParam(text: string): number {
  const m = TOKEN.exec(text);
  const iso = m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:00Z` : /Z|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`;
  const t = /^\d{4}-\d{2}-\d{2}/.test(iso) ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(t)) {
    throw new InvalidParameterError("run", `run must be an ISO 8601 time or a run token like 20261120T1200`);
  }
  return t;
}

/** Index of a run time in the group; NotFoundError listing the runs there are. */
export function runIndexOf(group: ForecastGroup, t: number): number {
  const i = group.runs.indexOf(t);
  if (i < 0) {
    throw new NotFoundError(`no run at ${isoNoZone(t)} in ${group.id}`, {
      param: "run",
      available: group.runs.map(isoNoZone),
    });
  }
  return i;
}
