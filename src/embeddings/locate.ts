// Locate: which item covers a point. The tile follows from the coordinate alone (MGRS, with the
// Norway and Svalbard zone exceptions); availability, exact bounds and the pixel come from the
// published locate index. Nothing here reads the store.
import proj4 from "proj4";
import { NotFoundError } from "../errors.ts";
import { projOfEpsg, squareGeometry, type Transform } from "./item-geometry.ts";
import { tileNameAt } from "./mgrs.ts";
import { checkSegment, DEFAULT_VERSION, itemName } from "./names.ts";
import type { Catalogue } from "./published-catalogue.ts";

/** The product located when none is asked for: the spatial feature map ("search by area"). */
export const DEFAULT_PRODUCT = "map";

export interface LocateRequest {
  lon: number;
  lat: number;
  family?: string;
  product?: string;
  period?: string;
}

export interface LocateResult {
  lon: number;
  lat: number;
  item: string;
  family: string;
  version: string;
  product: string;
  period: string;
  tile: string;
  crs: string;
  epsg: number | null;
  utm_zone: number | null;
  hemisphere: "N" | "S" | null;
  bbox: number[];
  bbox_utm: number[];
  /** The point in the tile's CRS (metres). */
  point_utm: [number, number];
  /** Row (y) and column (x) of the latent pixel holding the point; null when not available. */
  pixel: { row: number; col: number } | null;
  /** Whether the point lies inside the item's extent (an item may cover less than its tile). */
  inside: boolean | null;
  shape: number[] | null;
  transform: Transform | null;
  available: boolean;
  /** Every published item on this tile, any family, product or period. */
  available_items: string[];
}

/** Family, product and period asked for, the gaps filled from what the catalogue publishes. */
function choose(cat: Catalogue, req: LocateRequest) {
  const family = req.family ?? [...cat.offers.keys()].sort()[0];
  if (family === undefined) throw new NotFoundError("no embeddings are published");
  const product = req.product ?? DEFAULT_PRODUCT;
  const offer = cat.offers.get(family)?.get(product);
  const period = req.period ?? offer?.periods.at(-1);
  if (period === undefined) {
    throw new NotFoundError(`no ${family} ${product} embeddings are published; pass family, product and period`);
  }
  return { family, product, period, version: offer?.versions.at(-1) ?? DEFAULT_VERSION };
}

export async function locate(cat: Catalogue, req: LocateRequest): Promise<LocateResult> {
  if (req.family !== undefined) checkSegment("family", req.family);
  if (req.product !== undefined) checkSegment("product", req.product);
  if (req.period !== undefined) checkSegment("period", req.period);
  const tile = tileNameAt(req.lon, req.lat);
  const { family, product, period, version } = choose(cat, req);
  const entry = (await cat.locate(family, product, period))?.tiles[tile];
  // Without an item the tile's own square still gives CRS and bounds; with one, the item's own.
  const square = squareGeometry(tile);
  const g = entry
    ? { crs: entry.crs, epsg: entry.epsg, proj: entry.proj ?? projOfEpsg(entry.epsg ?? 0) ?? square.proj }
    : square;
  const lon = ((((req.lon + 180) % 360) + 360) % 360) - 180;
  const [x, y] = proj4("WGS84", g.proj).forward([lon, req.lat]);
  const utm = g.epsg !== null && g.epsg > 32600 && g.epsg <= 32760 && g.epsg % 100 <= 60;
  return {
    lon: req.lon,
    lat: req.lat,
    item: entry?.item ?? itemName(family, version, product, period, tile),
    family,
    version: entry ? entry.item.split("~")[2] : version,
    product,
    period,
    tile,
    crs: g.crs,
    epsg: g.epsg,
    utm_zone: utm ? g.epsg! % 100 : null,
    hemisphere: utm ? (g.epsg! > 32700 ? "S" : "N") : null,
    bbox: entry ? entry.bbox : square.bbox,
    bbox_utm: entry ? entry.bbox_utm : square.bbox_utm,
    point_utm: [round(x, 3), round(y, 3)],
    pixel: entry ? pixelAt(entry.transform, entry.shape, x, y) : null,
    inside: entry ? insideBbox(entry.bbox_utm, x, y) : null,
    shape: entry?.shape ?? null,
    transform: entry?.transform ?? null,
    available: entry !== undefined,
    available_items: cat.byTile.get(tile) ?? [],
  };
}

/** Whether a point (in the item's CRS) lies within the item's extent. */
function insideBbox([x0, y0, x1, y1]: number[], x: number, y: number): boolean {
  return x >= x0 && x <= x1 && y >= y0 && y <= y1;
}

/**
 * Inverse of the affine transform, clamped so a point on the far edge lands in the last pixel. A
 * vector item without a transform has one pixel, which holds every point of its tile.
 */
function pixelAt(t: Transform | null, shape: number[], x: number, y: number): { row: number; col: number } {
  if (!t) return { row: 0, col: 0 };
  const [a, b, c, d, e, f] = t;
  const det = a * e - b * d;
  const col = Math.floor((e * (x - c) - b * (y - f)) / det);
  const row = Math.floor((-d * (x - c) + a * (y - f)) / det);
  const clamp = (v: number, n: number) => Math.min(n - 1, Math.max(0, v));
  return { row: clamp(row, shape[0]), col: clamp(col, shape[1]) };
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
