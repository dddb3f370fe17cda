// The embedding files of a published build, written by `gridcast build` (index-writer.ts) and
// read into memory by `gridcast serve` (published-catalogue.ts). Paths are below the build root.
import type { Bbox, Transform } from "./item-geometry.ts";

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
  /** West, south, east, north in degrees. */
  bbox: Bbox;
  /** x min, y min, x max, y max in the item's CRS (metres). */
  bbox_utm: Bbox;
  transform: Transform;
  /** (y, x, feature) of the latent. */
  shape: number[];
}

export interface LocateFile {
  family: string;
  product: string;
  period: string;
  /** Tile name → item. With several versions of one item, the highest version. */
  tiles: Record<string, LocateEntry>;
}
