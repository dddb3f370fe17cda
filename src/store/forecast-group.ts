// A forecast group as gridcast reads it: decoded run times, lead times, levels and the lat/lon
// grid, plus each registered variable with the role of every dimension. Built from metadata and
// the small coordinate arrays only.
import { StoreUnavailableError } from "../errors.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import type { StoredArray } from "./array.ts";
import { decodeTimes, unitMs } from "./cf.ts";
import { type Role, roleOf } from "./dims.ts";
import { wrap180 } from "./grid.ts";
import type { Json } from "./metadata.ts";

export interface GroupVariable {
  /** Canonical registry name. */
  name: string;
  /** Name of the array in the store. */
  stored: string;
  entry: VariableEntry;
  array: StoredArray;
  /** Role of each dimension, in storage order. */
  roles: Role[];
  units: string;
}

export interface Grid {
  lat: Float64Array;
  lon: Float64Array;
  latAscending: boolean;
  /** True when the stored longitudes run 0..360 rather than -180..180. */
  lon360: boolean;
  dlat: number;
  dlon: number;
  /** West, south, east, north in degrees, -180..180, cell edges included. */
  bbox: [number, number, number, number];
  /** The grid wraps around the globe in longitude. */
  global: boolean;
}

export interface ForecastGroup {
  /** forecast/<name> */
  id: string;
  name: string;
  format: 2 | 3;
  attrs: Json;
  /** Run (initialisation) times, UTC milliseconds, in storage order. */
  runs: number[];
  /** Lead times in hours, in storage order. */
  leads: number[];
  levels: number[] | undefined;
  levelUnits: string | undefined;
  grid: Grid;
  variables: Map<string, GroupVariable>;
  /** Stored arrays that are neither coordinates nor registered variables. */
  unregistered: string[];
  /** Stored coordinate array names by role. */
  coordNames: Partial<Record<Role, string>>;
}

function leadHours(raw: number[], attrs: Json): number[] {
  const units = typeof attrs.units === "string" ? attrs.units : "hours";
  if (/since/i.test(units)) throw new StoreUnavailableError("lead_time is stored as a date, not a duration");
  const ms = unitMs(units);
  return raw.map((v) => (v * ms) / 3_600_000);
}

function spacing(c: Float64Array): number {
  return c.length > 1 ? Math.abs(c[c.length - 1] - c[0]) / (c.length - 1) : 0;
}

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

export function gridOf(lat: Float64Array, lon: Float64Array): Grid {
  const dlat = spacing(lat);
  const dlon = spacing(lon);
  const lon360 = Math.max(...lon) > 180;
  const latMin = Math.min(lat[0], lat[lat.length - 1]);
  const latMax = Math.max(lat[0], lat[lat.length - 1]);
  const lonSpan = dlon * lon.length;
  const global = lonSpan >= 359.999;
  let west: number;
  let east: number;
  if (global) {
    west = -180;
    east = 180;
  } else {
    west = wrap180(Math.min(lon[0], lon[lon.length - 1]) - dlon / 2);
    east = west + lonSpan;
  }
  return {
    lat,
    lon,
    latAscending: lat[lat.length - 1] >= lat[0],
    lon360,
    dlat,
    dlon,
    bbox: [
      round9(west),
      round9(Math.max(-90, latMin - dlat / 2)),
      round9(east),
      round9(Math.min(90, latMax + dlat / 2)),
    ],
    global,
  };
}

export interface GroupInput {
  id: string;
  format: 2 | 3;
  attrs: Json;
  arrays: Map<string, StoredArray>;
}

export async function buildForecastGroup(input: GroupInput, registry: Registry): Promise<ForecastGroup> {
  const coordNames: Partial<Record<Role, string>> = {};
  for (const [name, arr] of input.arrays) {
    const role = roleOf(name);
    if (role && arr.shape.length === 1) coordNames[role] ??= name;
  }
  for (const role of ["time", "lead", "lat", "lon"] as Role[]) {
    if (!coordNames[role]) {
      throw new StoreUnavailableError(`forecast group ${input.id} has no ${role} coordinate`);
    }
  }
  const coord = (r: Role) => input.arrays.get(coordNames[r]!)!;
  const [timeRaw, leadRaw, latRaw, lonRaw, levelRaw] = await Promise.all([
    coord("time").readRaw(),
    coord("lead").readRaw(),
    coord("lat").read([[0, coord("lat").shape[0]]], new Float64Array(coord("lat").shape[0])),
    coord("lon").read([[0, coord("lon").shape[0]]], new Float64Array(coord("lon").shape[0])),
    coordNames.level ? coord("level").readRaw() : Promise.resolve(undefined),
  ]);
  const tAttrs = coord("time").meta.attrs;
  const runs = decodeTimes(
    timeRaw,
    typeof tAttrs.units === "string" ? tAttrs.units : "seconds since 1970-01-01",
    typeof tAttrs.calendar === "string" ? tAttrs.calendar : "standard",
  );
  const leads = leadHours(leadRaw, coord("lead").meta.attrs);
  const grid = gridOf(latRaw as Float64Array, lonRaw as Float64Array);

  const variables = new Map<string, GroupVariable>();
  const unregistered: string[] = [];
  const coordSet = new Set(Object.values(coordNames));
  for (const [stored, arr] of input.arrays) {
    if (coordSet.has(stored)) continue;
    const roles = arr.dims.map((d) => roleOf(d));
    const entry = registry.lookup(stored);
    const spatial = roles.includes("lat") && roles.includes("lon");
    if (!entry || !spatial || roles.some((r) => r === undefined)) {
      unregistered.push(stored);
      continue;
    }
    variables.set(entry.name, {
      name: entry.name,
      stored,
      entry,
      array: arr,
      roles: roles as Role[],
      units: typeof arr.meta.attrs.units === "string" ? arr.meta.attrs.units : entry.units,
    });
  }
  const name = input.id.slice(input.id.indexOf("/") + 1);
  return {
    id: input.id,
    name,
    format: input.format,
    attrs: input.attrs,
    runs,
    leads,
    levels: levelRaw,
    levelUnits: coordNames.level ? (coord("level").meta.attrs.units as string | undefined) : undefined,
    grid,
    variables,
    unregistered: unregistered.sort(),
    coordNames,
  };
}
