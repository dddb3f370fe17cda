// Resolving what a request names: the group, the variable in it, the run, the level, and for a
// point the most local regional patch that covers it.
import { InvalidParameterError, NotFoundError, UnknownVariableError } from "../errors.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import { didYouMean, MAX_SUGGESTIONS, suggestAmong } from "../registry/suggest.ts";
import { leadIntervals } from "../registry/temporal.ts";
import { isPending, type Soon, then } from "../soon.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import { covers } from "./grid-select.ts";
import { parseRunParam, refusal, runIndexOf } from "./layers.ts";

export const GROUP_ID = /^forecast\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * A group that must exist for the request: a group the store does not have is 404 (as on every
 * route); one it has but cannot read right now is 503. At once when the store has the group in hand.
 */
export function requireGroup(store: Store, id: string): Soon<ForecastGroup> {
  if (!GROUP_ID.test(id)) throw new InvalidParameterError("group", `group must look like forecast/<name>, got "${id}"`);
  let group: Soon<ForecastGroup>;
  try {
    group = store.forecastGroup(id);
  } catch (e) {
    return notFound(store, id, e);
  }
  return isPending(group) ? group.catch((e: unknown) => notFound(store, id, e)) : group;
}

/** A group the store does not have, named with the ones it has; any other error as it is. */
async function notFound(store: Store, id: string, e: unknown): Promise<never> {
  if (e instanceof NotFoundError) {
    let available: string[] = [];
    try {
      available = await store.forecastGroupIds();
    } catch {
      // the listing is a courtesy: the 404 stands without it
    }
    throw new NotFoundError(`no forecast group "${id}"`, { param: "group", available });
  }
  throw e;
}

/**
 * The group a request without a group names: the default_forecast_group setting, or the only
 * group of a store that has exactly one (a store holding one dataset at its root).
 */
export function defaultGroup(store: Store, configured: string): Soon<string> {
  return then(store.forecastGroupIds(), (ids) => (!ids.includes(configured) && ids.length === 1 ? ids[0] : configured));
}

/**
 * Member index for a variable: the control member by default, a member number, or "all".
 * Undefined for variables without a member dimension (where a member is refused).
 */
export function resolveMember(
  group: ForecastGroup,
  v: GroupVariable,
  member: string | undefined,
): number | "all" | undefined {
  if (!v.roles.includes("member")) {
    // One member saved alone (a scalar realization coordinate): asking for it is asking for all there is.
    const only = v.scalarMember;
    if (member !== undefined && !(only !== undefined && /^-?\d+$/.test(member.trim()) && Number(member) === only)) {
      throw new InvalidParameterError(
        "member",
        only === undefined
          ? `${v.name} has no ensemble member dimension`
          : `${v.name} holds only member ${only} (a scalar member coordinate)`,
        only === undefined ? {} : { available: [only] },
      );
    }
    return undefined;
  }
  const members = group.members ?? [];
  if (member === undefined) return group.controlMember ?? 0;
  if (member === "all") return "all";
  const n = /^-?\d+$/.test(member.trim()) ? Number(member) : Number.NaN;
  const i = members.indexOf(n);
  if (i < 0) {
    throw new InvalidParameterError("member", `member must be "all" or one of ${members.join(", ")}`, {
      available: members,
    });
  }
  return i;
}

/**
 * A lead past what the store has ingested for the run (dynamical.org's ingested_forecast_length)
 * is not there yet: 404 naming the parameter and how far the run goes, never leftovers as data.
 */
export function notIngested(group: ForecastGroup, run: number, hours: number, param: string): void {
  const ingested = group.ingested?.[run];
  if (ingested !== undefined && hours > ingested) {
    throw new NotFoundError(
      `lead ${hours} h of run ${isoNoZone(group.runs[run])} is not ingested yet (the store has up to ${ingested} h)`,
      { param, ingested_lead_hours: ingested },
    );
  }
}

/** The interval each lead's value covers in one run, as ISO strings; undefined for instantaneous values. */
export function intervalsOf(
  group: ForecastGroup,
  v: GroupVariable,
  run: number,
): { start: string; end: string }[] | undefined {
  const runTime = group.runs[run];
  let previous: number | undefined;
  if (group.analysis) {
    // An analysis's window reaches back to the previous stored time.
    const earlier = group.runs.filter((t) => t < runTime);
    const later = group.runs.filter((t) => t > runTime);
    previous = earlier.length
      ? Math.max(...earlier)
      : later.length
        ? runTime - (Math.min(...later) - runTime)
        : undefined;
  }
  const spans = leadIntervals(v.temporal, runTime, group.leads, previous);
  return spans?.map((s) => ({ start: isoNoZone(s.start), end: isoNoZone(s.end) }));
}

/**
 * The registry entry a requested name means in a group: a registered name or alias, else the
 * stored name of one of the group's variables (an array known by its CF meaning stays answerable
 * as its producer named it). An unknown name throws the registry's refusal with suggestions.
 */
export function entryIn(registry: Registry, group: ForecastGroup, name: string): VariableEntry {
  const known = registry.lookup(name);
  if (known) return known;
  const key = name.trim().toLowerCase();
  // A total in two parts (WRF's RAINC + RAINNC) answers to its canonical name, not to one part's.
  for (const v of group.variables.values()) if (v.stored.toLowerCase() === key && !v.plus) return v.entry;
  const suggestions = servedSuggestions(group, name);
  throw new UnknownVariableError(`"${name}" is not a variable of ${group.id}${didYouMean(suggestions)}`, {
    param: "var",
    suggestions,
    available: [...group.variables.keys()].sort(),
  });
}

/**
 * For a registered variable the group lacks: the group's variables of the same CF standard name
 * (a gust maximum where the store has instantaneous gusts), then the nearest by name.
 */
function sameMeaning(group: ForecastGroup, entry: VariableEntry): string[] {
  const same = entry.standard_name
    ? [...group.variables.values()].filter((v) => v.entry.standard_name === entry.standard_name).map((v) => v.name)
    : [];
  return [...new Set([...same.sort(), ...servedSuggestions(group, entry.name)])].slice(0, MAX_SUGGESTIONS);
}

/** The group's variables nearest to a name, by meaning and by spelling (registry/suggest.ts). */
export function servedSuggestions(group: ForecastGroup, name: string, skip?: string): string[] {
  const served = [...group.variables.values()]
    .filter((v) => v.name !== skip)
    .map((v) => ({ ...v.entry, stored: v.stored }));
  return suggestAmong(name, served);
}

export function requireVariable(group: ForecastGroup, entry: VariableEntry): GroupVariable {
  const v = group.variables.get(entry.name);
  if (!v) {
    const refused = refusal(group, entry.name);
    if (refused) throw refused;
    // Arrays that claimed the variable and were refused (two of them): say why, not just "absent".
    const contested = group.unregistered.filter((u) => u.contested === entry.name);
    const why = contested.length ? `: ${contested.map((u) => `${u.stored} (${u.reason})`).join("; ")}` : "";
    const suggestions = sameMeaning(group, entry);
    throw new UnknownVariableError(`${entry.name} is not in ${group.id}${why}${didYouMean(suggestions)}`, {
      param: "var",
      suggestions,
      available: [...group.variables.keys()].sort(),
    });
  }
  return v;
}

/** Run index from an index ("0") or an ISO time ("2026-11-20T12:00"); default the latest run. */
export function resolveRun(group: ForecastGroup, run: string | number | undefined): number {
  if (run === undefined) return latestRun(group);
  const text = String(run);
  if (/^\d+$/.test(text)) {
    const i = Number(text);
    if (i >= group.runs.length) {
      throw new InvalidParameterError("run", `run index ${i} is out of range (0..${group.runs.length - 1})`);
    }
    return i;
  }
  if (/^[+-]\d+$/.test(text)) {
    throw new InvalidParameterError("run", `run index must be 0..${group.runs.length - 1}, got ${text}`);
  }
  // The same strict reading as the map routes: a date is required, so "-1" or "7" is never a year.
  return runIndexOf(group, parseRunParam(text));
}

export function latestRun(group: ForecastGroup): number {
  let best = 0;
  for (let i = 1; i < group.runs.length; i++) if (group.runs[i] > group.runs[best]) best = i;
  return best;
}

/** Words of a long name that say where on the vertical, not what. */
const LEVEL_WORDS = new Set(["on", "pressure", "levels", "level", "model", "height", "above", "ground", "isobaric"]);

/** Level index for a variable: required where the variable has levels, rejected elsewhere. */
export function resolveLevel(group: ForecastGroup, v: GroupVariable, level: number | undefined): number | undefined {
  const hasLevel = v.roles.includes("level");
  if (!hasLevel) {
    // A variable stored on one level (a scalar level coordinate) takes that level, and only that.
    const only = v.scalarLevel?.value;
    if (level !== undefined && level !== only) {
      throw new InvalidParameterError(
        "level",
        only === undefined ? `${v.name} has no level dimension` : `${v.name} is stored at level ${only} only`,
        only === undefined ? {} : { available: [only] },
      );
    }
    return undefined;
  }
  const levels = group.levels ?? [];
  if (level === undefined) {
    // "temperature" names the pressure-level temperature; the group's surface ones are named too:
    // those whose names carry the words of this one's meaning, its level words left out.
    const meaning = v.entry.long_name
      .toLowerCase()
      .split(/[^a-z]+/)
      .filter((w) => w.length >= 3 && !LEVEL_WORDS.has(w))
      .join(" ");
    const surface = suggestAmong(
      meaning,
      [...group.variables.values()]
        .filter((o) => !o.roles.includes("level"))
        .map((o) => ({ ...o.entry, stored: o.stored })),
    );
    const also = surface.length ? `; at the surface: ${surface.join(", ")}` : "";
    throw new InvalidParameterError("level", `${v.name} needs a level (one of ${levels.join(", ")})${also}`, {
      available: levels,
      ...(surface.length ? { suggestions: surface } : {}),
    });
  }
  const i = levels.indexOf(level);
  if (i < 0)
    throw new InvalidParameterError("level", `level ${level} is not one of ${levels.join(", ")}`, {
      available: levels,
    });
  return i;
}

/**
 * The most local regional patch among `groups` (the store's readable groups) that covers the
 * point, has the variable and the wanted run: finest grid first, then smallest area. Undefined
 * when none does.
 */
export function bestPatch(
  groups: readonly ForecastGroup[],
  entry: VariableEntry,
  runTime: number,
  lat: number,
  lon: number,
): ForecastGroup | undefined {
  const candidates: ForecastGroup[] = [];
  // Each patch is judged on the grid its variable sits on (a group may hold several grids).
  const gridOf = (g: ForecastGroup) => g.variables.get(entry.name)!.grid;
  for (const g of groups) {
    const v = g.variables.get(entry.name);
    if (!v || v.grid.global || !g.runs.includes(runTime)) continue;
    if (covers(v.grid, lat, lon)) candidates.push(g);
  }
  const cell = (g: ForecastGroup) => gridOf(g).dlat * gridOf(g).dlon;
  const area = (g: ForecastGroup) => {
    const [w, s, e, n] = gridOf(g).bbox;
    return (e - w) * (n - s);
  };
  candidates.sort((a, b) => cell(a) - cell(b) || area(a) - area(b) || a.id.localeCompare(b.id));
  return candidates[0];
}
