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
