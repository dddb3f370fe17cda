// Box export: plan from metadata (shape, bytes, coordinates) before any chunk is read, then
// produce the float32 field one lead time at a time, lat ascending and lon eastward.
import { MIB } from "../config.ts";
import { InvalidParameterError, TooLargeError } from "../errors.ts";
import { npyHeader } from "../npy.ts";
import type { Registry } from "../registry/registry.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import { type BoxSelection, selectBox } from "./grid-select.ts";
import { readValues, regionOf } from "./read.ts";
import { intervalsOf, requireGroup, requireVariable, resolveLevel, resolveMember } from "./select.ts";

export interface BoxRequest {
  group: string;
  var: string;
  time_index: number;
  lead_start: number;
  lead_stop: number;
  lat_min: number;
  lat_max: number;
  lon_min: number;
  lon_max: number;
  level?: number;
  /** Ensemble member number; default the control member. */
  member?: string;
}

export interface BoxPlan {
  group: ForecastGroup;
  variable: GroupVariable;
  run: number;
  level: number | undefined;
  member: number | undefined;
  leads: [number, number];
  sel: BoxSelection;
  shape: [number, number, number];
  header: Uint8Array;
  /** Total .npy bytes (header + data). */
  bytes: number;
  /** The X-SVC-Field description of the array. */
  field: Record<string, unknown>;
}

function axis(values: number[]): Record<string, unknown> {
  const n = values.length;
  const step = n > 1 ? (values[n - 1] - values[0]) / (n - 1) : 0;
  const regular = values.every((v, i) => Math.abs(v - (values[0] + i * step)) < 1e-6 * Math.max(1, Math.abs(step)));
  const r = (x: number) => Math.round(x * 1e9) / 1e9;
  return regular ? { first: r(values[0]), step: r(step), count: n } : { values: values.map(r), count: n };
}

export async function planBox(store: Store, registry: Registry, req: BoxRequest, limitMb: number): Promise<BoxPlan> {
  const entry = registry.resolve(req.var);
  const group = await requireGroup(store, req.group);
  const variable = requireVariable(group, entry);
  if (req.time_index < 0 || req.time_index >= group.runs.length) {
    throw new InvalidParameterError("time_index", `time_index must be within 0..${group.runs.length - 1}`);
  }
  const nLead = group.leads.length;
  if (req.lead_start < 0 || req.lead_start >= nLead) {
    throw new InvalidParameterError("lead_start", `lead_start must be within 0..${nLead - 1}`);
  }
  if (req.lead_stop < 0 || req.lead_stop >= nLead) {
    throw new InvalidParameterError(
      "lead_stop",
      `lead_stop must be within 0..${nLead - 1} (the last lead step, included)`,
    );
  }
  if (req.lead_stop < req.lead_start)
    throw new InvalidParameterError("lead_stop", "lead_stop must not be below lead_start");
  for (const p of ["lat_min", "lat_max"] as const) {
    if (!(req[p] >= -90 && req[p] <= 90)) throw new InvalidParameterError(p, `${p} must be within -90..90`);
  }
  for (const p of ["lon_min", "lon_max"] as const) {
    if (!(req[p] >= -180 && req[p] <= 360)) throw new InvalidParameterError(p, `${p} must be within -180..360`);
  }
  const level = resolveLevel(group, variable, req.level);
  const member = resolveMember(group, variable, req.member);
  if (member === "all") {
    throw new InvalidParameterError("member", "an export holds one member; ask for each member in turn");
  }
  const sel = selectBox(group.grid, req.lat_min, req.lat_max, req.lon_min, req.lon_max);
  const shape: [number, number, number] = [req.lead_stop - req.lead_start + 1, sel.lats.length, sel.lons.length];
  const header = npyHeader("<f4", shape);
  const bytes = header.length + shape[0] * shape[1] * shape[2] * 4;
  if (bytes > limitMb * MIB) {
    throw new TooLargeError(
      `the export would be ${(bytes / MIB).toFixed(1)} MiB, above the ${limitMb} MiB limit`,
      bytes,
      limitMb,
      "narrow the lead range, the box, the level or the variable",
    );
  }
  const runTime = group.runs[req.time_index];
  const leadHours = group.leads.slice(req.lead_start, req.lead_stop + 1);
  const field = {
    name: variable.name,
    stored: variable.stored,
    group: group.id,
    dims: ["lead_time", "lat", "lon"],
    shape,
    dtype: "float32",
    units: variable.units,
    stored_units: variable.storedUnits,
    temporal: variable.temporal,
    intervals: intervalsOf(group, variable, req.time_index)?.slice(req.lead_start, req.lead_stop + 1) ?? null,
    member: member === undefined ? null : group.members![member],
    run: isoNoZone(runTime),
    time_index: req.time_index,
    lead_time: { hours: leadHours, valid_times: leadHours.map((h) => isoNoZone(runTime + h * 3_600_000)) },
    level: level === undefined ? null : group.levels![level],
    lat: axis(sel.lats),
    lon: axis(sel.lons),
    missing: "NaN",
  };
  return {
    group,
    variable,
    run: req.time_index,
    level,
    member,
    leads: [req.lead_start, req.lead_stop],
    sel,
    shape,
    header,
    bytes,
    field,
  };
}

/** The float32 values of one lead time of a planned box: (lat ascending, lon eastward). */
export async function readBoxLead(plan: BoxPlan, lead: number): Promise<Float32Array> {
  const { variable: v, sel } = plan;
  const nLat = plan.shape[1];
  const nLon = plan.shape[2];
  const out = new Float32Array(nLat * nLon);
  let colOffset = 0;
  for (const [c0, c1] of sel.cols) {
    const region = regionOf(plan.group, v, {
      run: plan.run,
      lead,
      level: plan.level,
      member: plan.member,
      lat: sel.rows,
      lon: [c0, c1],
    });
    const part = await readValues(v, region);
    const w = c1 - c0;
    for (let r = 0; r < nLat; r++) {
      const srcRow = sel.flipRows ? nLat - 1 - r : r;
      out.set(part.subarray(srcRow * w, srcRow * w + w), r * nLon + colOffset);
    }
    colOffset += w;
  }
  return out;
}

/** Every lead of the box in order, for streaming. */
export async function* boxLeads(plan: BoxPlan): AsyncGenerator<Float32Array> {
  for (let l = plan.leads[0]; l <= plan.leads[1]; l++) yield readBoxLead(plan, l);
}
