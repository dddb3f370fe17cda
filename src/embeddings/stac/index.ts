// The STAC index of a published build in memory: its collections and partitions (family, version,
// product, period: a contiguous run of item names) read once per build, and each partition's items
// read on first use with a grid of 5° cells over their footprints, so a spatial search visits
// only the cells it covers. Every lookup is by key or binary search: nothing here grows a request's
// work with the number of items.
import { StoreUnavailableError } from "../../errors.ts";
import {
  STAC_COLLECTIONS_FILE,
  type StacCollectionSummary,
  type StacCollectionsFile,
  type StacPartitionFile,
  type StacRecord,
  stacPartitionFile,
} from "../index-files.ts";
import { compareNames, itemName, periodDates } from "../names.ts";
import type { BuildDocuments } from "../published-catalogue.ts";
import { type Area, lonRanges } from "./geometry.ts";

/** Size of a grid cell in degrees (a 100 km tile meets one to four). */
export const CELL_DEG = 5;
export const COLS = 360 / CELL_DEG;
const ROWS = 180 / CELL_DEG;

export interface Partition {
  collection: StacCollectionSummary;
  version: string;
  period: string;
  /** Item-name prefix of the partition: <family>~rf~<version>~base~<product>~<period>~ */
  prefix: string;
  /** Period bounds in ms: first day 00:00Z, last day 23:59:59Z. */
  start: number;
  end: number;
  /** Union of its items' footprints: an area outside it skips the partition unread. */
  bbox: readonly number[];
}

export interface LoadedPartition {
  part: Partition;
  /** Tile names, sorted. */
  tiles: string[];
  records: Map<string, StacRecord>;
  /** Cell id → tiles whose footprint meets the cell (sorted); cell ids with any tile, sorted. */
  cells: Map<number, string[]>;
  cellIds: number[];
  /** Tile → the cells its footprint meets (worked out once, at load). */
  spans: Map<string, CellSpan>;
}

export interface StacIndex {
  collections: StacCollectionSummary[];
  byId: ReadonlyMap<string, StacCollectionSummary>;
  /** Every partition in item-name order. */
  partitions: Partition[];
  load(p: Partition): Promise<LoadedPartition>;
}

/** Rows and column ranges of cells an area meets. */
export interface CellSpan {
  r0: number;
  r1: number;
  cols: [number, number][];
}

const clampRow = (lat: number) => Math.min(ROWS - 1, Math.max(0, Math.floor((lat + 90) / CELL_DEG)));
const clampCol = (lon: number) => Math.min(COLS - 1, Math.max(0, Math.floor((lon + 180) / CELL_DEG)));

export function cellSpan(lons: readonly [number, number][], south: number, north: number): CellSpan {
  const cols = lons.map(([w, e]) => [clampCol(w), clampCol(e)] as [number, number]).sort((a, b) => a[0] - b[0]);
  // Ranges that meet merge, so a cell is never visited twice.
  const merged: [number, number][] = [];
  for (const c of cols) {
    const last = merged.at(-1);
    if (last && c[0] <= last[1] + 1) last[1] = Math.max(last[1], c[1]);
    else merged.push([...c]);
  }
  return { r0: clampRow(south), r1: clampRow(north), cols: merged };
}

export const spanOfBbox = ([w, s, e, n]: readonly number[]): CellSpan => cellSpan(lonRanges(w, e), s, n);
export const spanOfArea = (a: Area): CellSpan => cellSpan(a.lons, a.south, a.north);

/** The first cell (in id order) two spans share; undefined when they share none. */
export function firstSharedCell(a: CellSpan, b: CellSpan): number | undefined {
  const r = Math.max(a.r0, b.r0);
  if (r > Math.min(a.r1, b.r1)) return undefined;
  let col: number | undefined;
  for (const [a0, a1] of a.cols)
    for (const [b0, b1] of b.cols) {
      const c = Math.max(a0, b0);
      if (c <= Math.min(a1, b1) && (col === undefined || c < col)) col = c;
    }
  return col === undefined ? undefined : r * COLS + col;
}

function grid(records: Map<string, StacRecord>, tiles: string[]) {
  const cells = new Map<number, string[]>();
  const spans = new Map<string, CellSpan>();
  for (const t of tiles) {
    const span = spanOfBbox(records.get(t)!.bbox);
    spans.set(t, span);
    const { r0, r1, cols } = span;
    for (let r = r0; r <= r1; r++)
      for (const [c0, c1] of cols)
        for (let c = c0; c <= c1; c++) {
          const id = r * COLS + c;
          const list = cells.get(id);
          if (list) list.push(t);
          else cells.set(id, [t]);
        }
  }
  return { cells, spans, cellIds: [...cells.keys()].sort((a, b) => a - b) };
}

async function open(docs: BuildDocuments): Promise<StacIndex | undefined> {
  const file = await docs.json<StacCollectionsFile>(STAC_COLLECTIONS_FILE);
  if (!Array.isArray(file?.collections)) return undefined;
  const partitions: Partition[] = [];
  for (const c of file.collections) {
    for (const p of c.partitions) {
      const { start, end } = periodDates(p.period);
      partitions.push({
        collection: c,
        version: p.version,
        period: p.period,
        prefix: `${itemName(c.family, p.version, c.product, p.period, "")}`,
        start: Date.parse(`${start}T00:00:00Z`),
        end: Date.parse(`${end}T23:59:59Z`),
        bbox: p.bbox,
      });
    }
  }
  partitions.sort((a, b) => compareNames(a.prefix, b.prefix));
  const loaded = new Map<string, Promise<LoadedPartition>>();
  return {
    collections: file.collections,
    byId: new Map(file.collections.map((c) => [c.id, c])),
    partitions,
    load: (part) => {
      let p = loaded.get(part.prefix);
      if (!p) {
        const rel = stacPartitionFile(part.collection.family, part.version, part.collection.product, part.period);
        p = docs.json<StacPartitionFile>(rel).then((f) => {
          if (!f?.tiles) {
            loaded.delete(part.prefix);
            throw new StoreUnavailableError("the published build's STAC index is incomplete; rebuild it");
          }
          const tiles = Object.keys(f.tiles).sort(compareNames);
          const records = new Map(Object.entries(f.tiles));
          return { part, tiles, records, ...grid(records, tiles) };
        });
        loaded.set(part.prefix, p);
      }
      return p;
    },
  };
}

const opened = new WeakMap<BuildDocuments, Promise<StacIndex | undefined>>();

/** The STAC index of a build, read once per build; 503 when the build was made without one. */
export async function stacIndexOf(docs: BuildDocuments): Promise<StacIndex> {
  let p = opened.get(docs);
  if (!p) {
    p = open(docs);
    opened.set(docs, p);
  }
  const index = await p;
  if (!index) throw new StoreUnavailableError("the published build has no STAC index; rebuild it");
  return index;
}

/** The partition holding an item name, by binary search over the prefixes. */
export function partitionOf(index: StacIndex, name: string): Partition | undefined {
  const ps = index.partitions;
  let lo = 0;
  let hi = ps.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareNames(ps[mid].prefix, name) <= 0) lo = mid + 1;
    else hi = mid;
  }
  const p = ps[lo - 1];
  return p && name.startsWith(p.prefix) ? p : undefined;
}
