// The value behind a map click: one layer at the grid node nearest to the click, for one run and
// lead. The node is chosen exactly as the tile renderer chooses it (ties go south/west), so the
// number matches the colour under the cursor. One cell is read, through the shared chunk cache.
import { InvalidParameterError, NotFoundError } from "../errors.ts";
import { displayUnit, toDisplay } from "../registry/display.ts";
import type { ResolvedTemporal } from "../registry/temporal.ts";
import { isoNoZone } from "../store/describe.ts";
import type { Store } from "../store/store.ts";
import { covers, nearestNode } from "./grid-select.ts";
import { findMapLayer, parseRunParam, runIndexOf } from "./layers.ts";
import type { PointCopies } from "./point-copy.ts";
import { inAnswerUnits, readValues, regionOf } from "./read.ts";
import { intervalsOf, latestRun, notIngested } from "./select.ts";

export interface ValueRequest {
  layer: string;
  /** ISO 8601 time or run token; default the latest run. */
  run?: string;
  /** Lead time in hours; default the first lead. */
  lead?: number;
  lat: number;
  lon: number;
}

export interface LayerValue {
  layer: string;
  group: string;
  variable: string;
  /** Canonical units of `value` (the stored units when gridcast cannot convert them). */
  units: string;
  /** null where the field is missing or the point lies outside the layer's grid. */
  value: number | null;
  /** The value as legends and popups show it (°C, hPa, mm, %, m/s). */
  display: { value: number | null; units: string };
  /** Wind layers: where the wind blows from, degrees clockwise from north. */
  direction_deg?: number | null;
  valid_time: string;
  run: string;
  lead_hours: number;
  level: number | null;
  /** The grid node read; null outside the grid. */
  grid_lat: number | null;
  grid_lon: number | null;
  /** Ensemble layers: the member drawn and read (the control); null otherwise. */
  member: number | null;
  temporal: ResolvedTemporal | DerivedTemporal;
  /** Non-instantaneous variables: the interval the amount covers. */
  interval?: { start: string; end: string };
  /** In a group holding variables on several grids: the stored latitude/longitude coordinates of the layer's grid. */
  grid_coordinates?: { lat: string; lon: string };
}

type DerivedTemporal = NonNullable<Awaited<ReturnType<typeof findMapLayer>>["derived"]>["def"]["temporal"];

const HOUR_MS = 3_600_000;

export async function layerValue(store: Store, req: ValueRequest, copies?: PointCopies): Promise<LayerValue> {
  if (!(req.lat >= -90 && req.lat <= 90)) throw new InvalidParameterError("lat", "lat must be within -90..90");
  if (!(req.lon >= -180 && req.lon <= 360)) throw new InvalidParameterError("lon", "lon must be within -180..360");
  const { id, group, variable: v, level, levelIndex, derived } = await findMapLayer(store, req.layer);
  const run = req.run === undefined ? latestRun(group) : runIndexOf(group, parseRunParam(req.run));
  const lead = req.lead === undefined ? 0 : group.leads.indexOf(req.lead);
  if (lead < 0) {
    throw new NotFoundError(`no lead time ${req.lead} h in ${group.id}`, { param: "lead", available: group.leads });
  }
  notIngested(group, run, group.leads[lead], "lead");
  const runTime = group.runs[run];
  const validTime = runTime + group.leads[lead] * HOUR_MS;

  let cells: number[] | null = null;
  let node: { lat: number; lon: number; ix: number; iy: number } | null = null;
  // The layer's own grid (a group may hold variables on several; derived layers' sources share one).
  const grid = v.grid;
  if (covers(grid, req.lat, req.lon)) {
    const n = nearestNode(grid, req.lat, req.lon);
    node = n;
    // Ensemble layers draw the control member (regionOf's default), so the click reads it too.
    const cellOf = async (gv: typeof v) => {
      // The build's point copy holds the node's series when it holds what the store holds now.
      const member = gv.roles.includes("member") ? (group.controlMember ?? 0) : undefined;
      const q = { group, v: gv, run, level: levelIndex ?? undefined, member, iy: n.iy, ix: n.ix };
      const series = copies && !gv.turn && !gv.plus ? await copies.column(q) : undefined;
      if (series) return inAnswerUnits(gv, series)[gv.roles.includes("lead") ? lead : 0];
      const region = regionOf(group, gv, { run, lead, level: levelIndex ?? undefined, lat: n.iy, lon: n.ix });
      return (await readValues(gv, region))[0];
    };
    cells = await Promise.all((derived?.sources ?? [v]).map(cellOf));
  }
  const def = derived?.def;
  let value: number | null = null;
  let direction: number | null = null;
  if (cells && def && (def.kind === "speed" || def.kind === "arrows")) {
    // Components along a projected grid's axes come turned to east/north (readValues).
    const [u, vn] = cells;
    value = Math.hypot(u, vn);
    // Meteorological convention: the direction the wind comes from.
    if (!Number.isNaN(value)) direction = Math.round(((Math.atan2(-u, -vn) * 180) / Math.PI + 360) % 360);
  } else if (cells) {
    value = cells[0];
  }
  if (value !== null && Number.isNaN(value)) value = null;
  const units = def ? def.units : v.units;
  // The display transform is defined on canonical units; a unit gridcast could not convert is shown as stored.
  const unit = def
    ? displayUnit(def.style, units)
    : v.units === v.entry.units
      ? displayUnit(v.entry.style, units)
      : displayUnit(undefined, units);
  const out: LayerValue = {
    layer: id,
    group: group.id,
    variable: def ? def.name : v.name,
    units,
    value,
    display: { value: value === null ? null : toDisplay(unit, value), units: unit.units },
    valid_time: isoNoZone(validTime),
    run: isoNoZone(runTime),
    lead_hours: group.leads[lead],
    level,
    grid_lat: node?.lat ?? null,
    grid_lon: node?.lon ?? null,
    member:
      group.members && v.roles.includes("member") ? group.members[group.controlMember ?? 0] : (v.scalarMember ?? null),
    temporal: def ? def.temporal : v.temporal,
  };
  if (def?.sources.length === 2) out.direction_deg = direction;
  if (group.grids.length > 1) out.grid_coordinates = v.gridCoords;
  const interval = def ? undefined : intervalsOf(group, v, run)?.[lead];
  if (interval) out.interval = interval;
  return out;
}
