// CF-convention decoding: time units ("hours since 2024-01-01 00:00"), calendars, timedeltas, and the
// one decoder of stored values (_FillValue, missing_value, _Unsigned, scale_factor, add_offset) that
// every read path goes through: /point, exports, click values, map tiles, /data and item previews.
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

/** Milliseconds per unit for a timedelta unit name ("hours", "s", or a multiple: "6 hours"). */
export function unitMs(unit: string): number {
  const m = /^\s*(\d+(?:\.\d+)?\s+)?(\w+)\s*$/.exec(unit);
  const ms = m ? UNIT_MS[m[2].toLowerCase()] : undefined;
  if (ms === undefined) throw new CorruptDataError(`unsupported time unit "${unit}"`);
  return m?.[1] ? Number(m[1]) * ms : ms;
}

/** Parse "<unit> since <date>[ <time>][ <tz>]" into unit milliseconds and the epoch (UTC ms). */
export function parseTimeUnits(units: string): { unitMs: number; epochMs: number; epochParts: number[] } {
  const m =
    /^\s*((?:\d+(?:\.\d+)?\s+)?\w+)\s+since\s+(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2}(?:\.\d+)?))?)?\s*(Z|UTC|[+-]\d{1,2}(?::?\d{2})?)?\s*$/i.exec(
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

/**
 * How the stored values of one array become physical values, following xarray's CF rules:
 * reinterpret the integers as `_Unsigned` says, mask every marker of `_FillValue` and
 * `missing_value` (compared in the stored data type), then value · scale_factor + add_offset.
 */
export interface Decoding {
  scale: number;
  offset: number;
  /** Stored values (after the _Unsigned reinterpretation) that mean "missing". */
  missing: number[];
  /**
   * _Unsigned: n > 0 reads n-bit signed integers as unsigned ("true"), n < 0 reads |n|-bit
   * unsigned integers as signed ("false"); 0 leaves them as stored.
   */
  unsigned: number;
  /**
   * The one _FillValue as stored (before _Unsigned, rounded to a float32 array's precision): what
   * both /data views publish as the marker.
   */
  fillValue: number | undefined;
  /** The other markers, as missing_value (extra _FillValue entries join them). */
  missingValue: number[];
  /**
   * Why gridcast cannot decode this array's values (an encoding it does not understand); reads
   * are then refused naming it, never answered with the stored numbers.
   */
  problem?: string;
}

const PLAIN: Decoding = { scale: 1, offset: 0, missing: [], unsigned: 0, fillValue: undefined, missingValue: [] };

const INT_BITS: Record<string, number> = {
  int8: 8,
  int16: 16,
  int32: 32,
  int64: 64,
  uint8: 8,
  uint16: 16,
  uint32: 32,
  uint64: 64,
};

/** A float stored as xarray + zarr 3 write float attributes: base64 of a little-endian float64. */
const BASE64_DOUBLE = /^[A-Za-z0-9+/]{11}=$/;

function fromBase64Double(text: string): number {
  const bytes = Buffer.from(text, "base64");
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true);
}

/** The base64 text of a float64, as xarray + zarr 3 write a float `_FillValue` in v3 attributes. */
export function base64Double(v: number): string {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v, 0);
  return b.toString("base64");
}

/** A Zarr hex fill value ("0x7fc00000"): the IEEE bits of a float32 (8 digits) or float64 (16). */
function fromHexBits(text: string): number | undefined {
  const m = /^0x([0-9a-f]{8}|[0-9a-f]{16})$/i.exec(text);
  if (!m) return undefined;
  const view = new DataView(new ArrayBuffer(8));
  if (m[1].length === 8) {
    view.setUint32(0, Number.parseInt(m[1], 16));
    return view.getFloat32(0);
  }
  view.setBigUint64(0, BigInt(`0x${m[1]}`));
  return view.getFloat64(0);
}

/** A Zarr JSON scalar as a number ("NaN", "Infinity", hex bit patterns); undefined otherwise. */
export function zarrScalar(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (v === "NaN") return Number.NaN;
  if (v === "Infinity") return Number.POSITIVE_INFINITY;
  if (v === "-Infinity") return Number.NEGATIVE_INFINITY;
  if (typeof v === "string") return fromHexBits(v);
  return undefined;
}

/** One marker value of _FillValue or missing_value in any form producers write; undefined if none. */
function markerValue(v: unknown, float: boolean): number | undefined {
  const n = zarrScalar(v);
  if (n !== undefined) return n;
  if (typeof v === "string" && float && BASE64_DOUBLE.test(v)) return fromBase64Double(v);
  return undefined;
}

/** The markers of one attribute (a scalar or a list); a string saying why not when they cannot be read. */
function markersOf(name: string, v: unknown, dtype: string): number[] | string {
  const float = dtype.startsWith("float");
  const out: number[] = [];
  for (const x of Array.isArray(v) ? v : [v]) {
    const n = markerValue(x, float);
    if (n === undefined) return `its ${name} ${JSON.stringify(x)} is not a number gridcast can read`;
    if (Number.isNaN(n)) continue; // NaN marks nothing more in floats and nothing at all in integers
    if (!float && !Number.isInteger(n)) return `its ${name} ${n} is not a whole number, but the data are ${dtype}`;
    out.push(float && dtype === "float32" ? Math.fround(n) : n);
  }
  return out;
}

/** scale_factor / add_offset: a finite number (or a list of one), else why not. */
function packingNumber(name: string, v: unknown, fallback: number): number | string {
  if (v === undefined) return fallback;
  const x = Array.isArray(v) && v.length === 1 ? v[0] : v;
  if (typeof x === "number" && Number.isFinite(x)) return x;
  return `its ${name} ${JSON.stringify(v)} is not a finite number`;
}

/** Reinterpret an n-bit integer's bits in the other signedness (n from Decoding.unsigned). */
function reinterpret(raw: number, unsigned: number): number {
  if (unsigned > 0) return raw < 0 ? raw + 2 ** unsigned : raw;
  const bits = -unsigned;
  return raw >= 2 ** (bits - 1) ? raw - 2 ** bits : raw;
}

/**
 * The decoding of one array from its attributes, data type and Zarr fill value. `format` decides
 * what the Zarr fill_value means, as xarray reads it: in v2 it is the missing marker (it replaces
 * any _FillValue attribute); in v3 it is only the value of chunks never written, and missing cells
 * are marked by the CF attributes alone. A result with `problem` must not be used to read values.
 */
export function cfDecoding(attrs: Record<string, unknown>, dtype: string, zarrFill: unknown, format: 2 | 3): Decoding {
  const refuse = (problem: string): Decoding => ({ ...PLAIN, problem });
  const bits = INT_BITS[dtype];
  const float = dtype.startsWith("float");

  const scale = packingNumber("scale_factor", attrs.scale_factor, 1);
  if (typeof scale === "string") return refuse(scale);
  const offset = packingNumber("add_offset", attrs.add_offset, 0);
  if (typeof offset === "string") return refuse(offset);

  const v2Fill = format === 2 && zarrFill !== null && zarrFill !== undefined;
  const fillSource = v2Fill ? zarrFill : attrs._FillValue;
  const fills = fillSource === undefined ? [] : markersOf(v2Fill ? "fill_value" : "_FillValue", fillSource, dtype);
  if (typeof fills === "string") return refuse(fills);
  const missingAttr = attrs.missing_value === undefined ? [] : markersOf("missing_value", attrs.missing_value, dtype);
  if (typeof missingAttr === "string") return refuse(missingAttr);
  // The one _FillValue published as such (NaN included: xarray writes it for floats), the rest as missing_value.
  const firstFill = Array.isArray(fillSource) ? fillSource[0] : fillSource;
  const firstValue = firstFill === undefined ? undefined : markerValue(firstFill, float);
  const fillValue = firstValue !== undefined && dtype === "float32" ? Math.fround(firstValue) : firstValue;
  const fillMarker = fillValue === undefined || Number.isNaN(fillValue) ? undefined : fills[0];
  const missingValue = [...new Set([...missingAttr, ...fills.slice(fillMarker === undefined ? 0 : 1)])].filter(
    (m) => m !== fillMarker,
  );

  let unsigned = 0;
  let missing = [...new Set([...fills, ...missingAttr])];
  const u = attrs._Unsigned;
  if (u !== undefined && bits !== undefined) {
    if (u !== "true" && u !== "false") {
      return refuse(`its _Unsigned ${JSON.stringify(u)} is neither "true" nor "false"`);
    }
    const signed = dtype.startsWith("int");
    if (u === "true" && signed) unsigned = bits;
    if (u === "false" && !signed) unsigned = -bits;
    if (unsigned !== 0 && Array.isArray(fillSource) && fillSource.length > 1) {
      return refuse("it has several _FillValue values and an _Unsigned attribute");
    }
    if (unsigned !== 0 && fillMarker !== undefined) {
      // The _FillValue is reinterpreted with the data (missing_value is compared as written).
      const turned = reinterpret(fillMarker, unsigned);
      if (unsigned < 0 && turned !== fillMarker) {
        return refuse(`its _FillValue ${fillMarker} does not fit ${dtype.slice(1)} as _Unsigned "false" asks`);
      }
      missing = [...new Set([...missingAttr, turned])];
    }
  }
  // _Unsigned on floats means nothing (xarray ignores it too).
  return { scale, offset, missing, unsigned, fillValue, missingValue };
}

/**
 * Why a data variable cannot be served as numbers even when its values decode: units that make it
 * a date (xarray would decode it to datetimes). Undefined when nothing is in the way.
 */
export function variableProblem(attrs: Record<string, unknown>, decoding: Decoding): string | undefined {
  if (decoding.problem) return decoding.problem;
  const units = attrs.units;
  if (typeof units === "string" && /\bsince\b/i.test(units)) {
    return `its units "${units}" make its values dates, not a quantity`;
  }
  return undefined;
}

/** Physical value of one raw stored value (NaN when it is a missing marker). */
export function unpack(raw: number, p: Decoding): number {
  if (Number.isNaN(raw)) return Number.NaN;
  const v = p.unsigned === 0 ? raw : reinterpret(raw, p.unsigned);
  for (const m of p.missing) if (v === m) return Number.NaN;
  return v * p.scale + p.offset;
}
