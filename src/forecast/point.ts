// Point series: the nearest node of the most local group, one spatial column read.
import { InvalidParameterError } from "../errors.ts";
import type { Registry, Temporal } from "../registry/registry.ts";
import type { Range } from "../store/array.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable, Store } from "../store/store.ts";
import { covers, nearestNode } from "./grid-select.ts";
import { choosePatch, requireGroup, requireVariable, resolveLevel, resolveRun } from "./select.ts";

export interface PointRequest {
  lat: number;
  lon: number;
  var: string;
  group: string;
  run?: string | number;
  level?: number;
}

export interface PointSeries {
  var: string;
  lat: number;
  lon: number;
  times: string[];
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
  temporal: Temporal;
  /** For accumulated variables: the interval [start, end] each value covers (end = its time). */
  intervals?: { start: string; end: string }[];
}

/** The region of one spatial column for one run (and level), all lead times. */
export function columnRegion(
  v: GroupVariable,
  run: number,
  level: number | undefined,
  iy: number,
  ix: number,
): Range[] {
  return v.roles.map((role, d): Range => {
    switch (role) {
      case "time":
        return [run, run + 1];
      case "lead":
        return [0, v.array.shape[d]];
      case "level":
        return [level!, level! + 1];
      case "lat":
        return [iy, iy + 1];
      case "lon":
        return [ix, ix + 1];
      default:
        throw new Error(`unexpected dimension role ${role}`);
    }
  });
}

export async function pointSeries(store: Store, registry: Registry, req: PointRequest): Promise<PointSeries> {
  if (!(req.lat >= -90 && req.lat <= 90)) throw new InvalidParameterError("lat", "lat must be within -90..90");
  if (!(req.lon >= -180 && req.lon <= 360)) throw new InvalidParameterError("lon", "lon must be within -180..360");
  const entry = registry.resolve(req.var);
  const requested = await requireGroup(store, req.group);
  const v0 = requireVariable(requested, entry);
  const runIndex = resolveRun(requested, req.run);
  const runTime = requested.runs[runIndex];

  let group: ForecastGroup = requested;
  let v = v0;
  if (requested.grid.global) {
    const patch = await choosePatch(store, requested, entry, runTime, req.lat, req.lon);
    if (patch) {
      group = patch;
      v = patch.variables.get(entry.name)!;
    }
  } else if (!covers(requested.grid, req.lat, req.lon)) {
    throw new InvalidParameterError("lat", `the point lies outside ${requested.id}`);
  }
  const run = group === requested ? runIndex : group.runs.indexOf(runTime);
  const level = resolveLevel(group, v, req.level);
  const node = nearestNode(group.grid, req.lat, req.lon);
  const column = await v.array.read(columnRegion(v, run, level, node.iy, node.ix));

  const leads = group.leads;
  const valid = leads.map((h) => runTime + h * 3_600_000);
  const out: PointSeries = {
    var: entry.name,
    lat: req.lat,
    lon: req.lon,
    times: valid.map(isoNoZone),
    values: Array.from(column, (x) => (Number.isNaN(x) ? null : x)),
    source: group.grid.global ? "global" : "regional",
    region: group.grid.global ? null : group.name,
    group: group.id,
    units: v.units,
    grid_lat: node.lat,
    grid_lon: node.lon,
    run: isoNoZone(runTime),
    lead_hours: leads,
    level: level === undefined ? null : group.levels![level],
    temporal: entry.temporal,
  };
  if (entry.temporal.kind === "accumulated") {
    const span = entry.temporal.interval_hours * 3_600_000;
    out.intervals = valid.map((t) => ({ start: isoNoZone(Math.max(runTime, t - span)), end: isoNoZone(t) }));
  }
  return out;
}
