// Catalogue views over a sorted list of item names: a paged listing (prefix, limit, opaque cursor)
// and the per-family summary shown in /api/models. Pure functions, no I/O.
import { InvalidParameterError } from "../errors.ts";
import { compareNames, type ItemRef, parseItemName, parsePrefix } from "./names.ts";

export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;

export interface ListRequest {
  prefix?: string;
  limit?: number;
  cursor?: string;
}

export interface ListPage {
  items: ItemRef[];
  /** Items matching the prefix, over all pages. */
  total: number;
  /** Pass as cursor to get the next page; null on the last page. */
  next_cursor: string | null;
}

/** The cursor is the last name of a page, base64url-encoded; clients treat it as opaque. */
export const encodeCursor = (name: string): string => Buffer.from(name, "utf8").toString("base64url");

function decodeCursor(cursor: string): string {
  const name = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  try {
    return parseItemName(name, "cursor").name;
  } catch {
    throw new InvalidParameterError("cursor", "cursor is not one this server handed out");
  }
}

/** First index whose name is not below `key` (names sorted by code unit). */
function lowerBound(names: readonly string[], key: string, strict = false): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareNames(names[mid], key);
    if (c < 0 || (strict && c === 0)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function listItems(names: readonly string[], refs: ReadonlyMap<string, ItemRef>, req: ListRequest): ListPage {
  const limit = req.limit ?? LIST_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw new InvalidParameterError("limit", `limit must be an integer within 1..${LIST_MAX_LIMIT}`);
  }
  const prefix = req.prefix === undefined ? "" : parsePrefix(req.prefix);
  // Names sharing a prefix are contiguous in sorted order; "~" is the highest character names use.
  const lo = lowerBound(names, prefix);
  const hi = prefix ? lowerBound(names, `${prefix}\u007f`) : names.length;
  // Positioned by value, not offset: paging stays gap-free when a new build adds or drops items.
  const start = req.cursor === undefined ? lo : Math.max(lo, lowerBound(names, decodeCursor(req.cursor), true));
  const end = Math.min(hi, start + limit);
  const items = names.slice(start, end).map((n) => refs.get(n)!);
  return { items, total: hi - lo, next_cursor: end < hi ? encodeCursor(names[end - 1]) : null };
}

export interface ProductSummary {
  product: string;
  periods: string[];
  tiles: number;
  items: number;
}

export interface FamilySummary {
  family: string;
  versions: string[];
  products: ProductSummary[];
  periods: string[];
  /** Distinct tiles with at least one item of this family. */
  tiles: number;
  items: number;
}

/** Families with their versions, products, periods and tile counts, from item names. */
export function embeddingFamilies(itemNames: readonly string[]): FamilySummary[] {
  type Counts = { periods: Set<string>; tiles: Set<string>; items: number };
  const fams = new Map<
    string,
    { versions: Set<string>; tiles: Set<string>; items: number; products: Map<string, Counts> }
  >();
  for (const name of itemNames) {
    let r: ItemRef;
    try {
      r = parseItemName(name);
    } catch {
      continue;
    }
    let f = fams.get(r.family);
    if (!f) fams.set(r.family, (f = { versions: new Set(), tiles: new Set(), items: 0, products: new Map() }));
    let p = f.products.get(r.product);
    if (!p) f.products.set(r.product, (p = { periods: new Set(), tiles: new Set(), items: 0 }));
    f.versions.add(r.version);
    f.tiles.add(r.tile);
    f.items++;
    p.periods.add(r.period);
    p.tiles.add(r.tile);
    p.items++;
  }
  const sorted = (s: Iterable<string>) => [...s].sort(compareNames);
  return sorted(fams.keys()).map((family) => {
    const f = fams.get(family)!;
    const products = sorted(f.products.keys()).map((product) => {
      const p = f.products.get(product)!;
      return { product, periods: sorted(p.periods), tiles: p.tiles.size, items: p.items };
    });
    return {
      family,
      versions: sorted(f.versions),
      products,
      periods: sorted(new Set(products.flatMap((p) => p.periods))),
      tiles: f.tiles.size,
      items: f.items,
    };
  });
}
