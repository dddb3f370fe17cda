// JSON as the Zarr specs want it: floats that JSON cannot spell (NaN, ±Infinity) are written as the
// strings "NaN", "Infinity", "-Infinity" — never as bare NaN (invalid JSON) or null (JSON.stringify's
// silent choice, which a reader would take for "no fill value").

export type Json = Record<string, unknown>;

/** A number as a Zarr JSON scalar. */
export function zarrNumber(v: number): number | string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "Infinity";
  if (v === Number.NEGATIVE_INFINITY) return "-Infinity";
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
  return encoder.encode(`${JSON.stringify(zarrSafe(doc), null, 2)}\n`);
}

/** Numeric value of a JSON fill or attribute scalar ("NaN" → NaN); undefined when not numeric. */
export function numericScalar(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (v === "NaN") return Number.NaN;
  if (v === "Infinity") return Number.POSITIVE_INFINITY;
  if (v === "-Infinity") return Number.NEGATIVE_INFINITY;
  return undefined;
}

/** Same value, NaN equal to NaN. */
export function sameScalar(a: number | undefined, b: number | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
