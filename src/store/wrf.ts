// What WRF output says of itself, read where its own conventions differ from CF (raw wrfout written
// to Zarr by xarray, or as xwrf leaves it): one simulation is one run, started at the global
// SIMULATION_START_DATE, whose times (XTIME, or xwrf's Time) are its leads; the rotation of its
// grid to true north at each node (COSALPHA/SINALPHA); total precipitation in two parts (RAINC,
// the cumulus scheme's, and RAINNC, the grid-scale one), both accumulated since the start.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import { decodeTimes, unitMs } from "./cf.ts";
import type { Role } from "./dims.ts";
import { leadHours, strAttr, timeUnits } from "./group-coordinates.ts";
import type { Json } from "./metadata.ts";

const HOUR_MS = 3_600_000;

/** WRF's own spelling of its simulation's start (`2024-07-01_00:00:00`), as UTC milliseconds. */
export function wrfStart(groupAttrs: Json): number | undefined {
  return wrfDate(strAttr(groupAttrs, "SIMULATION_START_DATE"));
}

/** A date as WRF writes it (`2024-07-01_03:00:00`, in Times and its globals), as UTC milliseconds. */
function wrfDate(s: string | undefined): number | undefined {
  const m = s ? /^(\d{4})-(\d\d)-(\d\d)_(\d\d):(\d\d):(\d\d)$/.exec(s.trim()) : null;
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number);
  const t = Date.UTC(y, mo - 1, d, h, mi, se);
  return Number.isFinite(t) ? t : undefined;
}

/** The run and lead axes of a WRF group, as time-axes.ts gives them (see TimeAxes there). */
export interface WrfAxes {
  runs: number[];
  leads: number[];
  analysis: false;
  coords: { time: string; lead: string };
  notDims: Set<Role>;
  dimRoles: Map<string, Role>;
  how: string;
}

/**
 * A WRF simulation as one run with leads: the run from SIMULATION_START_DATE, the leads from XTIME
 * (minutes since the start; a date once xarray has decoded it, a duration as older xwrf leaves it)
 * or, without XTIME, from xwrf's Time (the valid times decoded from Times), else from Times itself.
 * Undefined for a group that is no WRF output or has none of these along its Time dimension.
 */
export async function wrfTimeAxes(arrays: Map<string, StoredArray>, groupAttrs: Json): Promise<WrfAxes | undefined> {
  const start = wrfStart(groupAttrs);
  if (start === undefined) return undefined;
  const along = (name: string) => {
    const a = arrays.get(name);
    return a && a.shape.length === 1 && a.dims[0] === "Time" ? a : undefined;
  };
  const name = along("XTIME") ? "XTIME" : along("Time") ? "Time" : undefined;
  if (!name) {
    const times = along("Times");
    return times ? timesAxes(times, start) : undefined;
  }
  const arr = along(name)!;
  const raw = arr.shape[0] === 0 ? [] : await arr.readRaw();
  const units = strAttr(arr.meta.attrs, "units");
  const date = units ? /\bsince\b/i.test(units) : /M8\[|datetime64/.test(arr.dtype);
  let leads: number[];
  if (date) {
    const valid = decodeTimes(raw, timeUnits(arr), strAttr(arr.meta.attrs, "calendar") ?? "standard");
    leads = valid.map((t) => (t - start) / HOUR_MS);
  } else {
    if (units === undefined && !/m8\[|timedelta64/.test(arr.dtype)) return undefined;
    if (units !== undefined) unitMs(units);
    leads = leadHours(raw, units === undefined ? { units: timedeltaUnits(arr.dtype) } : arr.meta.attrs);
  }
  return oneRun(start, leads, name, `leads from ${name}${date ? " less the start" : ""}`);
}

/** The run and its leads, once every lead is checked to lie at or after the start, each once. */
function oneRun(start: number, leads: number[], name: string, how: string): WrfAxes {
  const bad = leads.findIndex((h) => !Number.isFinite(h) || h < 0);
  if (bad >= 0) {
    throw new CorruptDataError(
      `WRF's ${name} at index ${bad} lies before SIMULATION_START_DATE (or is missing or unreadable), ` +
        "so it gives no lead of the simulation",
    );
  }
  if (new Set(leads).size !== leads.length) throw new CorruptDataError(`WRF's ${name} repeats a time`);
  return {
    runs: [start],
    leads,
    analysis: false,
    coords: { time: name, lead: name },
    notDims: new Set<Role>(["time"]),
    dimRoles: new Map<string, Role>([["Time", "lead"]]),
    how: `one WRF run from SIMULATION_START_DATE, ${how}`,
  };
}

/**
 * Leads from WRF's Times alone (`2024-07-01_03:00:00` per time, fixed-width bytes), for a wrfout
 * written without XTIME: each read as WRF spells it, less the start. Undefined when the array
 * holds no text gridcast can read (the group is then refused for want of a time coordinate).
 */
async function timesAxes(times: StoredArray, start: number): Promise<WrfAxes | undefined> {
  if (!/^\|?S\d+$/.test(times.dtype)) return undefined;
  const texts: string[] = [];
  const per = times.chunks[0];
  for (let c = 0; c * per < times.shape[0]; c++) {
    const data = (await times.chunk([c])).data as unknown as { get?: (i: number) => unknown };
    if (typeof data.get !== "function") return undefined;
    for (let i = 0; i < Math.min(per, times.shape[0] - c * per); i++) texts.push(String(data.get(i)));
  }
  const leads = texts.map((t) => ((wrfDate(t) ?? Number.NaN) - start) / HOUR_MS);
  return oneRun(start, leads, "Times", "leads from Times less the start");
}

/** The unit of a timedelta64 data type, as CF spells it. */
function timedeltaUnits(dtype: string): string {
  const m = /m8\[(\w+)\]|timedelta64\[(\w+)\]/.exec(dtype);
  const u = m?.[1] ?? m?.[2] ?? "ns";
  return { ns: "nanoseconds", us: "microseconds", ms: "milliseconds", s: "seconds", m: "minutes", h: "hours" }[u] ?? u;
}

/** A group written by WRF: its simulation start or its map projection among the globals. */
export const isWrf = (groupAttrs: Json): boolean =>
  wrfStart(groupAttrs) !== undefined || groupAttrs.MAP_PROJ !== undefined;

/** WRF's two parts of total precipitation: the cumulus scheme's and the grid-scale one. */
export const WRF_RAIN_PARTS = new Set(["RAINC", "RAINNC"]);
/** WRF's counters of how often each part was reset by bucket_mm (then each part wraps). */
const WRF_RAIN_BUCKETS = ["I_RAINC", "I_RAINNC"];

/** What the pairing needs of a variable (forecast-group.ts's GroupVariable has it). */
interface RainPart {
  stored: string;
  roles: string[];
  array: StoredArray;
  canonical: boolean;
  grid: unknown;
  plus?: RainPart;
}

/**
 * WRF's total precipitation as one variable: RAINC with RAINNC added on every read (`plus`), both
 * accumulated since the simulation's start. Undefined, with each part present skipped and the
 * reason, when the total cannot be had whole: a part missing, the parts on other dimensions or in
 * units that do not both convert, or bucket counters (I_RAINC, I_RAINNC) saying the parts wrap —
 * never one part answered as the total.
 */
export function wrfPrecipitation<V extends RainPart>(
  parts: Map<string, { v: V; skip: (reason: string) => void }>,
  arrays: Map<string, StoredArray>,
): { v: V; skip: (reason: string) => void } | undefined {
  if (parts.size === 0) return undefined;
  const c = parts.get("RAINC");
  const nc = parts.get("RAINNC");
  const buckets = WRF_RAIN_BUCKETS.filter((n) => arrays.has(n));
  let problem: string | undefined;
  if (buckets.length) {
    problem =
      `${buckets.join(" and ")} count resets of the parts by WRF's bucket_mm, which gridcast does not add back ` +
      "(write the run with bucket_mm = -1, or add the buckets into RAINC/RAINNC)";
  } else if (!c || !nc) {
    problem =
      `${c ? "RAINNC" : "RAINC"} is not in the group or cannot be served (see its own entry), ` +
      "and one part alone is not the total";
  } else if (
    c.v.grid !== nc.v.grid ||
    c.v.roles.join() !== nc.v.roles.join() ||
    c.v.array.shape.join() !== nc.v.array.shape.join()
  ) {
    problem = "RAINC and RAINNC lie on other dimensions";
  } else if (!c.v.canonical || !nc.v.canonical) {
    problem = "the units of RAINC and RAINNC do not both convert to the registry's";
  }
  if (problem || !c || !nc) {
    for (const p of parts.values()) {
      p.skip(
        `tp refused: WRF's total precipitation is RAINC + RAINNC (each accumulated since the start), and ${problem}`,
      );
    }
    return undefined;
  }
  c.v.plus = nc.v;
  return c;
}

/** How far COSALPHA² + SINALPHA² may lie from 1 before the pair is no rotation. */
const ROTATION_TOLERANCE = 1e-3;

/**
 * The bearing of grid north at every node (degrees clockwise from true north, row-major over
 * ny × nx) from WRF's COSALPHA/SINALPHA, read at the first time: WRF turns its grid-relative winds
 * to earth-relative as u·cos α − v·sin α (east) and v·cos α + u·sin α (north), so grid north lies
 * at −α. Undefined when the group has not both arrays on the grid's dimensions; throws naming them
 * when a node's pair is missing or is no rotation (cos² + sin² far from 1).
 */
export async function wrfGridNorth(
  arrays: Map<string, StoredArray>,
  yDim: string,
  xDim: string,
): Promise<Float32Array | undefined> {
  const cos = arrays.get("COSALPHA");
  const sin = arrays.get("SINALPHA");
  const onGrid = (a: StoredArray | undefined) =>
    a !== undefined && a.shape.length >= 2 && a.dims.at(-2) === yDim && a.dims.at(-1) === xDim;
  if (!onGrid(cos) || !onGrid(sin) || cos!.shape.join() !== sin!.shape.join()) return undefined;
  const region = cos!.shape.map((n, d): [number, number] => (d < cos!.shape.length - 2 ? [0, 1] : [0, n]));
  const [c, s] = await Promise.all([cos!.read(region), sin!.read(region)]);
  const out = new Float32Array(c.length);
  for (let k = 0; k < c.length; k++) {
    const norm = c[k] * c[k] + s[k] * s[k];
    if (!(Math.abs(norm - 1) <= ROTATION_TOLERANCE)) {
      const nx = cos!.shape.at(-1)!;
      throw new CorruptDataError(
        `WRF's COSALPHA/SINALPHA at node (${Math.floor(k / nx)}, ${k % nx}) are ${c[k]}, ${s[k]}: no rotation ` +
          "(missing, or cos² + sin² is not 1), so the winds along the grid cannot be turned to true north",
      );
    }
    out[k] = (-Math.atan2(s[k], c[k]) * 180) / Math.PI;
  }
  return out;
}

/** WRF's arrays that describe its grid, not weather (part of the grid once read). */
export const WRF_ROTATION = ["COSALPHA", "SINALPHA"];

/**
 * WRF's latitude/longitude are stored per time and read at the first: refuses a moving nest, whose
 * nodes lie elsewhere at later times (its corners and centre compared at the last time), since
 * every later value would be placed at a node it is not at.
 */
export async function checkFixedNodes(lat: StoredArray, lon: StoredArray): Promise<void> {
  if (lat.shape.length !== 3 || lat.shape[0] < 2) return;
  const [nt, ny, nx] = lat.shape;
  const probes = [
    [0, 0],
    [0, nx - 1],
    [ny - 1, 0],
    [ny - 1, nx - 1],
    [ny >> 1, nx >> 1],
  ];
  for (const arr of [lat, lon]) {
    for (const [j, i] of probes) {
      const at = (t: number) =>
        arr.read([
          [t, t + 1],
          [j, j + 1],
          [i, i + 1],
        ]);
      const [first, last] = await Promise.all([at(0), at(nt - 1)]);
      if (!(Math.abs(first[0] - last[0]) <= 1e-4)) {
        const name = arr.path.split("/").pop();
        throw new CorruptDataError(
          `WRF's ${name} at node (${j}, ${i}) is ${first[0]} at the first time and ${last[0]} at the last: ` +
            "a moving nest, whose nodes gridcast would place where they were at the start (not served)",
        );
      }
    }
  }
}
