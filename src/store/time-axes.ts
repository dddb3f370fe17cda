// Which stored coordinates say when each run started and how far ahead each value lies, read the
// CF way. gridcast's model is runs × leads; producers spell it in several ways, all decided here
// once, at discovery:
//   - a run axis and a lead axis (cfgrib time + step, dynamical.org init_time + lead_time,
//     WeatherBench2 time + prediction_timedelta, CF forecast_reference_time + forecast_period);
//   - a reference time (scalar, or an axis of one) with `time` as the valid time (MET Norway,
//     Met Office): the leads are the valid times less the reference time;
//   - a duration `time` with a valid-time coordinate beside it (GraphCast's rollout output, whose
//     `datetime` sits on (batch, time)): the runs are the valid times less the leads;
//   - a reference time and a lead that are coordinates along one concatenated dimension (kerchunk's
//     MultiZarrToZarr of GRIB messages along valid_time): one run whose leads lie along it, or, when
//     the reference time varies and the lead does not, each entry a run with that one lead;
//   - WRF output (SIMULATION_START_DATE among the globals): one run, its XTIME the leads (wrf.ts);
//   - times alone (ERA5, analyses): each time is a run with the single lead 0.
// A group that carries any reference-time information is never read as an analysis: when the
// valid times cannot be told, it is refused with the reason.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import { decodeTimes, unitMs } from "./cf.ts";
import type { Role } from "./dims.ts";
import { leadHours, strAttr, timeUnits } from "./group-coordinates.ts";
import type { Json } from "./metadata.ts";
import { wrfTimeAxes } from "./wrf.ts";

/** The furthest instant from 1970 a JavaScript date can name (±100 million days), in ms. */
const MAX_DATE_MS = 8.64e15;
const HOUR_MS = 3_600_000;
/** Names a reference (run start) time goes by when it carries no standard_name saying so. */
const REFERENCE_NAMES = new Set(["forecast_reference_time", "reference_time", "init_time", "run", "init"]);
/** Names a valid-time coordinate goes by when it carries no standard_name saying so. */
const VALID_NAMES = new Set(["time", "valid_time", "datetime"]);

export interface TimeAxes {
  /** Run (initialisation) times, UTC milliseconds, in storage order. */
  runs: number[];
  /** Lead times in hours, in storage order. */
  leads: number[];
  analysis: boolean;
  /** Stored coordinate named for each of the two roles (what /data describes them from). */
  coords: { time: string; lead?: string };
  /** Roles whose coordinate is no dimension of the variables (a scalar, or a 2-D valid time). */
  notDims: Set<Role>;
  /** Dimensions that take the time or lead role, by stored name. */
  dimRoles: Map<string, Role>;
  /** How the axes were read, in words (inspect shows it). */
  how: string;
}

/** The coordinates of each role findCoordinates found by name. */
export interface NamedTimeCoords {
  time?: string;
  lead?: string;
  /** Roles found as 0-d scalars. */
  scalar: Set<Role>;
}

const isDate = (a: StoredArray) => {
  const u = strAttr(a.meta.attrs, "units");
  return u ? /\bsince\b/i.test(u) : /M8\[|datetime64/.test(a.dtype);
};

const isDuration = (a: StoredArray) => {
  const u = strAttr(a.meta.attrs, "units");
  if (u === undefined) return /m8\[|timedelta64/.test(a.dtype);
  if (/\bsince\b/i.test(u)) return false;
  try {
    unitMs(u);
    return true;
  } catch {
    return false;
  }
};

const standardName = (a: StoredArray) => strAttr(a.meta.attrs, "standard_name")?.toLowerCase();

/** A 1-D array indexing its own dimension, or a 0-d scalar. */
const axisOrScalar = (name: string, a: StoredArray) =>
  a.shape.length === 0 || (a.shape.length === 1 && a.dims[0] === name);

/** Raw stored values of any small coordinate, a scalar's one value included. */
async function rawOf(a: StoredArray): Promise<number[]> {
  if (a.shape.length > 0) return a.readRaw();
  const ch = await a.chunk([]);
  return [Number(ch.data[0])];
}

async function datesOf(name: string, a: StoredArray): Promise<number[]> {
  const raw = await rawOf(a);
  const t = decodeTimes(raw, timeUnits(a), strAttr(a.meta.attrs, "calendar") ?? "standard");
  if (t.some((x) => !Number.isFinite(x))) throw new CorruptDataError(`the time coordinate ${name} has missing values`);
  // A value decoding past the dates a clock can name (an absurd number of days) cannot be a time.
  const bad = t.findIndex((x) => !(Math.abs(x) <= MAX_DATE_MS));
  if (bad >= 0) {
    throw new CorruptDataError(
      `the time coordinate's value ${raw[bad]} at index ${bad} is not a date gridcast can represent`,
    );
  }
  return t;
}

function sameEverywhere(values: number[], what: string): number {
  for (const v of values) {
    if (v !== values[0]) {
      throw new CorruptDataError(
        `${what} differs along the valid times, so the values are no run × lead forecast gridcast can serve`,
      );
    }
  }
  return values[0];
}

/**
 * The run and lead axes of a group, from the coordinates findCoordinates named and the CF meaning
 * (standard_name, units) of the others. Throws CorruptDataError naming the coordinates and the
 * reason when they say nothing gridcast can serve without guessing.
 */
export async function timeAxesOf(
  arrays: Map<string, StoredArray>,
  named: NamedTimeCoords,
  groupAttrs: Json = {},
): Promise<TimeAxes> {
  // WRF: one simulation, its times the leads of the run SIMULATION_START_DATE names.
  const wrf = await wrfTimeAxes(arrays, groupAttrs);
  if (wrf) return wrf;
  const entries = [...arrays.entries()];
  const reference = entries.find(
    ([n, a]) =>
      axisOrScalar(n, a) &&
      isDate(a) &&
      (standardName(a) === "forecast_reference_time" ||
        (standardName(a) === undefined && REFERENCE_NAMES.has(n.toLowerCase()))),
  );
  const leadCoord = named.lead ? arrays.get(named.lead) : undefined;
  const valid = entries.find(
    ([n, a]) =>
      n !== reference?.[0] &&
      isDate(a) &&
      (standardName(a) === "time" || (standardName(a) === undefined && VALID_NAMES.has(n.toLowerCase()))),
  );

  const concat = alongConcat(entries);
  if (concat) return concatAxes(concat);

  // A reference time with valid times on their own axis, no lead axis: leads = valid - reference.
  if (reference && !leadCoord && valid && axisOrScalar(valid[0], valid[1])) {
    const [refName, refArr] = reference;
    const [validName, validArr] = valid;
    const runs = await datesOf(refName, refArr);
    if (runs.length !== 1) {
      throw new CorruptDataError(
        `${refName} holds ${runs.length} reference times but the valid times ${validName} are an axis of their own: ` +
          "a layout with one lead per run and valid time gridcast cannot serve (store forecast_period or a lead axis)",
      );
    }
    const validTimes = await datesOf(validName, validArr);
    if (new Set(validTimes).size !== validTimes.length) {
      throw new CorruptDataError(`the valid time coordinate ${validName} repeats a time`);
    }
    const dimRoles = new Map<string, Role>();
    if (refArr.shape.length === 1) dimRoles.set(refArr.dims[0], "time");
    if (validArr.shape.length === 1) dimRoles.set(validArr.dims[0], "lead");
    const notDims = new Set<Role>();
    if (refArr.shape.length === 0) notDims.add("time");
    if (validArr.shape.length === 0) notDims.add("lead");
    return {
      runs,
      leads: validTimes.map((t) => (t - runs[0]) / HOUR_MS),
      analysis: false,
      coords: { time: refName, lead: validName },
      notDims,
      dimRoles,
      how: `run from ${refName}, leads from the valid times ${validName} less the run`,
    };
  }

  // A duration `time` (no lead named otherwise) beside a valid-time coordinate: runs = valid - lead.
  const durationTime = named.time && !leadCoord ? arrays.get(named.time) : undefined;
  if (durationTime && named.time && isDuration(durationTime) && durationTime.shape.length === 1) {
    const leadName = named.time;
    const validOf = entries.find(
      ([n, a]) => n !== leadName && isDate(a) && a.shape.length >= 1 && a.dims.at(-1) === durationTime.dims[0],
    );
    if (!validOf) {
      throw new CorruptDataError(
        `the time coordinate ${leadName} is a duration (units "${strAttr(durationTime.meta.attrs, "units") ?? durationTime.dtype}") ` +
          "and no valid-time coordinate along it says when the run started (GraphCast writes one as datetime)",
      );
    }
    const [validName, validArr] = validOf;
    const leads = leadHours(await rawOf(durationTime), durationTime.meta.attrs);
    const validTimes = await datesOf(validName, validArr);
    const perRun = leads.length;
    const runs: number[] = [];
    for (let r = 0; r < validTimes.length / perRun; r++) {
      const starts = leads.map((h, i) => validTimes[r * perRun + i] - h * HOUR_MS);
      runs.push(sameEverywhere(starts, `the run start that ${validName} less ${leadName} gives`));
    }
    const dimRoles = new Map<string, Role>([[durationTime.dims[0], "lead"]]);
    const notDims = new Set<Role>(["time"]);
    if (validArr.shape.length === 2 && runs.length > 1) {
      // Several runs along the valid time's other dimension (GraphCast's batch): that is the run axis.
      dimRoles.set(validArr.dims[0], "time");
    } else if (validArr.shape.length > 2) {
      throw new CorruptDataError(`the valid time coordinate ${validName} has ${validArr.shape.length} dimensions`);
    }
    checkDistinct(runs, validName);
    return {
      runs,
      leads,
      analysis: false,
      coords: { time: validName, lead: leadName },
      notDims,
      dimRoles,
      how: `leads from the duration ${leadName}, run from the valid times ${validName} less the lead`,
    };
  }

  if (!named.time) {
    throw new CorruptDataError(
      "no time coordinate (time, init_time, forecast_reference_time or a scalar time as cfgrib writes it)",
    );
  }
  const timeArr = arrays.get(named.time)!;
  const runs = await datesOf(named.time, timeArr);
  checkDistinct(runs, named.time);
  const notDims = new Set<Role>([...named.scalar].filter((r) => r === "time" || r === "lead"));
  if (!leadCoord) {
    // Times alone. A reference time without anything saying the valid time is not an analysis.
    if (reference || standardName(timeArr) === "forecast_reference_time") {
      throw new CorruptDataError(
        `${named.time} gives reference times but no lead axis (step, lead_time, forecast_period) or valid time ` +
          "coordinate says how far ahead the values lie",
      );
    }
    return {
      runs,
      leads: [0],
      analysis: true,
      coords: { time: named.time },
      notDims,
      dimRoles: new Map(),
      how: `each time of ${named.time} is a run with lead 0`,
    };
  }
  const leads = leadHours(await rawOf(leadCoord), leadCoord.meta.attrs);
  if (leads.some((h) => !Number.isFinite(h))) throw new CorruptDataError("the lead time coordinate has missing values");
  const badLead = leads.findIndex((h) => runs.some((t) => !(Math.abs(t + h * HOUR_MS) <= MAX_DATE_MS)));
  if (badLead >= 0) {
    const raw = await rawOf(leadCoord);
    throw new CorruptDataError(
      `the lead time coordinate's value ${raw[badLead]} at index ${badLead} puts valid times past the dates gridcast can represent`,
    );
  }
  return {
    runs,
    leads,
    analysis: false,
    coords: { time: named.time, lead: named.lead },
    notDims,
    dimRoles: new Map(),
    how: `runs from ${named.time}, leads from ${named.lead}`,
  };
}

/** A reference time and a duration that are both 1-D coordinates along one other dimension. */
interface Concat {
  dim: string;
  ref: [string, StoredArray];
  lead: [string, StoredArray];
}

function alongConcat(entries: [string, StoredArray][]): Concat | undefined {
  const along = (n: string, a: StoredArray) => a.shape.length === 1 && a.dims[0] !== n;
  const ref = entries.find(
    ([n, a]) =>
      along(n, a) &&
      isDate(a) &&
      (standardName(a) === "forecast_reference_time" ||
        (standardName(a) === undefined && (REFERENCE_NAMES.has(n.toLowerCase()) || n === "time"))),
  );
  if (!ref) return undefined;
  const dim = ref[1].dims[0];
  const lead = entries.find(([n, a]) => along(n, a) && a.dims[0] === dim && isDuration(a));
  return lead ? { dim, ref, lead } : undefined;
}

/**
 * Run and lead axes from a reference time and a lead along one concatenated dimension: a fixed
 * reference time makes it the lead axis of one run, a fixed lead makes it the run axis (an analysis
 * when that lead is 0); both varying is no runs × leads grid, and is refused with the reason.
 */
async function concatAxes({ dim, ref: [refName, refArr], lead: [leadName, leadArr] }: Concat): Promise<TimeAxes> {
  const refs = await datesOf(refName, refArr);
  const leads = leadHours(await rawOf(leadArr), leadArr.meta.attrs);
  if (leads.some((h) => !Number.isFinite(h)))
    throw new CorruptDataError(`the lead coordinate ${leadName} has missing values`);
  const oneRun = refs.every((t) => t === refs[0]);
  const oneLead = leads.every((h) => h === leads[0]);
  if (oneRun) {
    if (new Set(leads).size !== leads.length) {
      throw new CorruptDataError(`${leadName} repeats a lead along ${dim} within one run of ${refName}`);
    }
    return {
      runs: [refs[0]],
      leads,
      analysis: false,
      coords: { time: refName, lead: leadName },
      notDims: new Set<Role>(["time"]),
      dimRoles: new Map<string, Role>([[dim, "lead"]]),
      how: `one run from ${refName}, leads from ${leadName}, both along ${dim}`,
    };
  }
  if (oneLead) {
    checkDistinct(refs, refName);
    const analysis = leads[0] === 0;
    return {
      runs: refs,
      leads: [leads[0]],
      analysis,
      coords: analysis ? { time: refName } : { time: refName, lead: leadName },
      notDims: new Set<Role>(["lead"]),
      dimRoles: new Map<string, Role>([[dim, "time"]]),
      how: analysis
        ? `each entry of ${dim} is a run from ${refName} with lead 0 (${leadName} is 0 throughout)`
        : `each entry of ${dim} is a run from ${refName} with the one lead ${leads[0]} h of ${leadName}`,
    };
  }
  throw new CorruptDataError(
    `${refName} and ${leadName} both vary along ${dim}: one entry per run and lead is no runs × leads grid ` +
      "gridcast can serve (concatenate one run at a time, or along time and step)",
  );
}

function checkDistinct(runs: number[], name: string): void {
  if (new Set(runs).size !== runs.length) throw new CorruptDataError(`the time coordinate ${name} repeats a time`);
}
