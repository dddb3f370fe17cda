// CF-convention decoding: time units ("hours since 2024-01-01 00:00"), calendars, timedeltas and
// packed values (scale_factor, add_offset, _FillValue, missing_value).
import { CorruptDataError } from "../errors.ts";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  nanosecond: 1e-6,
  nanoseconds: 1e-6,
  us: 1e-3,
  microsecond: 1e-3,
  microseconds: 1e-3,
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** Milliseconds per unit for a timedelta unit name ("hours", "s", ...). */
export function unitMs(unit: string): number {
  const ms = UNIT_MS[unit.trim().toLowerCase()];
  if (ms === undefined) throw new CorruptDataError(`unsupported time unit "${unit}"`);
  return ms;
}

/** Parse "<unit> since <date>[ <time>][ <tz>]" into unit milliseconds and the epoch (UTC ms). */
export function parseTimeUnits(units: string): { unitMs: number; epochMs: number; epochParts: number[] } {
  const m =
    /^\s*(\w+)\s+since\s+(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?)?\s*(Z|UTC|[+-]\d{1,2}(?::?\d{2})?)?\s*$/i.exec(
      units,
    );
  if (!m) throw new CorruptDataError(`unsupported CF time units "${units}"`);
  const [, unit, y, mo, d, h = "0", mi = "0", s = "0", tz] = m;
  let offsetMs = 0;
  if (tz && !/^(Z|UTC)$/i.test(tz)) {
    const t = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(tz)!;
    offsetMs = (t[1] === "-" ? -1 : 1) * (Number(t[2]) * 60 + Number(t[3] ?? 0)) * 60_000;
  }
  const parts = [Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s)];
  const epochMs = Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], 0) + parts[5] * 1000 - offsetMs;
  return { unitMs: unitMs(unit), epochMs, epochParts: parts };
}

const REAL_CALENDARS = new Set(["standard", "gregorian", "proleptic_gregorian", "julian", ""]);

/** Decode CF time values to UTC milliseconds, honouring the calendar attribute. */
export function decodeTimes(values: ArrayLike<number | bigint>, units: string, calendar = "standard"): number[] {
  const { unitMs: u, epochMs, epochParts } = parseTimeUnits(units);
  const cal = calendar.toLowerCase();
  const nums = Array.from(values, (v) => Number(v));
  if (REAL_CALENDARS.has(cal)) return nums.map((v) => epochMs + v * u);
  // Model calendars: count days in the model calendar, then name the same Y-M-D in real time.
  const daysInMonth = (_year: number, month: number): number => {
    if (cal === "360_day") return 30;
    const base = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
    if (month !== 2) return base;
    if (cal === "noleap" || cal === "365_day") return 28;
    if (cal === "all_leap" || cal === "366_day") return 29;
    throw new CorruptDataError(`unsupported calendar "${calendar}"`);
  };
  return nums.map((v) => {
    let [year, month, day] = epochParts;
    const totalMs = ((epochParts[3] * 60 + epochParts[4]) * 60 + epochParts[5]) * 1000 + v * u;
    let days = Math.floor(totalMs / 86_400_000);
    const rest = totalMs - days * 86_400_000;
    days += day - 1;
    day = 1;
    while (days < 0) {
      month--;
      if (month < 1) {
        month = 12;
        year--;
      }
      days += daysInMonth(year, month);
    }
    while (days >= daysInMonth(year, month)) {
      days -= daysInMonth(year, month);
      month++;
      if (month > 12) {
        month = 1;
        year++;
      }
    }
    return Date.UTC(year, month - 1, days + 1) + rest;
  });
}

/** Packing and missing-value rules of one variable, read from its attributes. */
export interface Packing {
  scale: number;
  offset: number;
  /** Raw values that mean "missing" (compared before unpacking). */
  missing: number[];
}

/**
 * `zarrFillIsMissing`: in Zarr v2 stores written by xarray the array's fill_value doubles as
 * _FillValue, so it marks missing cells; in Zarr v3 only the CF attributes do (an integer v3 array's
 * fill_value of 0 is just the value of unwritten chunks, and real zeros must stay zeros).
 */
export function packingFrom(attrs: Record<string, unknown>, zarrFill: unknown, zarrFillIsMissing: boolean): Packing {
  const num = (v: unknown): number | undefined => {
    if (typeof v === "number") return v;
    if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
    if (v === "NaN") return Number.NaN;
    return undefined;
  };
  const missing: number[] = [];
  for (const k of ["_FillValue", "missing_value"]) {
    const v = attrs[k];
    for (const x of Array.isArray(v) ? v : [v]) {
      const n = num(x);
      if (n !== undefined && !Number.isNaN(n)) missing.push(n);
    }
  }
  if (zarrFillIsMissing) {
    const n = num(zarrFill);
    if (n !== undefined && !Number.isNaN(n) && !missing.includes(n)) missing.push(n);
  }
  return { scale: num(attrs.scale_factor) ?? 1, offset: num(attrs.add_offset) ?? 0, missing };
}

/** Physical value of one raw stored value (NaN when it is a missing marker). */
export function unpack(raw: number, p: Packing): number {
  if (Number.isNaN(raw)) return Number.NaN;
  for (const m of p.missing) if (raw === m) return Number.NaN;
  return raw * p.scale + p.offset;
}
