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
import { type CellSpan, COLS, spanOfBbox } from "./cells.ts";

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
  /** The run it belongs to and its place there. */
  run: Run;
  at: number;
}

/**
 * The partitions of one collection and model version, by period (so by start date): what a search
 * picks its partitions from by binary search on time and by grid cell, never one by one.
 */
export interface Run {
  collection: StacCollectionSummary;
  version: string;
  parts: Partition[];
  /** Latest end among parts[0..i]: ascending, so the first part that may reach a time is a binary search. */
  maxEnd: number[];
  /** Cell id → indexes of the parts with an item meeting that cell (ascending); the cell ids, sorted. */
  cells: Map<number, number[]>;
  cellIds: number[];
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
  /** Every run, by collection id and then model version: the order a search walks. */
  runs: Run[];
  load(p: Partition): Promise<LoadedPartition>;
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
  const runs: Run[] = [];
  for (const c of [...file.collections].sort((a, b) => compareNames(a.id, b.id))) {
    const versions = new Map<string, StacCollectionSummary["partitions"]>();
    for (const p of c.partitions) {
      const list = versions.get(p.version);
      if (list) list.push(p);
      else versions.set(p.version, [p]);
    }
    for (const version of [...versions.keys()].sort(compareNames)) {
      const run: Run = { collection: c, version, parts: [], maxEnd: [], cells: new Map(), cellIds: [] };
      const stated = versions.get(version)!.sort((a, b) => compareNames(a.period, b.period));
      for (const [at, p] of stated.entries()) {
        const { start, end } = periodDates(p.period);
        const part: Partition = {
          collection: c,
          version,
          period: p.period,
          prefix: `${itemName(c.family, version, c.product, p.period, "")}`,
          start: Date.parse(`${start}T00:00:00Z`),
          end: Date.parse(`${end}T23:59:59Z`),
          bbox: p.bbox,
          run,
          at,
        };
        run.parts.push(part);
        run.maxEnd.push(Math.max(part.end, run.maxEnd.at(-1) ?? -Infinity));
        for (const cell of p.cells) {
          const list = run.cells.get(cell);
          if (list) list.push(at);
          else run.cells.set(cell, [at]);
        }
        partitions.push(part);
      }
      run.cellIds = [...run.cells.keys()].sort((a, b) => a - b);
      runs.push(run);
    }
  }
  partitions.sort((a, b) => compareNames(a.prefix, b.prefix));
  const loaded = new Map<string, Promise<LoadedPartition>>();
  return {
    collections: file.collections,
    byId: new Map(file.collections.map((c) => [c.id, c])),
    partitions,
    runs,
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
