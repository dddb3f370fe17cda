// STAC item search over the STAC index: the request checked (bbox, intersects, datetime,
// collections, ids, limit, token), then one page walked in a fixed order: runs (a collection and
// model version) by collection id and version; in a run, the partitions (periods) that may match,
// found by binary search on time and through the grid cells the area meets, never one by one;
// within a partition the cells the area meets in id order (each item at the first of them it
// meets), or every tile in name order without an area. A page stops at `limit` items; its token
// names the position (the partition, cell and tile last handed out), never an offset, so items a
// new cycle adds neither repeat nor hide the others. The work of a page follows the area and the
// page, not the number of items or periods published.
import { InvalidParameterError, NotFoundError } from "../../errors.ts";
import type { StacRecord } from "../index-files.ts";
import { compareNames, parseItemName } from "../names.ts";
import { type CellSpan, COLS, firstSharedCell, spanOfArea } from "./cells.ts";
import { type Area, bboxArea, footprintMeets, parseBbox, parseGeometry } from "./geometry.ts";
import { collectionId } from "./ids.ts";
import { type LoadedPartition, type Partition, partitionOf, type Run, type StacIndex } from "./index.ts";

export const STAC_DEFAULT_LIMIT = 10;
export const STAC_MAX_LIMIT = 1000;
/** Most ids one search may name. */
export const STAC_MAX_IDS = 1000;

/** A search as checked: every field optional, as in STAC. */
export interface Search {
  area?: Area;
  /** Closed interval in ms; open ends are ±Infinity. */
  time?: [number, number];
  collections?: string[];
  ids?: string[];
  limit: number;
  token?: string;
}

/** A search as a client sends it: POST body fields, or GET query values already split. */
export interface SearchInput {
  bbox?: unknown;
  intersects?: unknown;
  datetime?: unknown;
  collections?: unknown;
  ids?: unknown;
  limit?: unknown;
  token?: unknown;
}

export interface Hit {
  name: string;
  collection: string;
  record: StacRecord;
}

export interface Page {
  hits: Hit[];
  /** Token of the next page; undefined on the last. */
  next?: string;
}

// ---- checking ---------------------------------------------------------------------------------

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function instant(s: string): number {
  const m = RFC3339.exec(s);
  if (!m) {
    const zoneless = /^\d{4}-\d{2}-\d{2}([Tt]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$/.test(s);
    throw new InvalidParameterError(
      "datetime",
      zoneless
        ? `datetime "${s.slice(0, 40)}" has no time zone: RFC 3339 needs a full time and Z or ±hh:mm`
        : `datetime "${s.slice(0, 40)}" is not an RFC 3339 date-time (2026-06-01T00:00:00Z)`,
    );
  }
  const t = Date.parse(s.toUpperCase());
  // Date.parse rolls 2026-02-30 over; a real date-time survives the check of its fields.
  const [, y, mo, d, h, mi, se] = m.map(Number);
  if (!Number.isFinite(t) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) {
    throw new InvalidParameterError("datetime", `datetime "${s.slice(0, 40)}" is not a real date-time`);
  }
  if (new Date(Date.UTC(y, mo - 1, d)).getUTCDate() !== d) {
    throw new InvalidParameterError("datetime", `datetime "${s.slice(0, 40)}" is not a real date`);
  }
  return t;
}

/** An instant, or an interval a/b with open ends as ".." or empty. */
export function parseDatetime(v: unknown): [number, number] {
  if (typeof v !== "string" || v === "") throw new InvalidParameterError("datetime", "datetime must be a string");
  const parts = v.split("/");
  if (parts.length === 1) {
    const t = instant(v);
    return [t, t];
  }
  if (parts.length !== 2)
    throw new InvalidParameterError("datetime", "datetime is an instant or one interval start/end");
  const open = (p: string) => p === ".." || p === "";
  if (open(parts[0]) && open(parts[1])) {
    throw new InvalidParameterError("datetime", "datetime interval needs at least one closed end");
  }
  const a = open(parts[0]) ? -Infinity : instant(parts[0]);
  const b = open(parts[1]) ? Infinity : instant(parts[1]);
  if (a > b) throw new InvalidParameterError("datetime", "datetime interval ends before it starts");
  return [a, b];
}

function strings(v: unknown, param: string, max: number): string[] {
  const list = typeof v === "string" ? v.split(",") : v;
  if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === "string" && x !== "")) {
    throw new InvalidParameterError(param, `${param} must be a non-empty list of strings`);
  }
  if (list.length > max) throw new InvalidParameterError(param, `${param} may name at most ${max}`, { limit: max });
  return [...new Set(list as string[])];
}

/** A GET query value as a number list ("1,2,3,4"). */
export const numberList = (s: string): number[] => s.split(",").map((x) => (x.trim() === "" ? Number.NaN : Number(x)));

export function checkSearch(index: StacIndex, input: SearchInput): Search {
  if (input.bbox !== undefined && input.intersects !== undefined) {
    throw new InvalidParameterError("intersects", "bbox and intersects cannot be used together; send one of them");
  }
  const s: Search = { limit: STAC_DEFAULT_LIMIT };
  if (input.bbox !== undefined) s.area = bboxArea(parseBbox(input.bbox));
  if (input.intersects !== undefined) s.area = parseGeometry(input.intersects);
  if (input.datetime !== undefined) s.time = parseDatetime(input.datetime);
  if (input.collections !== undefined) {
    s.collections = strings(input.collections, "collections", Math.max(1, index.collections.length));
    const unknown = s.collections.find((c) => !index.byId.has(c));
    if (unknown !== undefined) {
      throw new InvalidParameterError("collections", `no collection "${unknown.slice(0, 80)}"`, {
        available: index.collections.map((c) => c.id),
      });
    }
  }
  if (input.ids !== undefined) s.ids = strings(input.ids, "ids", STAC_MAX_IDS);
  if (input.limit !== undefined) {
    const l = input.limit;
    if (typeof l !== "number" || !Number.isInteger(l) || l < 1 || l > STAC_MAX_LIMIT) {
      throw new InvalidParameterError("limit", `limit must be an integer within 1..${STAC_MAX_LIMIT}`);
    }
    s.limit = l;
  }
  if (input.token !== undefined) {
    if (typeof input.token !== "string") throw new InvalidParameterError("token", "token must be a string");
    s.token = input.token;
  }
  return s;
}

// ---- paging tokens ----------------------------------------------------------------------------

/** Where a page ended: the partition prefix, cell (-1 without an area) and tile; or, for ids, the name. */
type Position = { p: string; c: number; t: string } | { n: string };

const encodeToken = (pos: Position) => Buffer.from(JSON.stringify(pos), "utf8").toString("base64url");

function decodeToken(token: string, byIds: boolean): Position {
  const bad = () => new InvalidParameterError("token", "token is not one this server handed out for this search");
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(token)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  const o = v as Record<string, unknown>;
  if (byIds) {
    if (typeof o?.n !== "string") throw bad();
    return { n: o.n };
  }
  if (typeof o?.p !== "string" || typeof o.t !== "string" || !Number.isInteger(o.c) || (o.c as number) < -1)
    throw bad();
  return { p: o.p, c: o.c as number, t: o.t };
}

// ---- walking ----------------------------------------------------------------------------------

/** Whether a partition may hold a match: its collection, period and bounds against the search's. */
const wanted = (s: Search, p: Partition) =>
  (!s.collections || s.collections.includes(p.collection.id)) &&
  (!s.time || (p.start <= s.time[1] && p.end >= s.time[0])) &&
  (!s.area || footprintMeets(p.bbox, s.area));

/** First index of 0..n for which `below` is false (`below` true on a prefix of the range). */
function lowerBound(n: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (below(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index of a sorted name list past `name`. */
const after = (names: readonly string[], name: string) =>
  lowerBound(names.length, (i) => compareNames(names[i], name) <= 0);

/** Tiles of one partition meeting the area, in walking order, from a position on; with the cell each is at. */
function* walkPartition(
  lp: LoadedPartition,
  area: Area | undefined,
  span: CellSpan | undefined,
  from: { c: number; t: string } | undefined,
): Generator<{ cell: number; tile: string }> {
  if (!area || !span) {
    for (let i = from ? after(lp.tiles, from.t) : 0; i < lp.tiles.length; i++) {
      yield { cell: -1, tile: lp.tiles[i] };
    }
    return;
  }
  for (let r = span.r0; r <= span.r1; r++) {
    for (const [c0, c1] of span.cols) {
      const lo = Math.max(r * COLS + c0, from ? from.c : 0);
      const hi = r * COLS + c1;
      for (
        let i = lowerBound(lp.cellIds.length, (j) => lp.cellIds[j] < lo);
        i < lp.cellIds.length && lp.cellIds[i] <= hi;
        i++
      ) {
        const cell = lp.cellIds[i];
        const tiles = lp.cells.get(cell)!;
        const start = from && cell === from.c ? after(tiles, from.t) : 0;
        for (let k = start; k < tiles.length; k++) {
          const rec = lp.records.get(tiles[k])!;
          if (!footprintMeets(rec.bbox, area)) continue;
          // Each item once: at the first cell of the area it meets.
          if (firstSharedCell(lp.spans.get(tiles[k])!, span) === cell) yield { cell, tile: tiles[k] };
        }
      }
    }
  }
}

/** Where a token's partition is, or would be, in the walk: the run and the place in it. */
function resumeAt(index: StacIndex, prefix: string): { run: number; at: number } {
  const [family, , version, , product, period] = prefix.split("~");
  try {
    parseItemName(`${prefix}32TNS`, "token");
  } catch {
    throw new InvalidParameterError("token", "token is not one this server handed out for this search");
  }
  const id = collectionId(family, product);
  const runs = index.runs;
  const r = lowerBound(runs.length, (i) => {
    const c = compareNames(runs[i].collection.id, id);
    return c < 0 || (c === 0 && compareNames(runs[i].version, version) < 0);
  });
  const run = runs[r];
  if (!run || run.collection.id !== id || run.version !== version) return { run: r, at: 0 };
  return { run: r, at: lowerBound(run.parts.length, (i) => compareNames(run.parts[i].period, period) < 0) };
}

/**
 * Indexes of a run's parts that may hold a match, ascending from `first`: the time window found by
 * binary search (starts ascend; the latest end so far ascends), and with an area only the parts
 * with an item in one of its cells, each next one found by binary search in the cells' lists.
 */
function* candidates(run: Run, s: Search, span: CellSpan | undefined, first: number): Generator<number> {
  const n = run.parts.length;
  let pos = first;
  let hi = n;
  if (s.time) {
    const [qs, qe] = s.time;
    pos = Math.max(
      pos,
      lowerBound(n, (i) => run.maxEnd[i] < qs),
    );
    hi = lowerBound(n, (i) => run.parts[i].start <= qe);
  }
  if (!span) {
    for (; pos < hi; pos++) if (wanted(s, run.parts[pos])) yield pos;
    return;
  }
  const lists: number[][] = [];
  for (let r = span.r0; r <= span.r1; r++)
    for (const [c0, c1] of span.cols) {
      const lo = r * COLS + c0;
      for (let i = lowerBound(run.cellIds.length, (j) => run.cellIds[j] < lo); i < run.cellIds.length; i++) {
        if (run.cellIds[i] > r * COLS + c1) break;
        lists.push(run.cells.get(run.cellIds[i])!);
      }
    }
  while (pos < hi) {
    let next = hi;
    for (const l of lists) {
      const k = lowerBound(l.length, (j) => l[j] < pos);
      if (k < l.length && l[k] < next) next = l[k];
    }
    if (next >= hi) return;
    if (wanted(s, run.parts[next])) yield next;
    pos = next + 1;
  }
}

/** One page of a search. */
export async function search(index: StacIndex, s: Search): Promise<Page> {
  if (s.ids) return searchIds(index, s);
  const span = s.area ? spanOfArea(s.area) : undefined;
  const from = s.token === undefined ? undefined : (decodeToken(s.token, false) as { p: string; c: number; t: string });
  const start = from ? resumeAt(index, from.p) : { run: 0, at: 0 };
  const hits: Hit[] = [];
  let last: Position | undefined;
  for (let r = start.run; r < index.runs.length; r++) {
    const run = index.runs[r];
    if (s.collections && !s.collections.includes(run.collection.id)) continue;
    for (const i of candidates(run, s, span, r === start.run ? start.at : 0)) {
      const part = run.parts[i];
      const lp = await index.load(part);
      const resume = from && part.prefix === from.p ? from : undefined;
      for (const { cell, tile } of walkPartition(lp, s.area, span, resume)) {
        // One more item than the page holds: there is a next page, starting after the last one handed out.
        if (hits.length === s.limit) return { hits, next: encodeToken(last!) };
        hits.push({ name: `${part.prefix}${tile}`, collection: part.collection.id, record: lp.records.get(tile)! });
        last = { p: part.prefix, c: cell, t: tile };
      }
    }
  }
  return { hits };
}

/** A search naming its items: each looked up by name, in name order, then filtered like any other. */
async function searchIds(index: StacIndex, s: Search): Promise<Page> {
  const from = s.token === undefined ? undefined : (decodeToken(s.token, true) as { n: string });
  const names = s.ids!.filter((n) => !from || compareNames(n, from.n) > 0).sort(compareNames);
  const hits: Hit[] = [];
  for (const name of names) {
    const part = partitionOf(index, name);
    if (!part || !wanted(s, part)) continue;
    const lp = await index.load(part);
    const rec = lp.records.get(name.slice(part.prefix.length));
    if (!rec || (s.area && !footprintMeets(rec.bbox, s.area))) continue;
    if (hits.length === s.limit) return { hits, next: encodeToken({ n: hits[hits.length - 1].name }) };
    hits.push({ name, collection: part.collection.id, record: rec });
  }
  return { hits };
}

/** One item by collection and id: 404 unless the item is in that collection. */
export async function findItem(index: StacIndex, collection: string, id: string): Promise<Hit> {
  const c = index.byId.get(collection);
  if (!c) throw new NotFoundError(`no collection "${collection.slice(0, 80)}"`);
  const ref = parseItemName(id, "itemId");
  const part = partitionOf(index, ref.name);
  const rec = part && part.collection.id === c.id ? (await index.load(part)).records.get(ref.tile) : undefined;
  if (!part || !rec) throw new NotFoundError(`no item "${ref.name}" in collection "${c.id}"`, { item: ref.name });
  return { name: ref.name, collection: c.id, record: rec };
}
