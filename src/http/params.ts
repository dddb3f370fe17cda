// Strict parsing of query and path parameters against the route's JSON Schema (TypeBox). Numbers
// must be plain decimals (no hex, NaN, Infinity, or values that overflow to Infinity); a parameter
// given twice is an error; every failure names the parameter.
import { Compile } from "typebox/compile";
import { InvalidParameterError } from "../errors.ts";

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: Schema[];
  [k: string]: unknown;
};

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

function scalarType(s: Schema): string {
  if (s.type) return s.type;
  const first = s.anyOf?.find((x) => x.type);
  return first?.type ?? "string";
}

function convert(name: string, raw: string, schema: Schema): unknown {
  const type = scalarType(schema);
  if (type === "number") {
    if (!DECIMAL.test(raw))
      throw new InvalidParameterError(name, `${name} must be a decimal number, got "${clip(raw)}"`);
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new InvalidParameterError(name, `${name} is out of range`);
    return n;
  }
  if (type === "integer") {
    if (!INTEGER.test(raw)) throw new InvalidParameterError(name, `${name} must be an integer, got "${clip(raw)}"`);
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new InvalidParameterError(name, `${name} is out of range`);
    return n;
  }
  if (type === "boolean") {
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw new InvalidParameterError(name, `${name} must be true or false`);
  }
  return raw;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

// Each route's schema is compiled to a checker once; checking then costs about a microsecond.
const checkers = new WeakMap<object, ReturnType<typeof Compile>>();
function compiled(schema: object): ReturnType<typeof Compile> {
  let c = checkers.get(schema);
  if (!c) {
    c = Compile(schema as never);
    checkers.set(schema, c);
  }
  return c;
}

// The property list of each schema, read once (a schema is a module constant of its route).
const propLists = new WeakMap<object, [string, Schema][]>();
function propList(schema: Schema): [string, Schema][] {
  let list = propLists.get(schema);
  if (!list) {
    list = Object.entries(schema.properties ?? {});
    propLists.set(schema, list);
  }
  return list;
}

/** Parse and validate a set of raw values (query or path) against an object schema. */
export function parseParams<T>(schemaIn: object, raw: Map<string, string[]>): T {
  const schema = schemaIn as Schema;
  const props = schema.properties ?? {};
  const out: Record<string, unknown> = {};
  for (const [name, sub] of propList(schema)) {
    const values = raw.get(name);
    if (!values || values.length === 0) continue;
    if (values.length > 1) throw new InvalidParameterError(name, `${name} is given more than once`);
    const v = values[0];
    if (v === "") throw new InvalidParameterError(name, `${name} is empty`);
    out[name] = convert(name, v, sub);
  }
  for (const name of schema.required ?? []) {
    if (!(name in out)) throw new InvalidParameterError(name, `${name} is required`);
  }
  const checker = compiled(schemaIn);
  const first = checker.Check(out)
    ? undefined
    : (checker.Errors(out)[0] as { instancePath: string; message: string } | undefined);
  if (first) {
    const name = first.instancePath.replace(/^\//, "") || "query";
    const sub = props[name];
    const extra = sub?.enum ? ` (one of ${sub.enum.join(", ")})` : "";
    throw new InvalidParameterError(name, `${name} ${first.message}${extra}`);
  }
  return out as T;
}

// Characters of a query that URLSearchParams would change: escapes, '+', anything outside ASCII.
const NEEDS_DECODING = /[%+\u0080-\uffff]/;

/** Query string of a raw request URL as name → values (percent-decoded, '+' as space). */
export function queryValues(url: string): Map<string, string[]> {
  const q = url.indexOf("?");
  const out = new Map<string, string[]>();
  if (q < 0) return out;
  const text = url.slice(q + 1);
  // A plain ASCII query (lat=48.1&lon=11.6&var=t2m) decodes to itself: split it here, exactly as
  // URLSearchParams does (pairs on '&', empty pairs skipped, name and value at the first '=').
  if (!NEEDS_DECODING.test(text)) {
    // (URLSearchParams also drops one leading '?' of its input.)
    let at = text.charCodeAt(0) === 63 ? 1 : 0;
    while (at <= text.length) {
      let end = text.indexOf("&", at);
      if (end < 0) end = text.length;
      if (end > at) {
        const eq = text.indexOf("=", at);
        const name = eq < 0 || eq > end ? text.slice(at, end) : text.slice(at, eq);
        const value = eq < 0 || eq > end ? "" : text.slice(eq + 1, end);
        const list = out.get(name);
        if (list) list.push(value);
        else out.set(name, [value]);
      }
      at = end + 1;
    }
    return out;
  }
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(text);
  } catch {
    throw new InvalidParameterError("query", "the query string cannot be decoded");
  }
  for (const [k, v] of params) {
    const list = out.get(k) ?? [];
    list.push(v);
    out.set(k, list);
  }
  return out;
}

/** Decode one path segment; a segment that decodes to a separator or NUL is rejected. */
export function decodeSegment(name: string, raw: string): string {
  let v: string;
  try {
    v = decodeURIComponent(raw);
  } catch {
    throw new InvalidParameterError(name, `${name} is not valid percent-encoding`);
  }
  if (/[/\\\0]/.test(v) || v === "." || v === "..")
    throw new InvalidParameterError(name, `${name} is not a valid name`);
  return v;
}
