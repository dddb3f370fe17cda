// The archive side of the build's on-disk format (the z/x/y side is in render/layout.ts):
// one PMTiles v3 archive per layer × run × lead, beside where that lead's z/x/y folder would be.
//
//   tiles/<layer>/<run>.<drawing>/<lead>.pmtiles
//
// catalog.json says which format a build holds (tile_format) and, for archives, each lead's
// archive path, so a viewer reading a CDN copy of the build knows what to fetch.
import { leadName, runPart } from "./layout.ts";

export type TileFormat = "zxy" | "pmtiles";
export const TILE_FORMATS: readonly TileFormat[] = ["zxy", "pmtiles"];
export const ARCHIVE_EXT = ".pmtiles";

/** Archive of one layer-run-lead below the build root (no leading slash). */
export function archivePath(layer: string, token: string, hours: number, drawing?: string): string {
  return `tiles/${layer}/${runPart(token, drawing)}/${leadName(hours)}${ARCHIVE_EXT}`;
}

/** What finalize adds to catalog.json for an archive build. */
export interface ArchiveCatalogFields {
  tile_format?: TileFormat;
}
