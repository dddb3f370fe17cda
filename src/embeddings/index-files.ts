// The embedding files of a published build, written by `gridcast build` (index-writer.ts) and
// read into memory by `gridcast serve` (published-catalogue.ts). Paths are below the build root.
import type { Bbox, Transform } from "./item-geometry.ts";
import type { ItemRef } from "./names.ts";

export const ITEMS_FILE = "embeddings/items.json";

/** One locate index per family, product and period: every tile that has an item. */
export const locateFile = (family: string, product: string, period: string): string =>
  `embeddings/locate/${family}~${product}~${period}.json`;

export interface ItemsFile {
  /** Item names, sorted by UTF-16 code unit (plain < comparison). */
  items: string[];
}

export interface LocateEntry {
  item: string;
  crs: string;
  epsg: number | null;
  /** proj4 definition (or WKT) of the item's CRS; absent in builds made before it was kept. */
  proj?: string;
  /** West, south, east, north in degrees: the same extent as bbox_utm. */
  bbox: Bbox;
  /** x min, y min, x max, y max in the item's CRS (metres). */
  bbox_utm: Bbox;
  /** Null for a vector item that states no geometry of its own. */
  transform: Transform | null;
  /** Served (y, x, feature) shape of the latent. */
  shape: number[];
}

export interface LocateFile {
  family: string;
  product: string;
  period: string;
  /** Tile name → item. With several versions of one item, the highest version. */
  tiles: Record<string, LocateEntry>;
}

/**
 * The STAC index of one family, model version, product and period (a contiguous run of item
 * names): every item's footprint and latent description, so a STAC item is written without the
 * store. Written by the same build step, from the same survey, as the locate indexes.
 */
export const stacPartitionFile = (family: string, version: string, product: string, period: string): string =>
  `embeddings/stac/${family}~${version}~${product}~${period}.json`;

/** The collections of the STAC API (one per family and product) with their extents and summaries. */
export const STAC_COLLECTIONS_FILE = "embeddings/stac/collections.json";

export interface StacRecord extends LocateEntry {
  /** Stored dimension names of the latent, in stored order. */
  dims: string[];
  /** Stored data type (int8, float32, ...). */
  dtype: string;
  /** Quantization scheme kind: raw, cf_linear, signed_power or scale_array. */
  quantization: string;
}

export interface StacPartitionFile {
  family: string;
  version: string;
  product: string;
  period: string;
  /** Tile name → item (one item per tile within a partition). */
  tiles: Record<string, StacRecord>;
}

export interface StacPartition {
  version: string;
  period: string;
  items: number;
  /** Union of its items' lon/lat bounds (every longitude when one crosses the antimeridian). */
  bbox: Bbox;
  /** The 5° grid cells (row * 72 + column, from 90°S and 180°W) its items meet, ascending. */
  cells: number[];
}

export interface StacCollectionSummary {
  /** <family>.<product>: neither segment may hold ".", so the id splits back unambiguously. */
  id: string;
  family: string;
  product: string;
  items: number;
  /** In item-name order (version, then period). */
  partitions: StacPartition[];
  /** Union of the items' lon/lat bounds; west > east when it crosses the antimeridian. */
  bbox: Bbox;
  /** First period start and last period end, ISO dates. */
  start: string;
  end: string;
  dtypes: string[];
  quantization: string[];
  feature_counts: number[];
  epsg: number[];
}

export interface StacCollectionsFile {
  collections: StacCollectionSummary[];
}

/** One servable item as the build's survey found it: what every embedding index is written from. */
export interface SurveyEntry {
  ref: ItemRef;
  entry: LocateEntry;
  /** What the STAC index adds: the latent's stored dims, dtype and quantization scheme. */
  latent: { dims: string[]; dtype: string; quantization: string };
}
