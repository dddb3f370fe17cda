// The published build layout, shared by `gridcast build` (writer) and `gridcast serve` (reader).
//
//   <out>/builds/<build-id>/            one complete build
//     manifest.json                     build id, layer fingerprints, shard info
//     catalog.json                      forecast catalog (Catalog below)
//     tiles/<layer>/<run>/<lead>/{z}/{x}/{y}.png
//     tilejson/<layer>/<run>/<lead>.json
//     legends/<layer>.png, legends/<layer>.json
//     embeddings/items.json             sorted item names (the catalogue listing)
//     embeddings/locate/<family>~<product>~<period>.json
//     (viewer files: index.html, assets/...)
//   <out>/current -> builds/<build-id>  switched atomically by rename()
import type { Temporal } from "../registry/registry.ts";

export const CURRENT = "current";
export const BUILDS = "builds";

/** "2026-11-20T12:00:00" → "20261120T1200" (safe in paths, sorts like time). */
export function runToken(iso: string): string {
  return iso.slice(0, 16).replace(/[-:]/g, "");
}

export interface CatalogLead {
  hours: number;
  valid_time: string;
  /** Static tile template below the build root, e.g. /tiles/global.t2m/20261120T1200/3/{z}/{x}/{y}.png */
  tiles: string;
  tilejson: string;
}

export interface CatalogRun {
  run: string;
  token: string;
  leads: CatalogLead[];
}

export interface CatalogLayer {
  /** <group name>.<variable>[.<level>] */
  id: string;
  group: string;
  variable: string;
  level: number | null;
  level_units: string | null;
  long_name: string;
  units: string;
  temporal: Temporal;
  style: { colormap: string; min: number; max: number };
  legend: { png: string; json: string };
  kind: "global" | "regional";
  bounds: [number, number, number, number];
  minzoom: number;
  maxzoom: number;
  runs: CatalogRun[];
}

export interface Catalog {
  build_id: string;
  generated_at: string;
  tile_url_template: string;
  layers: CatalogLayer[];
}
