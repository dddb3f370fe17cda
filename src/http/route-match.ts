// From a request's URL to what a route takes: the URL split as polka's router takes it (its query
// left unparsed), the request's path, which route template a path falls under (to tell 405 from
// 404), the path parameters decoded and validated, and the refusal of query parameters a route
// does not declare.
import type { IncomingMessage } from "node:http";
import { InvalidParameterError } from "../errors.ts";
import { decodeSegment, parseParams } from "./params.ts";
import type { RouteDef } from "./route.ts";

const NO_PARAMS = new Set<string>();
const paramNames = new WeakMap<object, Set<string>>();

/** InvalidParameterError naming the first query parameter the route does not declare. */
export function rejectUnknown(def: RouteDef, raw: Map<string, string[]>): void {
  if (raw.size === 0) return;
  let known = NO_PARAMS;
  if (def.query) {
    known = paramNames.get(def.query) ?? new Set(Object.keys((def.query as { properties?: object }).properties ?? {}));
    paramNames.set(def.query, known);
  }
  for (const name of raw.keys()) {
    if (known.has(name)) continue;
    const takes = known.size ? `it takes ${[...known].join(", ")}` : "it takes none";
    throw new InvalidParameterError(name, `unknown query parameter "${name.slice(0, 40)}" for this route; ${takes}`);
  }
}

export function pathParams(def: RouteDef, raw: Record<string, string>, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    // polka's "*" param holds one segment only; the {key+} value is cut from the raw path below.
    if (name !== "*" && name !== "wild") out[name] = decodeSegment(name, value);
  }
  if (/\{\w+\+\}$/.test(def.path))
    out.key = path
      .split("/")
      .slice(def.path.split("/").length - 1)
      .join("/");
  if (def.pathParams) {
    const asMap = new Map(Object.entries(out).map(([k, v]) => [k, [v]] as [string, string[]]));
    return parseParams<Record<string, string>>(def.pathParams, asMap);
  }
  return out;
}

/** What polka takes from @polka/url's parse: the same fields, with `query` left unparsed. */
export interface PolkaUrl {
  _raw: string;
  href: string;
  path: string;
  pathname: string;
  search: string | null;
  query: null;
}

export function splitUrl(url: string): PolkaUrl {
  const q = url.indexOf("?", 1);
  return {
    _raw: url,
    href: url,
    path: url,
    pathname: q < 0 ? url : url.slice(0, q),
    search: q < 0 ? null : url.slice(q),
    query: null,
  };
}

export function pathOf(req: IncomingMessage): string {
  const u = req.url ?? "/";
  const q = u.indexOf("?");
  return q < 0 ? u : u.slice(0, q);
}

/**
 * A route's path template as a RegExp, compiled once per route: every request no route claims
 * (each static file) asks whether some route has its path, and compiling per ask cost as much as
 * answering the file from memory.
 */
const compiled = new WeakMap<RouteDef, RegExp>();

function patternOf(def: RouteDef): RegExp {
  let re = compiled.get(def);
  if (!re) {
    const parts = def.path.split("/").map((seg) => {
      if (/^\{\w+\+\}$/.test(seg)) return ".+";
      if (/^\{\w+\}$/.test(seg)) return "[^/]+";
      return seg.replace(/[.*+?^$()|[\]\\{}]/g, "\\$&");
    });
    re = new RegExp(`^${parts.join("/")}$`);
    compiled.set(def, re);
  }
  return re;
}

export function matches(def: RouteDef, path: string): boolean {
  return patternOf(def).test(path);
}
