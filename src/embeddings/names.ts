// Item names and catalogue prefixes. An item lives at
// embeddings/<family>/rf/<version>/base/<product>/<period>/<tile>; its public name is the path
// below embeddings/ with "/" written as "~". No segment may hold "/" or "~", so the two forms
// round-trip. Parsing checks the form only; whether an item exists is the key space's business.
import { InvalidParameterError } from "../errors.ts";

/** The model version the interface spec names; used when the catalogue has no other to offer. */
export const DEFAULT_VERSION = "v1.2";

const SEGMENTS = {
  family: /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
  input: /^rf$/,
  version: /^v\d{1,3}(\.\d{1,3}){0,3}$/,
  size: /^base$/,
  product: /^[a-z][a-z0-9_-]{0,31}$/,
  period: /^(\d{4})_(\d{2})_(\d{2})_(\d{4})_(\d{2})_(\d{2})$/,
  // MGRS 100 km square: zone, latitude band, two square letters (I and O are never used).
  tile: /^(0?[1-9]|[1-5]\d|60)[C-HJ-NP-X][A-HJ-NP-Z][A-HJ-NP-V]$/,
} as const;

type Segment = keyof typeof SEGMENTS;
const ORDER: Segment[] = ["family", "input", "version", "size", "product", "period", "tile"];

export interface ItemRef {
  /** Public name: geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32TNS */
  name: string;
  /** Path below embeddings/: geofm/rf/v1.2/base/map/2026_06_01_2026_08_31/32TNS */
  path: string;
  family: string;
  version: string;
  product: string;
  period: string;
  tile: string;
}

/** Code-unit order, the order items.json promises (localeCompare would depend on the locale). */
export const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** v1.2 < v1.10: numeric per dotted part. */
export function compareVersions(a: string, b: string): number {
  const pa = a.slice(1).split(".").map(Number);
  const pb = b.slice(1).split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const nameOfPath = (path: string): string => path.replaceAll("/", "~");

export function itemName(family: string, version: string, product: string, period: string, tile: string): string {
  return [family, "rf", version, "base", product, period, tile].join("~");
}

function validPeriod(s: string): boolean {
  const m = SEGMENTS.period.exec(s);
  if (!m) return false;
  const date = (y: string, mo: string, d: string) => {
    const t = Date.UTC(Number(y), Number(mo) - 1, Number(d));
    // Date.UTC rolls 2026-02-30 over to March; a real date survives the round trip.
    return new Date(t).toISOString().slice(0, 10) === `${y}-${mo}-${d}` ? t : Number.NaN;
  };
  const start = date(m[1], m[2], m[3]);
  const end = date(m[4], m[5], m[6]);
  return start <= end;
}

function validSegment(kind: Segment, s: string): boolean {
  return kind === "period" ? validPeriod(s) : SEGMENTS[kind].test(s);
}

/** Throws InvalidParameterError(param) unless `value` is a well-formed segment of this kind. */
export function checkSegment(kind: "family" | "product" | "period", value: string, param: string = kind): string {
  if (!validSegment(kind, value)) {
    const what = {
      family: "a model family name (letters, digits, _ and -)",
      product: "a product name such as tokens, map or vector",
      period: "<YYYY_MM_DD>_<YYYY_MM_DD> with real dates, start not after end",
    }[kind];
    throw new InvalidParameterError(param, `${param} must be ${what}`);
  }
  return value;
}

function fromSegments(parts: string[]): ItemRef | undefined {
  if (parts.length !== ORDER.length || !ORDER.every((k, i) => validSegment(k, parts[i]))) return undefined;
  const [family, , version, , product, period, tile] = parts;
  return { name: parts.join("~"), path: parts.join("/"), family, version, product, period, tile };
}

/** An item name from a request; InvalidParameterError(param) when it is not of the item form. */
export function parseItemName(name: string, param = "name"): ItemRef {
  const ref = name.length <= 200 ? fromSegments(name.split("~")) : undefined;
  if (!ref) {
    throw new InvalidParameterError(
      param,
      `${param} must be an item name <family>~rf~<version>~base~<product>~<YYYY_MM_DD>_<YYYY_MM_DD>~<MGRS tile>`,
    );
  }
  return ref;
}

/** An item path found in the store; undefined for anything not laid out as an item. */
export function parseItemPath(path: string): ItemRef | undefined {
  return fromSegments(path.split("/"));
}

/**
 * A listing prefix as the name prefix it selects (ending in "~", so whole segments match):
 * <family>, <family>/rf/<version>/base/<product>, or that plus /<period>.
 */
export function parsePrefix(prefix: string): string {
  const parts = prefix.replace(/\/$/, "").split("/");
  const ok =
    (parts.length === 1 || parts.length === 5 || parts.length === 6) &&
    parts.every((p, i) => validSegment(ORDER[i], p));
  if (!ok) {
    throw new InvalidParameterError(
      "prefix",
      "prefix must be <family>, <family>/rf/<version>/base/<product> or <family>/rf/<version>/base/<product>/<period>",
    );
  }
  return `${parts.join("~")}~`;
}

/** ISO dates of a period segment: 2026_06_01_2026_08_31 → 2026-06-01, 2026-08-31. */
export function periodDates(period: string): { start: string; end: string } {
  const iso = (s: string) => s.replaceAll("_", "-");
  return { start: iso(period.slice(0, 10)), end: iso(period.slice(11)) };
}
