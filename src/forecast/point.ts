// Point series: the nearest node of the most local group, one spatial column read.
import { InvalidParameterError } from "../errors.ts";
import type { Registry } from "../registry/registry.ts";
import type { ResolvedTemporal } from "../registry/temporal.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import { covers, nearestNode } from "./grid-select.ts";
import { readValues, regionOf } from "./read.ts";
import {
  choosePatch,
  choosePatchNow,
  intervalsOf,
  requireGroup,
  requireGroupNow,
  requireVariable,
  resolveLevel,
  resolveMember,
  resolveRun,
} from "./select.ts";

export interface PointRequest {
  lat: number;
  lon: number;
  var: string;
  group: string;
  run?: string | number;
  level?: number;
  /** Ensemble member number, or "all"; default the control member. */
  member?: string;
}

export interface PointSeries {
  var: string;
  lat: number;
  lon: number;
  times: readonly string[];
  values: (number | null)[];
  source: "global" | "regional";
  region: string | null;
  group: string;
  units: string;
  grid_lat: number;
  grid_lon: number;
  run: string;
  lead_hours: number[];
  level: number | null;
  /** Ensemble member of `values`; null when the variable has no member dimension. */
  member: number | null;
  /** With member=all: every member's series, in member order. */
  members?: { member: number; values: (number | null)[] }[];
  temporal: ResolvedTemporal;
  /** For non-instantaneous variables: the interval [start, end] each value covers (end = its time). */
  intervals?: readonly { start: string; end: string }[];
}

/** The region of one spatial column for one run (and level, member or members), all lead times. */
export function columnRegion(
  group: ForecastGroup,
  v: GroupVariable,
  run: number,
  level: number | undefined,
  iy: number,
  ix: number,
  member?: number | [number, number],
) {
  return regionOf(group, v, { run, level, member, lat: iy, lon: ix });
}

const nullable = (x: number) => (Number.isNaN(x) ? null : x);

export async function pointSeries(store: Store, registry: Registry, req: PointRequest): Promise<PointSeries> {
  if (!(req.lat >= -90 && req.lat <= 90)) throw new InvalidParameterError("lat", "lat must be within -90..90");
  if (!(req.lon >= -180 && req.lon <= 360)) throw new InvalidParameterError("lon", "lon must be within -180..360");
  const entry = registry.resolve(req.var);
  // Warm requests find the groups in hand and take no detour through promises for them.
  const requested = requireGroupNow(store, req.group) ?? (await requireGroup(store, req.group));
  const v0 = requireVariable(requested, entry);
  const runIndex = resolveRun(requested, req.run);
  const runTime = requested.runs[runIndex];

  let group: ForecastGroup = requested;
  let v = v0;
  if (requested.grid.global) {
    const now = choosePatchNow(store, requested, entry, runTime, req.lat, req.lon);
    const patch = now === "wait" ? await choosePatch(store, requested, entry, runTime, req.lat, req.lon) : now;
    // A patch answers only when it can answer the same question (an ensemble member needs members).
    const sameKind = (g: ForecastGroup) =>
      g.variables.get(entry.name)!.roles.includes("member") === v0.roles.includes("member");
    if (patch && sameKind(patch)) {
      group = patch;
      v = patch.variables.get(entry.name)!;
    }
  }
  // A point beyond the grid's coverage (more than half a cell past its outer nodes) has no value:
  // answering with the edge node's would be a silent wrong answer.
  if (!covers(group.grid, req.lat, req.lon)) {
    throw new InvalidParameterError("lat", `the point lies outside the coverage of ${group.id}`, {
      bbox: group.grid.bbox,
    });
  }
  const run = group === requested ? runIndex : group.runs.indexOf(runTime);
  const level = resolveLevel(group, v, req.level);
  const member = resolveMember(group, v, req.member);
  const node = nearestNode(group.grid, req.lat, req.lon);
  const all = member === "all";
  const memberRange: [number, number] | number | undefined = all ? [0, group.members!.length] : member;
  const column = await readColumn(group, v, run, level, node.iy, node.ix, memberRange);

  const leads = group.leads;
  const text = timeTexts(group, v, run);
  const nLead = v.roles.includes("lead") ? leads.length : 1;
  const memberIndex = all ? (group.controlMember ?? 0) : member;
  const series = (m: number) => {
    // The column is (member, lead) or (lead, member) in storage order.
    const mDim = v.roles.indexOf("member");
    const lDim = v.roles.indexOf("lead");
    const nMember = all ? group.members!.length : 1;
    const k = all ? m : 0;
    return Array.from({ length: nLead }, (_, i) => {
      const at = mDim >= 0 && lDim >= 0 && mDim > lDim ? i * nMember + k : k * nLead + i;
      return nullable(column[at]);
    });
  };
  const out: PointSeries = {
    var: entry.name,
    lat: req.lat,
    lon: req.lon,
    times: text.times,
    values: series(all ? memberIndex! : 0),
    source: group.grid.global ? "global" : "regional",
    region: group.grid.global ? null : group.name,
    group: group.id,
    units: v.units,
    grid_lat: node.lat,
    grid_lon: node.lon,
    run: text.run,
    lead_hours: leads,
    level: level === undefined ? null : group.levels![level],
    member: memberIndex === undefined ? null : group.members![memberIndex],
    temporal: v.temporal,
  };
  if (all) out.members = group.members!.map((m, i) => ({ member: m, values: series(i) }));
  if (text.intervals) out.intervals = text.intervals;
  return out;
}

interface TimeTexts {
  times: readonly string[];
  run: string;
  intervals: readonly { start: string; end: string }[] | undefined;
}

// The ISO strings of an answer depend only on the group's metadata, the run and the variable's
// temporal kind, yet formatting them was a large share of a warm /point. They are built once per
// variable and run and shared (frozen: every answer serialises the same arrays). A group whose
// metadata changes is rebuilt with new variable objects, so its old strings go with it; a
// variable holds at most one entry per run of its group.
const textsOf = new WeakMap<GroupVariable, Map<number, TimeTexts>>();

function timeTexts(group: ForecastGroup, v: GroupVariable, run: number): TimeTexts {
  let byRun = textsOf.get(v);
  if (!byRun) {
    byRun = new Map();
    textsOf.set(v, byRun);
  }
  let t = byRun.get(run);
  if (!t) {
    const runTime = group.runs[run];
    const intervals = intervalsOf(group, v, run);
    t = {
      times: Object.freeze(group.leads.map((h) => isoNoZone(runTime + h * 3_600_000))),
      run: isoNoZone(runTime),
      intervals: intervals && Object.freeze(intervals.map((i) => Object.freeze(i))),
    };
    byRun.set(run, t);
  }
  return t;
}

async function readColumn(
  group: ForecastGroup,
  v: GroupVariable,
  run: number,
  level: number | undefined,
  iy: number,
  ix: number,
  member: number | [number, number] | undefined,
) {
  return readValues(v, columnRegion(group, v, run, level, iy, ix, member));
}
