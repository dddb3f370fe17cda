// Point series: the nearest node of the most local group, one spatial column read.
import { InvalidParameterError } from "../errors.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import type { ResolvedTemporal } from "../registry/temporal.ts";
import { isPending, type Soon, then } from "../soon.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import { coverageMiss, nearestNode } from "./grid-select.ts";
import type { PointCopies } from "./point-copy.ts";
import type { PointSource } from "./point-source.ts";
import { inAnswerUnits, readValues, regionOf } from "./read.ts";
import {
  bestPatch,
  entryIn,
  intervalsOf,
  requireGroup,
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
  /** With a units option: the stored units the values were converted from (`units` names the ones used). */
  converted_from?: string;
  temporal: ResolvedTemporal;
  /** For non-instantaneous variables: the interval [start, end] each value covers (end = its time). */
  intervals?: readonly { start: string; end: string }[];
  /**
   * The last lead the store has ingested for this run (dynamical.org's ingested_forecast_length),
   * when it says; the values of later leads are null.
   */
  ingested_lead_hours?: number;
  /**
   * In a group holding variables on several grids: the stored latitude and longitude coordinates
   * of the grid the values were read on (the variable's own).
   */
  grid_coordinates?: { lat: string; lon: string };
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

/**
 * The series at a point. Answered at once when everything it needs is in hand (the groups known,
 * the column's chunk decoded in the cache with its version known: a warm request), else a promise;
 * errors found at once are thrown.
 */
export function pointSeries(
  store: Store,
  registry: Registry,
  req: PointRequest,
  copies?: PointCopies,
): Soon<PointSeries> {
  if (!(req.lat >= -90 && req.lat <= 90)) throw new InvalidParameterError("lat", "lat must be within -90..90");
  if (!(req.lon >= -180 && req.lon <= 360)) throw new InvalidParameterError("lon", "lon must be within -180..360");
  // A registered name is checked at once; a stored one is looked up in the group.
  const known = registry.lookup(req.var);
  return then(requireGroup(store, req.group), (requested) =>
    inGroup(store, known ?? entryIn(registry, requested, req.var), req, requested, copies),
  );
}

function inGroup(
  store: Store,
  entry: VariableEntry,
  req: PointRequest,
  requested: ForecastGroup,
  copies: PointCopies | undefined,
): Soon<PointSeries> {
  const v0 = requireVariable(requested, entry);
  const runIndex = resolveRun(requested, req.run);
  const runTime = requested.runs[runIndex];
  if (!v0.grid.global) return atNode(entry, req, requested, v0, runIndex, runTime, undefined, copies);
  return then(store.readableGroups(requested.id), (groups) =>
    atNode(entry, req, requested, v0, runIndex, runTime, groups, copies),
  );
}

function atNode(
  entry: VariableEntry,
  req: PointRequest,
  requested: ForecastGroup,
  v0: GroupVariable,
  runIndex: number,
  runTime: number,
  others: readonly ForecastGroup[] | undefined,
  copies: PointCopies | undefined,
): Soon<PointSeries> {
  const patch = others && bestPatch(others, entry, runTime, req.lat, req.lon);
  let group: ForecastGroup = requested;
  let v = v0;
  // A patch answers only when it can answer the same question (an ensemble member needs members).
  if (patch && patch.variables.get(entry.name)!.roles.includes("member") === v0.roles.includes("member")) {
    group = patch;
    v = patch.variables.get(entry.name)!;
  }
  // A point beyond the grid's coverage (more than half a cell past its outer nodes) has no value:
  // answering with the edge node's would be a silent wrong answer.
  const miss = coverageMiss(v.grid, req.lat, req.lon);
  if (miss) {
    const what = miss === "lat" ? "latitude" : "longitude";
    const of = group.grids.length > 1 ? `${v.name}'s grid in ${group.id}` : group.id;
    throw new InvalidParameterError(miss, `the point's ${what} lies outside the coverage of ${of}`, {
      bbox: v.grid.bbox,
    });
  }
  const run = group === requested ? runIndex : group.runs.indexOf(runTime);
  const level = resolveLevel(group, v, req.level);
  const member = resolveMember(group, v, req.member);
  const node = nearestNode(v.grid, req.lat, req.lon);
  const memberRange: [number, number] | number | undefined = member === "all" ? [0, group.members!.length] : member;
  const region = columnRegion(group, v, run, level, node.iy, node.ix, memberRange);
  const fromStore = (): Soon<PointSeries> => {
    const column = readValues(v, region);
    if (isPending(column)) return column.then((c) => answer(entry, req, group, v, run, level, member, node, c));
    const out = answer(entry, req, group, v, run, level, member, node, column);
    // Read at once, so the chunk's version now is the one its values came from.
    const chunk = v.array.chunkKeyNow(region);
    if (chunk !== undefined) sources.set(out, { requested, others, array: v.array, region, chunk });
    return out;
  };
  // The build's point copy answers when it holds exactly what the store holds now; else the store.
  if (!copies || v.turn || v.plus) return fromStore();
  const q = { group, v, run, level, member: v.roles.includes("member") ? memberRange : undefined, ...node };
  const copied = copies.column(q);
  if (!isPending(copied)) {
    if (!copied) return fromStore();
    // Read at once: an answer that may be given again while the copy still holds the column.
    const out = answer(entry, req, group, v, run, level, member, node, inAnswerUnits(v, copied));
    const held = copies.heldNow?.(q);
    if (held) sources.set(out, { requested, others, array: v.array, region, chunk: "", held });
    return out;
  }
  return copied.then((c) =>
    c ? answer(entry, req, group, v, run, level, member, node, inAnswerUnits(v, c)) : fromStore(),
  );
}

// What each series answered at once was read from (see pointSource).
const sources = new WeakMap<PointSeries, PointSource>();

/**
 * What a series was read from, for a series pointSeries() answered at once from one chunk whose
 * version was known: the groups that chose where to read and the chunk's versioned key.
 * sourceCurrent() tells whether the store still holds exactly that, so whatever was computed
 * from the series may be given again. Undefined for any other series.
 */
export function pointSource(s: PointSeries): PointSource | undefined {
  return sources.get(s);
}

function answer(
  entry: VariableEntry,
  req: PointRequest,
  group: ForecastGroup,
  v: GroupVariable,
  run: number,
  level: number | undefined,
  member: number | "all" | undefined,
  node: { lat: number; lon: number },
  column: Float32Array | Float64Array,
): PointSeries {
  const all = member === "all";
  const leads = group.leads;
  const text = timeTexts(group, v, run);
  const nLead = v.roles.includes("lead") ? leads.length : 1;
  const memberIndex = all ? (group.controlMember ?? 0) : member;
  // The column is (member, lead) or (lead, member) in storage order.
  const mDim = v.roles.indexOf("member");
  const lDim = v.roles.indexOf("lead");
  const nMember = all ? group.members!.length : 1;
  const leadMajor = mDim >= 0 && lDim >= 0 && mDim > lDim;
  // Leads past what the store says it has ingested for this run are not there yet: missing,
  // whatever their chunks hold (a run still being written).
  const ingested = group.ingested?.[run];
  const series = (m: number) => {
    const k = all ? m : 0;
    const out = new Array<number | null>(nLead);
    for (let i = 0; i < nLead; i++) {
      out[i] =
        ingested !== undefined && nLead > 1 && leads[i] > ingested
          ? null
          : nullable(column[leadMajor ? i * nMember + k : k * nLead + i]);
    }
    return out;
  };
  const out: PointSeries = {
    var: entry.name,
    lat: req.lat,
    lon: req.lon,
    times: text.times,
    values: series(all ? memberIndex! : 0),
    source: v.grid.global ? "global" : "regional",
    region: v.grid.global ? null : group.name,
    group: group.id,
    units: v.units,
    grid_lat: node.lat,
    grid_lon: node.lon,
    run: text.run,
    lead_hours: leads,
    level: level === undefined ? (v.scalarLevel?.value ?? null) : group.levels![level],
    // A variable holding one member without a member dimension names it (a scalar realization).
    member: memberIndex === undefined ? (v.scalarMember ?? null) : group.members![memberIndex],
    temporal: v.temporal,
  };
  if (all) out.members = group.members!.map((m, i) => ({ member: m, values: series(i) }));
  if (text.intervals) out.intervals = text.intervals;
  if (ingested !== undefined) out.ingested_lead_hours = ingested;
  if (group.grids.length > 1) out.grid_coordinates = v.gridCoords;
  return out;
}

interface TimeTexts {
  times: readonly string[];
  run: string;
  intervals: readonly { start: string; end: string }[] | undefined;
  /** JSON text of the parts of an answer that depend only on the variable and run (see pointJson). */
  json?: JsonPieces;
}

interface JsonPieces {
  /** The objects the texts were made from: an answer holding others is serialised in full. */
  times: readonly string[];
  leads: readonly number[];
  temporal: ResolvedTemporal;
  intervals: readonly { start: string; end: string }[] | undefined;
  timesText: string;
  runText: string;
  leadsText: string;
  temporalText: string;
  intervalsText: string | undefined;
}

/**
 * JSON.stringify(series) for a series pointSeries() made, byte for byte, built from text kept
 * per variable and run (times, run, lead hours, temporal, intervals) instead of serialising those
 * on every request. Anything it does not recognise (a field of another type, a series not from
 * pointSeries) is serialised by JSON.stringify itself.
 */
export function pointJson(s: PointSeries): string {
  const p = piecesOf(s);
  if (
    p === undefined ||
    typeof s.var !== "string" ||
    typeof s.group !== "string" ||
    typeof s.units !== "string" ||
    !(s.region === null || typeof s.region === "string") ||
    !(s.level === null || typeof s.level === "number") ||
    !(s.member === null || typeof s.member === "number") ||
    typeof s.lat !== "number" ||
    typeof s.lon !== "number" ||
    typeof s.grid_lat !== "number" ||
    typeof s.grid_lon !== "number" ||
    (s.source !== "global" && s.source !== "regional")
  ) {
    return JSON.stringify(s);
  }
  let out = `{"var":${JSON.stringify(s.var)},"lat":${num(s.lat)},"lon":${num(s.lon)},"times":${p.timesText},"values":${numbers(s.values)},"source":"${s.source}","region":${s.region === null ? "null" : JSON.stringify(s.region)},"group":${JSON.stringify(s.group)},"units":${JSON.stringify(s.units)},"grid_lat":${num(s.grid_lat)},"grid_lon":${num(s.grid_lon)},"run":${p.runText},"lead_hours":${p.leadsText},"level":${s.level === null ? "null" : num(s.level)},"member":${s.member === null ? "null" : num(s.member)},"temporal":${p.temporalText}`;
  if (s.members !== undefined) {
    out += ',"members":[';
    for (let i = 0; i < s.members.length; i++) {
      const m = s.members[i];
      out += `${i ? "," : ""}{"member":${num(m.member)},"values":${numbers(m.values)}}`;
    }
    out += "]";
  }
  if (s.intervals !== undefined) out += `,"intervals":${p.intervalsText}`;
  if (s.ingested_lead_hours !== undefined) out += `,"ingested_lead_hours":${num(s.ingested_lead_hours)}`;
  if (s.grid_coordinates !== undefined) out += `,"grid_coordinates":${JSON.stringify(s.grid_coordinates)}`;
  if (s.converted_from !== undefined) out += `,"converted_from":${JSON.stringify(s.converted_from)}`;
  return `${out}}`;
}

// How JSON writes a number: its shortest round-trip text, null when not finite.
const num = (x: number) => (Number.isFinite(x) ? `${x}` : "null");

function numbers(xs: readonly (number | null)[]): string {
  let out = "[";
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (i) out += ",";
    out += x === null ? "null" : num(x);
  }
  return `${out}]`;
}

// Series made by pointSeries() hold the arrays of a TimeTexts entry; find it through them.
const piecesByTimes = new WeakMap<readonly string[], TimeTexts>();

function piecesOf(s: PointSeries): JsonPieces | undefined {
  const t = piecesByTimes.get(s.times);
  if (!t || s.run !== t.run || s.intervals !== (s.intervals === undefined ? undefined : t.intervals)) return undefined;
  let p = t.json;
  if (!p || p.leads !== s.lead_hours || p.temporal !== s.temporal) {
    p = {
      times: t.times,
      leads: s.lead_hours,
      temporal: s.temporal,
      intervals: t.intervals,
      timesText: JSON.stringify(t.times),
      runText: JSON.stringify(t.run),
      leadsText: JSON.stringify(s.lead_hours),
      temporalText: JSON.stringify(s.temporal),
      intervalsText: t.intervals && JSON.stringify(t.intervals),
    };
    t.json = p;
  }
  return p;
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
    piecesByTimes.set(t.times, t);
  }
  return t;
}
