// Bytes and files of a finished build, reported by build and publish. Hard links count once.
// z/x/y tile folders are not walked (millions of entries): their figures come from the manifest,
// which counts every tile and the bytes of each distinct tile file.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Manifest } from "../render/build/manifest.ts";
import type { TileFormat } from "./format.ts";

export interface BuildOutput {
  format: TileFormat;
  /** Files in the build (every z/x/y tile is one, linked or not). */
  files: number;
  /** Bytes of distinct files (apparent size, hard links once). */
  bytes: number;
  /** Of which tiles: files and bytes. */
  tile_files: number;
  tile_bytes: number;
}

function walk(dir: string, seen: Set<string>, skip?: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const ent of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(ent.parentPath, ent.name);
    if (skip && (path === skip || path.startsWith(`${skip}/`))) continue;
    if (!ent.isFile()) continue;
    files++;
    const st = lstatSync(path);
    const id = `${st.dev}:${st.ino}`;
    if (!seen.has(id)) {
      seen.add(id);
      bytes += st.size;
    }
  }
  return { files, bytes };
}

export function measureBuild(dir: string, format: TileFormat, manifest: Manifest): BuildOutput {
  const seen = new Set<string>();
  const tilesDir = join(dir, "tiles");
  if (format === "pmtiles") {
    const all = walk(dir, seen);
    const tiles = walk(tilesDir, new Set());
    return { format, ...all, tile_files: tiles.files, tile_bytes: tiles.bytes };
  }
  const rest = walk(dir, seen, tilesDir);
  const tileBytes = manifest.entries.reduce((n, e) => n + e.bytes, 0);
  const tileFiles = manifest.totals.tiles;
  return {
    format,
    files: rest.files + tileFiles,
    bytes: rest.bytes + tileBytes,
    tile_files: tileFiles,
    tile_bytes: tileBytes,
  };
}
