// A forecast group as gridcast reads it: decoded run times, lead times, levels, ensemble members
// and the lat/lon grid, plus each registered variable with the role of every dimension, its
// temporal meaning and its unit conversion. Built from metadata and the small coordinate arrays
// only. Anything gridcast cannot read correctly refuses the whole group with a reason.
import { CorruptDataError, GridcastError, StoreUnavailableError } from "../errors.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import { type ResolvedTemporal, resolveTemporal, windowFromData, withDataWindow } from "../registry/temporal.ts";
import { type Converter, converter } from "../registry/units.ts";
import type { StoredArray } from "./array.ts";
import { decodeTimes, unitMs, variableProblem } from "./cf.ts";
import { type Role, roleOf, rolePreference } from "./dims.ts";
import { wrap180 } from "./grid.ts";
import type { Json } from "./metadata.ts";
import { findProjectedAxes, type GridProjection, type ProjectedAxes, projectionOf } from "./projected-grid.ts";

export interface GroupVariable {
  /** Canonical registry name. */
  name: string;
  /** Name of the array in the store. */
  stored: string;
  entry: VariableEntry;
  array: StoredArray;
  /** Role of each dimension, in storage order. */
  roles: Role[];
  /** Units of the values gridcast answers with: canonical when the stored unit converts, else stored. */
  units: string;
  /** Units the store declares (the registry's when it declares none). */
  storedUnits: string;
  /** False when the stored unit cannot be converted to the canonical one: values stay as stored. */
  canonical: boolean;
  /** Stored → canonical; undefined when there is nothing to convert (or it cannot be converted). */
  convert: Converter | undefined;
  /** The variable's temporal meaning in this group. */
  temporal: ResolvedTemporal;
  /**
   * The grid the variable is stored on: the group's `grid` (the same object) unless the group holds
   * variables on several grids and this one sits on another (see ForecastGroup.grids).
   */
  grid: Grid;
  /** Stored names of the variable's latitude and longitude (or y and x) coordinates: its grid's key. */
  gridCoords: { lat: string; lon: string };
}

/** One horizontal grid of a group, keyed by the stored names of its latitude and longitude coordinates. */
export interface GroupGrid {
  lat: string;
  lon: string;
  grid: Grid;
}

/** A stored array left out of the group's variables, with the reason and its CF description. */
export interface UnregisteredArray {
  stored: string;
  reason: string;
  dims: string[];
  units: string | null;
  long_name: string | null;
  standard_name: string | null;
  /** Set when the array is a registered variable whose stored encoding gridcast cannot decode. */
  refused?: { variable: string; problem: string };
}

export interface Grid {
  lat: Float64Array;
  lon: Float64Array;
  latAscending: boolean;
  /** True when the stored longitudes run 0..360 rather than -180..180. */
  lon360: boolean;
  /** The stored longitudes, when `lon` runs past the seam of their convention (see circularLon). */
  storedLon?: Float64Array;
  dlat: number;
  dlon: number;
  /** West, south, east, north in degrees, -180..180, cell edges included. */
  bbox: [number, number, number, number];
  /** The grid wraps around the globe in longitude. */
  global: boolean;
  /**
   * Set for a projected or rotated grid: then `lat`/`lon` hold the projection's y/x coordinates
   * (the row and column axes, roles "lat" and "lon"), dlat/dlon the nominal spacing in degrees and
   * bbox the geographic bounds of its cells. Undefined for a regular latitude/longitude grid.
   */
  projection?: GridProjection;
}

export interface ForecastGroup {
  /** forecast/<name> */
  id: string;
  name: string;
  /** Path of the group inside the store ("" when the dataset sits at the store root). */
  path: string;
  format: 2 | 3;
  attrs: Json;
  /** Run (initialisation) times, UTC milliseconds, in storage order. */
  runs: number[];
  /** Lead times in hours, in storage order. */
  leads: number[];
  /**
   * True for a store without a lead axis (analysis, reanalysis): each stored time is a run with
   * the single lead 0.
   */
  analysis: boolean;
  levels: number[] | undefined;
  levelUnits: string | undefined;
  /** Ensemble member numbers, in storage order; undefined without a member dimension. */
  members: number[] | undefined;
  /**
   * Per run, the last lead hour the store has ingested (dynamical.org's ingested_forecast_length:
   * the latest run is written lead by lead); undefined where the store does not say.
   */
  ingested: (number | undefined)[] | undefined;
  /** Index of the member the maps draw: the control (number 0) when there is one, else the first. */
  controlMember: number | undefined;
  /** The group's first grid: its preferred latitude/longitude coordinates (or projected y/x). */
  grid: Grid;
  /**
   * Every grid a served variable sits on, the group's `grid` first. More than one when the group
   * holds variables on several grids (cfgrib hypercubes merged, atmosphere and wave fields in one
   * dataset): each variable is then read, located and drawn on its own grid (GroupVariable.grid).
   */
  grids: GroupGrid[];
  variables: Map<string, GroupVariable>;
  /** Stored arrays that are neither coordinates nor registered variables. */
  unregistered: UnregisteredArray[];
  /** Stored coordinate array names by role. */
  coordNames: Partial<Record<Role, string>>;
}

function leadHours(raw: number[], attrs: Json): number[] {
  const units = typeof attrs.units === "string" ? attrs.units : "hours";
  if (/since/i.test(units)) throw new CorruptDataError("the lead time is stored as a date, not a duration");
  const ms = unitMs(units);
  return raw.map((v) => (v * ms) / 3_600_000);
}

function spacing(c: Float64Array): number {
  return c.length > 1 ? Math.abs(c[c.length - 1] - c[0]) / (c.length - 1) : 0;
}

/** The furthest instant from 1970 a JavaScript date can name (±100 million days), in ms. */
const MAX_DATE_MS = 8.64e15;

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

function monotonic(c: Float64Array): boolean {
  if (c.length < 2) return true;
  const up = c[1] > c[0];
  for (let i = 1; i < c.length; i++) if (!(c[i] > c[i - 1] === up && c[i] !== c[i - 1])) return false;
  return true;
}

/** A 1-D coordinate's values, scaled and offset but never masked (see readFloat in build). */
async function readAxis(arr: StoredArray): Promise<Float64Array> {
  const { scale, offset } = arr.packing;
  return Float64Array.from(await arr.readRaw(), (x) => x * scale + offset);
}

/** Refuses grids gridcast cannot map or locate points on; the reason names the axis. */
function checkAxis(name: "latitude" | "longitude", c: Float64Array): void {
  if (c.length < 2) {
    const what = name === "latitude" ? "row" : "column";
    throw new CorruptDataError(
      `the grid has a single ${name} ${what}: gridcast needs at least two to know the grid spacing and coverage`,
    );
  }
  for (const x of c) if (!Number.isFinite(x)) throw new CorruptDataError(`the ${name} coordinate has missing values`);
  if (!monotonic(c)) throw new CorruptDataError(`the ${name} coordinate is not strictly monotonic`);
  if (name === "latitude" && c.some((x) => x < -90.000001 || x > 90.000001)) {
    throw new CorruptDataError("latitudes lie outside -90..90");
  }
}

/**
 * Longitudes read as a circle: a regional grid stored across the seam of its convention
 * (170..178, -180..-120 in -180..180, or 350..358, 0..10 in 0..360) runs on monotonically once
 * each wrapped step is added to the previous longitude (170..240). Unchanged when already
 * monotonic, or when the steps change direction or the run covers more than the circle (then
 * checkAxis refuses it).
 */
export function circularLon(c: Float64Array): Float64Array {
  if (c.length < 2 || monotonic(c) || !c.every(Number.isFinite)) return c;
  const out = new Float64Array(c.length);
  out[0] = c[0];
  let sign = 0;
  for (let i = 1; i < c.length; i++) {
    const step = wrap180(c[i] - c[i - 1]);
    if (step === 0 || (sign !== 0 && Math.sign(step) !== sign)) return c;
    sign = Math.sign(step);
    out[i] = out[i - 1] + step;
  }
  return Math.abs(out[out.length - 1] - out[0]) < 360 ? out : c;
}

/** The grid's longitudes as the store holds them (before circularLon). */
export function storedLongitudes(grid: Grid): Float64Array {
  return grid.storedLon ?? grid.lon;
}

/** A grid from its latitudes and longitudes, read as a circle (see circularLon) from the stored ones. */
export function gridOf(lat: Float64Array, stored: Float64Array): Grid {
  const lon = circularLon(stored);
  const lon360 = Math.max(...stored) > 180;
  const dlat = spacing(lat);
  const dlon = spacing(lon);
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
    ...(lon === stored ? {} : { storedLon: stored }),
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

/**
 * Pressure levels as the API names them: in hPa. A level axis stored in Pa (CMIP's plev) is
 * converted, so `level=850` means 850 hPa on every route, map layer and /data view alike.
 */
function levelsIn(
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
async function ingestedHours(
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

/** ECMWF's GRIB accumulations (centre ecmf) run from the forecast's start, by its convention. */
function ecmwfAccumulation(attrs: Json, groupAttrs: Json): boolean {
  return [attrs.GRIB_centre, groupAttrs.GRIB_centre].some((c) => c === "ecmf");
}

/** Most values read to tell a since-start amount from one reset in buckets: one run's leads. */
const WINDOW_CHECK_VALUES = 2 ** 22;

/**
 * Whether an amount said to run from the forecast's start really does, from the latest run's
 * values over all leads in the first spatial chunk (and level, control member): a since-start
 * amount never decreases; GFS-style buckets drop after each reset (see windowFromData).
 */
async function accumulationWindow(
  v: GroupVariable,
  run: number,
  member: number,
  leads: number[],
): Promise<ReturnType<typeof windowFromData>> {
  const { array, roles } = v;
  const region = roles.map((role, d): [number, number] => {
    if (role === "time") return [run, run + 1];
    if (role === "lead") return [0, array.shape[d]];
    if (role === "member") return [member, member + 1];
    if (role === "level") return [0, 1];
    return [0, Math.min(array.shape[d], array.chunks[d])];
  });
  const size = region.reduce((n, [a, b]) => n * (b - a), 1);
  if (size > WINDOW_CHECK_VALUES) {
    return { window: "undecided", reason: "the store does not say, and its chunks are too large to check" };
  }
  let values: Float32Array | Float64Array;
  try {
    values = await array.read(region);
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw e;
    return { window: "undecided", reason: "its values could not be read to check" };
  }
  const leadDim = roles.indexOf("lead");
  if (leadDim < 0) return { window: "since_start" };
  let stride = 1;
  for (let d = region.length - 1; d > leadDim; d--) stride *= region[d][1] - region[d][0];
  let top = 0;
  for (const x of values) if (Math.abs(x) > top) top = Math.abs(x);
  // Float32 storage and packing round a since-start amount by a hair: drops below that are noise.
  const tol = top * 1e-5;
  const falls = new Set<number>();
  for (let i = 0; i < values.length; i++) {
    const li = Math.floor(i / stride) % leads.length;
    if (li > 0 && values[i] < values[i - stride] - tol) falls.add(li - 1);
  }
  return windowFromData(
    leads,
    [...falls].sort((a, b) => a - b),
  );
}

export interface GroupInput {
  id: string;
  /** Path of the group in the store. */
  path: string;
  format: 2 | 3;
  attrs: Json;
  arrays: Map<string, StoredArray>;
}

const strAttr = (a: Json, k: string): string | undefined => (typeof a[k] === "string" ? (a[k] as string) : undefined);

/** Time units of a coordinate: its CF units, or the unit of a datetime64 data type. */
function timeUnits(arr: StoredArray): string {
  const units = strAttr(arr.meta.attrs, "units");
  if (units) return units;
  const m = /M8\[(\w+)\]|datetime64\[(\w+)\]/.exec(arr.dtype);
  if (m) return `${m[1] ?? m[2]} since 1970-01-01`;
  throw new CorruptDataError(`the time coordinate ${arr.path || "(root)"} has no units`);
}

/** Coordinates of each role: 1-D dimension coordinates, or 0-d scalars for time and lead. */
function findCoordinates(arrays: Map<string, StoredArray>): {
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
function auxiliaryNames(arrays: Map<string, StoredArray>): Set<string> {
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
function horizontalAxis(name: string, arr: StoredArray): "lat" | "lon" | undefined {
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
function entryOf(registry: Registry, stored: string, attrs: Json): VariableEntry | undefined {
  for (const name of [stored, strAttr(attrs, "GRIB_shortName"), strAttr(attrs, "GRIB_cfVarName")]) {
    const e = name ? registry.lookup(name) : undefined;
    if (e) return e;
  }
  return undefined;
}

/**
 * A group whose metadata gridcast cannot use: a fault of the store (503 to clients), not of the
 * request, and not an outage that a retry a moment later would cure.
 */
export class GroupUnreadableError extends StoreUnavailableError {}

export async function buildForecastGroup(input: GroupInput, registry: Registry): Promise<ForecastGroup> {
  try {
    return await build(input, registry);
  } catch (e) {
    // An outage while reading the coordinates stays an outage (retried at once).
    if (e instanceof StoreUnavailableError) throw e;
    const reason = e instanceof GridcastError ? e.message : "its metadata cannot be read";
    throw new GroupUnreadableError(`forecast group ${input.id} cannot be read: ${reason}`, {}, { cause: e });
  }
}

async function build(input: GroupInput, registry: Registry): Promise<ForecastGroup> {
  for (const [name, arr] of input.arrays) {
    const problem = arr.meta.array?.problem;
    if (problem) throw new CorruptDataError(`array ${name}: ${problem}`);
  }
  const { coords: coordNames, scalar } = findCoordinates(input.arrays);
  // Without 1-D latitude/longitude, a projected grid: its y/x axes take the row and column roles.
  let projected: ProjectedAxes | undefined;
  if (!coordNames.lat || !coordNames.lon) {
    projected = findProjectedAxes(input.arrays);
    if (projected) {
      coordNames.lat = projected.yName;
      coordNames.lon = projected.xName;
    }
  }
  if (!coordNames.lat || !coordNames.lon) {
    throw new CorruptDataError("no 1-D latitude and longitude coordinates (lat/latitude, lon/longitude)");
  }
  if (!coordNames.time) {
    throw new CorruptDataError(
      "no time coordinate (time, init_time, forecast_reference_time or a scalar time as cfgrib writes it)",
    );
  }
  const coord = (r: Role) => input.arrays.get(coordNames[r]!)!;
  // A scalar (0-d) coordinate, as cfgrib writes time for a single run, is its one chunk's one value.
  const raw = async (r: Role): Promise<number[]> => {
    const a = coord(r);
    if (a.shape.length > 0) return a.readRaw();
    const ch = await a.chunk([]);
    return [Number(ch.data[0])]; // read at once (see chunk())
  };
  // Coordinates have no missing values: a v2 fill_value that happens to equal a coordinate (zarr's
  // default 0 at longitude 0) must not turn it into NaN, so only scale and offset apply.
  const readFloat = async (r: Role) => {
    const { scale, offset } = coord(r).packing;
    return Float64Array.from(await coord(r).readRaw(), (x) => x * scale + offset);
  };
  const [timeRaw, leadRaw, latRaw, lonRaw, levelRaw, memberRaw] = await Promise.all([
    raw("time"),
    coordNames.lead ? raw("lead") : Promise.resolve([0]),
    readFloat("lat"),
    readFloat("lon"),
    coordNames.level ? coord("level").readRaw() : Promise.resolve(undefined),
    coordNames.member ? coord("member").readRaw() : Promise.resolve(undefined),
  ]);
  const tAttrs = coord("time").meta.attrs;
  const runs = decodeTimes(timeRaw, timeUnits(coord("time")), strAttr(tAttrs, "calendar") ?? "standard");
  if (runs.some((t) => !Number.isFinite(t))) throw new CorruptDataError("the time coordinate has missing values");
  const leads = coordNames.lead ? leadHours(leadRaw, coord("lead").meta.attrs) : [0];
  if (leads.some((h) => !Number.isFinite(h))) throw new CorruptDataError("the lead time coordinate has missing values");
  if (new Set(runs).size !== runs.length) throw new CorruptDataError("the time coordinate repeats a time");
  // A value decoding past the dates a clock can name (an absurd number of days) cannot be a run
  // or valid time: the group is refused with the value, the rest of the store serves on.
  const badRun = runs.findIndex((t) => !(Math.abs(t) <= MAX_DATE_MS));
  if (badRun >= 0) {
    throw new CorruptDataError(
      `the time coordinate's value ${timeRaw[badRun]} at index ${badRun} is not a date gridcast can represent`,
    );
  }
  const badLead = leads.findIndex((h) => runs.some((t) => !(Math.abs(t + h * 3_600_000) <= MAX_DATE_MS)));
  if (badLead >= 0) {
    throw new CorruptDataError(
      `the lead time coordinate's value ${leadRaw[badLead]} at index ${badLead} puts valid times past the dates gridcast can represent`,
    );
  }
  let grid: Grid;
  if (projected) {
    const { projection, bbox, dlat, dlon } = await projectionOf(
      projected,
      lonRaw as Float64Array,
      latRaw as Float64Array,
    );
    grid = { ...gridOf(Float64Array.of(0, 1), Float64Array.of(0, 1)), bbox, dlat, dlon, projection };
    grid.lat = latRaw as Float64Array;
    grid.lon = lonRaw as Float64Array;
    grid.latAscending = projection.dy > 0;
    grid.global = false;
    grid.lon360 = false;
  } else {
    checkAxis("latitude", latRaw as Float64Array);
    checkAxis("longitude", circularLon(lonRaw as Float64Array));
    grid = gridOf(latRaw as Float64Array, lonRaw as Float64Array);
  }
  const analysis = !coordNames.lead;

  const members = memberRaw?.map(Number);
  const controlMember = members ? Math.max(0, members.indexOf(0)) : undefined;
  // The spacing the temporal windows run over: lead steps, or the spacing of an analysis's times.
  const sortedRuns = [...runs].sort((a, b) => a - b);
  const steps = analysis ? sortedRuns.map((t) => (t - sortedRuns[0]) / 3_600_000) : leads;

  const length: Partial<Record<Role, number>> = {
    time: runs.length,
    lead: leads.length,
    level: levelRaw?.length,
    member: members?.length,
    lat: grid.lat.length,
    lon: grid.lon.length,
  };
  const dimRole = new Map<string, Role>();
  for (const [role, name] of Object.entries(coordNames) as [Role, string][]) {
    if (!scalar.has(role)) dimRole.set(input.arrays.get(name)!.dims[0], role);
  }
  // Latitude/longitude axes of other grids (regular lat/lon groups only): the dimension names they
  // index, to the coordinate holding their values.
  const primary: GroupGrid = { lat: coordNames.lat, lon: coordNames.lon, grid };
  const axisCoord = new Map<string, string>([
    [input.arrays.get(coordNames.lat)!.dims[0], coordNames.lat],
    [input.arrays.get(coordNames.lon)!.dims[0], coordNames.lon],
  ]);
  if (!projected) {
    for (const [name, arr] of input.arrays) {
      const axis = dimRole.has(name) ? undefined : horizontalAxis(name, arr);
      if (!axis) continue;
      dimRole.set(name, axis);
      axisCoord.set(name, name);
    }
  }
  const grids = new Map<string, GroupGrid | string>([[`${primary.lat},${primary.lon}`, primary]]);
  /** The grid of a pair of axes, read on first use; a string says why it cannot be used. */
  const gridFor = async (latName: string, lonName: string): Promise<GroupGrid | string> => {
    const key = `${latName},${lonName}`;
    let g = grids.get(key);
    if (g === undefined) {
      try {
        const [lat, lon] = await Promise.all([latName, lonName].map((n) => readAxis(input.arrays.get(n)!)));
        checkAxis("latitude", lat);
        checkAxis("longitude", circularLon(lon));
        g = { lat: latName, lon: lonName, grid: gridOf(lat, lon) };
      } catch (e) {
        if (e instanceof StoreUnavailableError) throw e;
        g = `its grid (${latName}, ${lonName}) cannot be read: ${e instanceof GridcastError ? e.message : "unreadable coordinates"}`;
      }
      grids.set(key, g);
    }
    return g;
  };

  const variables = new Map<string, GroupVariable>();
  const unregistered: UnregisteredArray[] = [];
  const coordSet = new Set(Object.values(coordNames));
  const aux = auxiliaryNames(input.arrays);
  for (const n of projected?.auxiliary ?? []) aux.add(n);
  for (const [stored, arr] of input.arrays) {
    if (coordSet.has(stored) || aux.has(stored)) continue;
    // Scalars and 1-D arrays beside the grid are coordinates too (cfgrib's surface, number, ...).
    if (arr.shape.length < 2) continue;
    const attrs = arr.meta.attrs;
    const skip = (reason: string, refused?: UnregisteredArray["refused"]) =>
      unregistered.push({
        stored,
        reason,
        dims: arr.dims,
        units: strAttr(attrs, "units") ?? null,
        long_name: strAttr(attrs, "long_name") ?? null,
        standard_name: strAttr(attrs, "standard_name") ?? null,
        ...(refused ? { refused } : {}),
      });
    const roles = arr.dims.map((d) => dimRole.get(d));
    if (!roles.includes("lat") || !roles.includes("lon")) {
      skip("not on the group's latitude/longitude grid");
      continue;
    }
    if (roles.indexOf("lat") !== roles.lastIndexOf("lat") || roles.indexOf("lon") !== roles.lastIndexOf("lon")) {
      skip("two dimensions have the same role");
      continue;
    }
    const on = await gridFor(
      axisCoord.get(arr.dims[roles.indexOf("lat")])!,
      axisCoord.get(arr.dims[roles.indexOf("lon")])!,
    );
    if (typeof on === "string") {
      skip(on);
      continue;
    }
    length.lat = on.grid.lat.length;
    length.lon = on.grid.lon.length;
    const unknown = arr.dims.filter((_, i) => roles[i] === undefined);
    if (unknown.length) {
      skip(`dimension ${unknown.join(", ")} is not one gridcast knows`);
      continue;
    }
    if (new Set(roles).size !== roles.length) {
      skip("two dimensions have the same role");
      continue;
    }
    const bad = roles.findIndex((r, i) => length[r!] !== arr.shape[i]);
    if (bad >= 0) {
      skip(`dimension ${arr.dims[bad]} has ${arr.shape[bad]} entries, its coordinate ${length[roles[bad]!]}`);
      continue;
    }
    const entry = entryOf(registry, stored, attrs);
    if (!entry) {
      skip("not a registered variable name");
      continue;
    }
    // An encoding gridcast does not understand refuses the variable, loudly, never served raw.
    const problem = variableProblem(attrs, arr.packing);
    if (problem) {
      skip(`${entry.name} refused: ${problem}`, { variable: entry.name, problem });
      continue;
    }
    if (variables.has(entry.name)) {
      skip(`a second array for ${entry.name} (${variables.get(entry.name)!.stored} is served)`);
      continue;
    }
    const storedUnits = strAttr(attrs, "units") ?? entry.units;
    const convert = converter(storedUnits, entry.units);
    const identity = convert !== undefined && convert(0) === 0 && convert(1) === 1;
    variables.set(entry.name, {
      name: entry.name,
      stored,
      entry,
      array: arr,
      roles: roles as Role[],
      units: convert ? entry.units : storedUnits,
      storedUnits,
      canonical: convert !== undefined,
      convert: identity ? undefined : convert,
      temporal: resolveTemporal(entry.temporal, attrs, steps, analysis),
      grid: on.grid,
      gridCoords: { lat: on.lat, lon: on.lon },
    });
  }
  for (const v of variables.values()) {
    if (v.temporal.kind === "instantaneous" || v.temporal.window !== "since_start" || analysis || leads.length < 2) {
      continue;
    }
    if (ecmwfAccumulation(v.array.meta.attrs, input.attrs)) continue;
    const latest = runs.indexOf(Math.max(...runs));
    v.temporal = withDataWindow(v.temporal, await accumulationWindow(v, latest, controlMember ?? 0, leads));
  }
  const ingested = await ingestedHours(input.arrays, input.arrays.get(coordNames.time!)!, runs.length);
  const name = input.id.slice(input.id.indexOf("/") + 1);
  return {
    ingested,
    id: input.id,
    name,
    path: input.path,
    format: input.format,
    attrs: input.attrs,
    runs,
    leads,
    analysis,
    ...levelsIn(levelRaw, coordNames.level ? strAttr(coord("level").meta.attrs, "units") : undefined),
    members,
    controlMember,
    grid,
    grids: [
      primary,
      ...[...grids.values()].filter((g): g is GroupGrid => typeof g !== "string" && g !== primary),
    ].filter((g) => g === primary || [...variables.values()].some((v) => v.grid === g.grid)),
    variables,
    unregistered: unregistered.sort((a, b) => a.stored.localeCompare(b.stored)),
    coordNames: Object.fromEntries(Object.entries(coordNames).filter(([r]) => !scalar.has(r as Role))) as Partial<
      Record<Role, string>
    >,
  };
}
