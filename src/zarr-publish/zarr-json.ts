// JSON as the Zarr specs want it: floats that JSON cannot spell (NaN, ±Infinity) are written as the
// strings "NaN", "Infinity", "-Infinity" — never as bare NaN (invalid JSON) or null (JSON.stringify's
// silent choice, which a reader would take for "no fill value").

export type Json = Record<string, unknown>;

// Whole numbers at or above 2^53 are floats in all but name (1e20 as a float32 marker); JavaScript
// prints them as long digit strings that Python reads back as int, which then never equals a
// float. They are written in exponent form instead, which every JSON reader takes for a float.
const EXACT = 2 ** 53;
const FLOAT_TAG = "\u0000float:";

/** A number as a Zarr JSON scalar. */
export function zarrNumber(v: number): number | string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "Infinity";
  if (v === Number.NEGATIVE_INFINITY) return "-Infinity";
  if (Number.isInteger(v) && Math.abs(v) >= EXACT) return `${FLOAT_TAG}${v.toExponential()}`;
  return v;
}

/** Deep copy of a JSON-like value with non-finite numbers spelled as Zarr strings. */
export function zarrSafe(value: unknown): unknown {
  if (typeof value === "number") return zarrNumber(value);
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(zarrSafe);
  if (value !== null && typeof value === "object") {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) out[k] = zarrSafe(v);
    return out;
  }
  return value;
}

const encoder = new TextEncoder();

/** Serialised document bytes (indented like zarr-python writes them). */
export function jsonBytes(doc: unknown): Uint8Array {
  const text = JSON.stringify(zarrSafe(doc), null, 2).replace(/"\\u0000float:([^"]+)"/g, "$1");
  return encoder.encode(`${text}\n`);
}

/** Same value, NaN equal to NaN. */
export function sameScalar(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
