// What the stored arrays of a group are: the coordinate of each role (1-D, or a 0-d time or lead),
// further latitude/longitude axes, auxiliary coordinates, the registry entry of each variable,
// and what the run-independent coordinates say once decoded (lead hours, levels in hPa, how far
// each run is ingested).
import { CorruptDataError } from "../errors.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import type { StoredArray } from "./array.ts";
import { unitMs } from "./cf.ts";
import { type Role, roleOf, rolePreference } from "./dims.ts";
import type { Json } from "./metadata.ts";

export const strAttr = (a: Json, k: string): string | undefined =>
  typeof a[k] === "string" ? (a[k] as string) : undefined;

/** Time units of a coordinate: its CF units, or the unit of a datetime64 data type. */
export function timeUnits(arr: StoredArray): string {
  const units = strAttr(arr.meta.attrs, "units");
  if (units) return units;
  const m = /M8\[(\w+)\]|datetime64\[(\w+)\]/.exec(arr.dtype);
  if (m) return `${m[1] ?? m[2]} since 1970-01-01`;
  throw new CorruptDataError(`the time coordinate ${arr.path || "(root)"} has no units`);
}

/** Coordinates of each role: 1-D dimension coordinates, or 0-d scalars for time and lead. */
export function findCoordinates(arrays: Map<string, StoredArray>): {
  coords: Partial<Record<Role, string>>;
  scalar: Set<Role>;
} {
  const coords: Partial<Record<Role, string>> = {};
  const scalar = new Set<Role>();
  const names = [...arrays.keys()].sort((a, b) => rolePreference(a) - rolePreference(b) || a.localeCompare(b));
  for (const name of names) {
    const arr = arrays.get(name)!;
    const role = roleOf(name);
    if (!role || coords[role]) continue;
    const dims = arr.dims;
    if (arr.shape.length === 1 && (dims[0] === name || roleOf(dims[0]) === role)) coords[role] = name;
  }
  // An ensemble axis by its CF meaning, whatever its name (MOGREPS's realization, a BoM `ens`).
  if (!coords.member) {
    const name = names.find((n) => {
      const a = arrays.get(n)!;
      return a.shape.length === 1 && a.dims[0] === n && strAttr(a.meta.attrs, "standard_name") === "realization";
    });
    if (name) coords.member = name;
  }
  for (const role of ["time", "lead"] as Role[]) {
    if (coords[role]) continue;
    const name = names.find((n) => roleOf(n) === role && arrays.get(n)!.shape.length === 0);
    if (name) {
      coords[role] = name;
      scalar.add(role);
    }
  }
  return { coords, scalar };
}

/** Names other arrays declare as auxiliary coordinates (CF `coordinates`), plus cfgrib's valid_time. */
export function auxiliaryNames(arrays: Map<string, StoredArray>): Set<string> {
  const aux = new Set<string>(["valid_time"]);
  for (const arr of arrays.values()) {
    const c = strAttr(arr.meta.attrs, "coordinates");
    if (c) for (const n of c.split(/\s+/)) if (n) aux.add(n);
  }
  return aux;
}

/**
 * Whether a 1-D dimension coordinate is a latitude or longitude axis beside the group's preferred
 * ones (`lat_1`, `latitude_wave`): by its CF standard_name, its units, or a lat/lon name with a
 * suffix. Undefined for anything else (rotated grid_latitude in "degrees" is not one).
 */
export function horizontalAxis(name: string, arr: StoredArray): "lat" | "lon" | undefined {
  if (arr.shape.length !== 1 || arr.dims[0] !== name) return undefined;
  const role = roleOf(name);
  if (role === "lat" || role === "lon") return role;
  if (role) return undefined;
  const std = strAttr(arr.meta.attrs, "standard_name")?.toLowerCase();
  const units = strAttr(arr.meta.attrs, "units")?.toLowerCase().replace(/\s+/g, "");
  if (std === "latitude" || (units && /^degrees?_?n(orth)?$/.test(units)) || /^lat(itude)?[_-][a-z0-9]+$/i.test(name)) {
    return "lat";
  }
  if (
    std === "longitude" ||
    (units && /^degrees?_?e(ast)?$/.test(units)) ||
    /^lon(gitude)?[_-][a-z0-9]+$/i.test(name)
  ) {
    return "lon";
  }
  return undefined;
}

/** The registry entry of a stored array: its name, else the GRIB short name or cfgrib's name. */
export function entryOf(registry: Registry, stored: string, attrs: Json): VariableEntry | undefined {
  for (const name of [stored, strAttr(attrs, "GRIB_shortName"), strAttr(attrs, "GRIB_cfVarName")]) {
    const e = name ? registry.lookup(name) : undefined;
    if (e) return e;
  }
  return undefined;
}

/**
 * Where a variable's scalar coordinates are named, nearest first: its squeezed dimensions, its own
 * CF `coordinates` attribute, then the group's (where xarray writes those no variable lists).
 */
function scalarCoordinateLists(arr: StoredArray, squeezed: string[], groupAttrs: Json): string[][] {
  const listed = (a: Json) => (strAttr(a, "coordinates") ?? "").split(/\s+/).filter(Boolean);
  return [squeezed, listed(arr.meta.attrs), listed(groupAttrs)];
}

/**
 * The height above the surface (metres) a variable's height coordinate gives: a squeezed
 * dimension's one-entry coordinate (MET Norway's height1 = 2 m), else a scalar coordinate its CF
 * `coordinates` attribute names (the Met Office's height = 1.5 m), else one the group's own
 * `coordinates` attribute names (where xarray writes the scalar coordinates no variable lists, as
 * after MEPS's ds.squeeze()). When a list holds several heights (height0, height1, height7), the
 * one the stored name gives in metres (x_wind_10m: 10) is taken; a list that does not decide gives
 * none, and the variable is then refused for want of a height, never given the wrong one.
 */
export async function heightOf(
  arrays: Map<string, StoredArray>,
  arr: StoredArray,
  squeezed: string[],
  groupAttrs: Json = {},
): Promise<number | undefined> {
  for (const names of scalarCoordinateLists(arr, squeezed, groupAttrs)) {
    const heights: number[] = [];
    for (const name of names) {
      const h = await scalarHeight(arrays.get(name));
      if (h !== undefined && !heights.includes(h)) heights.push(h);
    }
    if (heights.length === 1) return heights[0];
    if (heights.length > 1) {
      const named = /(?:^|_)(\d+(?:\.\d+)?)m(?:_|$)/.exec(arr.path.split("/").pop() ?? "");
      return named ? heights.find((h) => h === Number(named[1])) : undefined;
    }
  }
  return undefined;
}

/** The height in metres a one-value coordinate gives, when it is a CF height in metres. */
async function scalarHeight(c: StoredArray | undefined): Promise<number | undefined> {
  if (c?.shape.reduce((a, b) => a * b, 1) !== 1) return undefined;
  const std = strAttr(c.meta.attrs, "standard_name")?.toLowerCase();
  const units = strAttr(c.meta.attrs, "units")?.trim().toLowerCase() ?? "m";
  if (std !== "height" || !["m", "metre", "meter", "metres", "meters"].includes(units)) return undefined;
  const raw = c.shape.length === 0 ? [Number((await c.chunk([])).data[0])] : await c.readRaw();
  return raw[0] * c.packing.scale + c.packing.offset;
}

/**
 * The one pressure level a variable without a level dimension lies on, from a one-value level
 * coordinate (by name: isobaricInhPa, level, plev, ...; or standard_name air_pressure) among its
 * squeezed dimensions, its CF `coordinates` or the group's (a pressure-level file after
 * ds.squeeze()): in hPa when stored in Pa, as every level is named. Undefined when none, or
 * when a list names several different ones.
 */
export async function scalarLevelOf(
  arrays: Map<string, StoredArray>,
  arr: StoredArray,
  squeezed: string[],
  groupAttrs: Json = {},
): Promise<{ value: number; units: string | undefined } | undefined> {
  const listed = (a: Json) => (strAttr(a, "coordinates") ?? "").split(/\s+/).filter(Boolean);
  for (const names of [squeezed, listed(arr.meta.attrs), listed(groupAttrs)]) {
    const found: { value: number; units: string | undefined }[] = [];
    for (const name of names) {
      const c = arrays.get(name);
      if (c?.shape.reduce((a, b) => a * b, 1) !== 1) continue;
      const std = strAttr(c.meta.attrs, "standard_name")?.toLowerCase();
      if (roleOf(name) !== "level" && std !== "air_pressure") continue;
      const raw = c.shape.length === 0 ? [Number((await c.chunk([])).data[0])] : await c.readRaw();
      const { levels, levelUnits } = levelsIn(
        [raw[0] * c.packing.scale + c.packing.offset],
        strAttr(c.meta.attrs, "units"),
      );
      if (levels && Number.isFinite(levels[0]) && !found.some((f) => f.value === levels[0])) {
        found.push({ value: levels[0], units: levelUnits });
      }
    }
    if (found.length === 1) return found[0];
    if (found.length > 1) return undefined;
  }
  return undefined;
}

/**
 * The one ensemble member a variable without a member dimension holds, from a one-value member
 * coordinate (by name: realization, number, ensemble_member, ...; or standard_name realization)
 * among its squeezed dimensions, its CF `coordinates` or the group's: one member of an ensemble
 * saved alone (the Met Office's scalar realization, cfgrib's scalar number, MET Norway's
 * ensemble_member after isel). Undefined when none, or when a list names several different ones.
 */
export async function scalarMemberOf(
  arrays: Map<string, StoredArray>,
  arr: StoredArray,
  squeezed: string[],
  groupAttrs: Json = {},
): Promise<number | undefined> {
  for (const names of scalarCoordinateLists(arr, squeezed, groupAttrs)) {
    const found: number[] = [];
    for (const name of names) {
      const c = arrays.get(name);
      if (c?.shape.reduce((a, b) => a * b, 1) !== 1) continue;
      const std = strAttr(c.meta.attrs, "standard_name")?.toLowerCase();
      if (roleOf(name) !== "member" && std !== "realization") continue;
      const raw = c.shape.length === 0 ? [Number((await c.chunk([])).data[0])] : await c.readRaw();
      const m = Number(raw[0]);
      if (Number.isSafeInteger(m) && !found.includes(m)) found.push(m);
    }
    if (found.length === 1) return found[0];
    if (found.length > 1) return undefined;
  }
  return undefined;
}

export function leadHours(raw: number[], attrs: Json): number[] {
  const units = typeof attrs.units === "string" ? attrs.units : "hours";
  if (/since/i.test(units)) throw new CorruptDataError("the lead time is stored as a date, not a duration");
  const ms = unitMs(units);
  return raw.map((v) => (v * ms) / 3_600_000);
}

/**
 * Pressure levels as the API names them: in hPa. A level axis stored in Pa (CMIP's plev) is
 * converted, so `level=850` means 850 hPa on every route, map layer and /data view alike.
 */
export function levelsIn(
  raw: number[] | undefined,
  units: string | undefined,
): { levels: number[] | undefined; levelUnits: string | undefined } {
  if (raw && units && /^\s*(pa|pascals?)\s*$/i.test(units)) {
    return { levels: raw.map((p) => Math.round(p * 1e4) / 1e6), levelUnits: "hPa" };
  }
  return { levels: raw, levelUnits: units };
}

/**
 * dynamical.org's `ingested_forecast_length` (a duration per run, and per member in ensembles): the
 * last lead written so far. The least over members counts; NaT, negative or missing values mean
 * the store does not say for that run. Undefined without such an array along the run axis.
 */
export async function ingestedHours(
  arrays: Map<string, StoredArray>,
  time: StoredArray,
  nRuns: number,
): Promise<(number | undefined)[] | undefined> {
  const arr = arrays.get("ingested_forecast_length");
  if (!arr || time.shape.length !== 1 || arr.dims[0] !== time.dims[0] || arr.shape[0] !== nRuns) return undefined;
  const units = strAttr(arr.meta.attrs, "units") ?? "seconds";
  if (/since/i.test(units)) throw new CorruptDataError("ingested_forecast_length is stored as a date, not a duration");
  const ms = unitMs(units);
  const raw = await arr.readRaw();
  const per = raw.length / nRuns;
  // A v2 fill value marks a missing duration (xarray masks it there; in v3 it is a value like any).
  const fill = arr.meta.format === 2 ? arr.meta.array?.fill_value : undefined;
  const out: (number | undefined)[] = [];
  for (let r = 0; r < nRuns; r++) {
    let least: number | undefined;
    for (let k = 0; k < per; k++) {
      const x = Number(raw[r * per + k]);
      if (!Number.isFinite(x) || x < 0 || (fill !== null && fill !== undefined && x === Number(fill))) {
        least = undefined;
        break;
      }
      const h = (x * ms) / 3_600_000;
      least = least === undefined ? h : Math.min(least, h);
    }
    out.push(least);
  }
  return out;
}
