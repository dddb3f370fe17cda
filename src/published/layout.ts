// The published build layout, shared by `gridcast build` (writer) and `gridcast serve` (reader).
//
//   <out>/builds/<build-id>/            one complete build
//     manifest.json                     build id, layer fingerprints, shard info
//     catalog.json                      forecast catalog (Catalog below)
//     places.json                       the viewer's place search (places.ts), with the orientation layer
//     tiles/<layer>/<run>.<drawing>/<lead>/{z}/{x}/{y}.png   (runPart below)
//     tiles/<layer>/<run>.<drawing>/<lead>.wind.json, .wind.png   10 m wind of wind-arrow layers (wind-field.ts)
//     tilejson/<layer>/<run>/<lead>.json
//     legends/<layer>.png, legends/<layer>.json
//     embeddings/items.json             sorted item names (the catalogue listing)
//     embeddings/locate/<family>~<product>~<period>.json
//     embeddings/stac/collections.json  STAC collections with extents, summaries, partitions
//     embeddings/stac/<family>~<version>~<product>~<period>.json  STAC items of one partition
//     (viewer files: index.html, assets/...)
//   <out>/current -> builds/<build-id>  switched atomically by rename()
import type { DisplayUnit, Temporal } from "../registry/registry.ts";

export const CURRENT = "current";
export const BUILDS = "builds";
export const MANIFEST = "manifest.json";
export const CATALOG = "catalog.json";
/** A 512 px high-DPI tile is written beside its 256 px twin as {y}@2x.png. */
export const HIDPI_SUFFIX = "@2x";
/** The one transparent tile the route answers with outside a layer's coverage. */
export const EMPTY_TILE = "tiles/empty.png";
/**
 * The tile route, with {layer}, {run}, {lead} and {drawing} (the layer's drawing in the catalog)
 * to fill in besides {z}/{x}/{y}.
 */
export const TILE_ROUTE_TEMPLATE =
  "/api/forecast/tile/{z}/{x}/{y}?layer={layer}&run={run}&lead={lead}&drawing={drawing}";

/** "2026-11-20T12:00:00" → "20261120T1200" (safe in paths, sorts like time). */
export function runToken(iso: string): string {
  return iso.slice(0, 16).replace(/[-:]/g, "");
}

/** Lead directory name: hours as written by String(), e.g. "3" or "1.5". */
export const leadName = (hours: number): string => String(hours);

/**
 * The run segment of a tile path: the run token and the layer's drawing (renderer and style,
 * pipeline/fingerprint.ts drawingOf), e.g. "20261120T1200.r6-0c1d2e3f". Run tiles are immutable
 * for a year, so tiles drawn by another renderer come under another path. A build made before
 * the drawing was recorded has the bare token.
 */
export function runPart(token: string, drawing: string | undefined): string {
  return drawing ? `${token}.${drawing}` : token;
}

/** Directory of one layer-run-lead below the build root (no leading slash). */
export function tileDir(layer: string, token: string, hours: number, drawing?: string): string {
  return `tiles/${layer}/${runPart(token, drawing)}/${leadName(hours)}`;
}

/**
 * The wind file of a wind-arrow lead, beside its tile directory (not in it: a lead's directory holds
 * exactly its tiles), under tiles/ so it is cached as immutably as they are.
 */
export function windPaths(leadDir: string): { json: string; png: string } {
  return { json: `${leadDir}.wind.json`, png: `${leadDir}.wind.png` };
}

export function tilejsonPath(layer: string, token: string, hours: number): string {
  return `tilejson/${layer}/${token}/${leadName(hours)}.json`;
}

export function legendPaths(layer: string): { png: string; json: string } {
  return { png: `legends/${layer}.png`, json: `legends/${layer}.json` };
}

/** Manifest a shard leaves in the shared partial build; `gridcast publish` merges them. */
export function shardManifestName(index: number, count: number): string {
  return `manifest.shard-${index}-of-${count}.json`;
}

export interface CatalogLead {
  hours: number;
  valid_time: string;
  /** The interval the drawn value covers; null when instantaneous or when the window is undecided. */
  interval?: { start: string; end: string } | null;
  /** Static tile template below the build root, e.g. /tiles/global.t2m/20261120T1200.r6-0c1d2e3f/3/{z}/{x}/{y}.png */
  tiles: string;
  /** The same tiles through the tile route, e.g. /api/forecast/tile/{z}/{x}/{y}?layer=global.t2m&run=…&lead=3 */
  route: string;
  /** High-DPI layers: the 512 px tiles (files, and through the route with scale=2), z ≤ hidpi_maxzoom. */
  tiles_2x?: string;
  route_2x?: string;
  tilejson: string;
  /** Wind-arrow layers: the header of the lead's 10 m wind file for animation (windPaths). */
  wind?: string;
}

export interface CatalogRun {
  run: string;
  token: string;
  leads: CatalogLead[];
}

export interface CatalogLayer {
  /** <group name>.<variable>[.<level>] */
  id: string;
  /** The renderer and style its tiles are drawn with: a segment of their paths and pinned URLs (runPart). */
  drawing?: string;
  group: string;
  /** The group's name as stored, when its URL-safe id spells it otherwise. */
  group_stored_name?: string;
  variable: string;
  level: number | null;
  level_units: string | null;
  long_name: string;
  /** Canonical units of the values (style min/max are in them). */
  units: string;
  /** How legends, popups and the value route show values: shown = value * scale + offset. */
  display: DisplayUnit;
  /** Units the viewer may switch to, the default (display) first. */
  units_options: DisplayUnit[];
  temporal: Temporal;
  style: { colormap: string; min: number; max: number; resample: "bilinear" | "nearest" };
  /** "data" when the store's unit could not be converted and the range is the field's own. */
  style_range?: "registry" | "data";
  /** Ensemble layers: the member drawn ("control" only when it is member 0, else "first"); null otherwise. */
  member?: { value: number; choice: "control" | "first" } | null;
  /**
   * "base": a coloured field; "overlay": transparent arrows or lines drawn over a base;
   * "orientation": place names, subdivision borders, rivers and lakes over everything (one static run, lead 0).
   */
  role: "base" | "overlay" | "orientation";
  /** Canonical names of the stored variables a derived layer is computed from; null for a stored one. */
  derived_from: string[] | null;
  /** null for the orientation layer. */
  legend: { png: string; json: string } | null;
  kind: "global" | "regional";
  bounds: [number, number, number, number];
  minzoom: number;
  maxzoom: number;
  /** Present when 512 px @2x tiles are built: the highest zoom that has them. */
  hidpi_maxzoom?: number;
  runs: CatalogRun[];
}

export interface Catalog {
  build_id: string;
  /** Base URL clients reach the published files at (setting public_url); null when not set. */
  public_url?: string | null;
  /** Present when public_url is not set: why the documents' URLs are paths. */
  public_url_missing?: string;
  generated_at: string;
  tile_url_template: string;
  /** What a build running now will add after this one (gridcast start publishes in steps). */
  rendering?: string;
  layers: CatalogLayer[];
}
