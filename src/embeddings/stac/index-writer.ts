// Build step: the STAC index, from the survey the locate indexes are written from (no second walk
// of the store). One file per family, version, product and period holding each item's footprint,
// projection and latent description, and one file of collections (family and product) with their
// extents and summaries, so no request ever aggregates over items.

import {
  STAC_COLLECTIONS_FILE,
  type StacCollectionSummary,
  type StacCollectionsFile,
  type StacPartitionFile,
  type SurveyEntry,
  stacPartitionFile,
} from "../index-files.ts";
import type { Bbox } from "../item-geometry.ts";
import { compareNames, periodDates } from "../names.ts";
import { cellIdsOf, spanOfBbox } from "./cells.ts";
import { collectionId } from "./ids.ts";

const sortedNumbers = (s: Set<number>) => [...s].sort((a, b) => a - b);

/**
 * Bounds holding both; a box across the antimeridian (west > east) widens the union to every
 * longitude, which holds it without a second range.
 */
function union(a: readonly number[], b: readonly number[]): Bbox {
  const whole = a[0] > a[2] || b[0] > b[2];
  return [
    whole ? -180 : Math.min(a[0], b[0]),
    Math.min(a[1], b[1]),
    whole ? 180 : Math.max(a[2], b[2]),
    Math.max(a[3], b[3]),
  ];
}

/** The STAC index documents (path below the build root → content), from entries sorted by name. */
export function stacIndexes(entries: readonly SurveyEntry[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  type Acc = StacCollectionSummary & { d: Set<string>; q: Set<string>; f: Set<number>; e: Set<number> };
  const collections = new Map<string, Acc>();
  const cellsOf = new Map<StacCollectionSummary["partitions"][number], Set<number>>();
  for (const { ref, entry, latent } of entries) {
    const rel = stacPartitionFile(ref.family, ref.version, ref.product, ref.period);
    let part = out.get(rel) as StacPartitionFile | undefined;
    if (!part) {
      part = { family: ref.family, version: ref.version, product: ref.product, period: ref.period, tiles: {} };
      out.set(rel, part);
    }
    part.tiles[ref.tile] = { ...entry, ...latent };
    const id = collectionId(ref.family, ref.product);
    let c = collections.get(id);
    const { start, end } = periodDates(ref.period);
    if (!c) {
      c = {
        id,
        family: ref.family,
        product: ref.product,
        items: 0,
        partitions: [],
        bbox: union(entry.bbox, entry.bbox),
        start,
        end,
        dtypes: [],
        quantization: [],
        feature_counts: [],
        epsg: [],
        d: new Set(),
        q: new Set(),
        f: new Set(),
        e: new Set(),
      };
      collections.set(id, c);
    }
    c.items++;
    let last = c.partitions.at(-1);
    if (last && last.version === ref.version && last.period === ref.period) {
      last.items++;
      last.bbox = union(last.bbox, entry.bbox);
    } else {
      last = { version: ref.version, period: ref.period, items: 1, bbox: union(entry.bbox, entry.bbox), cells: [] };
      c.partitions.push(last);
      cellsOf.set(last, new Set());
    }
    for (const cell of cellIdsOf(spanOfBbox(entry.bbox))) cellsOf.get(last)!.add(cell);
    c.bbox = union(c.bbox, entry.bbox);
    if (start < c.start) c.start = start;
    if (end > c.end) c.end = end;
    c.d.add(latent.dtype);
    c.q.add(latent.quantization);
    c.f.add(entry.shape[2]);
    if (entry.epsg !== null) c.e.add(entry.epsg);
  }
  for (const [part, cells] of cellsOf) part.cells = sortedNumbers(cells);
  const summaries: StacCollectionSummary[] = [...collections.values()]
    .sort((a, b) => compareNames(a.id, b.id))
    .map(({ d, q, f, e, ...c }) => ({
      ...c,
      dtypes: [...d].sort(compareNames),
      quantization: [...q].sort(compareNames),
      feature_counts: sortedNumbers(f),
      epsg: sortedNumbers(e),
    }));
  const file: StacCollectionsFile = { collections: summaries };
  out.set(STAC_COLLECTIONS_FILE, file);
  return out;
}
