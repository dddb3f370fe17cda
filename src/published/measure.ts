// Bytes and files of a finished build, reported by build and publish. Hard links count once.
// z/x/y tile folders are not walked (millions of entries): their figures come from the manifest,
// which counts every tile and the bytes of each distinct tile file.
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { TileFormat } from "./format.ts";
import type { Manifest } from "./manifest.ts";

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
  // Folder by folder, never entering `skip` (a recursive readdir would list every tile first).
  const todo = [dir];
  for (let d = todo.pop(); d !== undefined; d = todo.pop()) {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, ent.name);
      if (ent.isDirectory()) {
        if (path !== skip) todo.push(path);
        continue;
      }
      if (!ent.isFile()) continue;
      files++;
      const st = lstatSync(path);
      const id = `${st.dev}:${st.ino}`;
      if (!seen.has(id)) {
        seen.add(id);
        bytes += st.size;
      }
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
  // The layer folders by the manifest; files beside them (the shared empty tile) by a look.
  const shared = { files: 0, bytes: 0 };
  for (const ent of existsSync(tilesDir) ? readdirSync(tilesDir, { withFileTypes: true }) : []) {
    if (!ent.isFile()) continue;
    shared.files++;
    shared.bytes += lstatSync(join(tilesDir, ent.name)).size;
  }
  const tileBytes = manifest.entries.reduce((n, e) => n + e.bytes, 0) + shared.bytes;
  const tileFiles = manifest.totals.tiles + (manifest.totals.hidpi ?? 0) + shared.files;
  return {
    format,
    files: rest.files + tileFiles,
    bytes: rest.bytes + tileBytes,
    tile_files: tileFiles,
    tile_bytes: tileBytes,
  };
}

/**
 * Bytes a directory tree takes on disk, as du counts them: the blocks of every file and folder,
 * a file with several hard links once. Walks every entry: for measuring, never on a request path.
 */
export function diskBytes(dir: string): number {
  const seen = new Set<string>();
  let bytes = 0;
  const todo = [dir];
  for (let d = todo.pop(); d !== undefined; d = todo.pop()) {
    bytes += lstatSync(d).blocks * 512;
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, ent.name);
      if (ent.isDirectory()) {
        todo.push(path);
        continue;
      }
      const st = lstatSync(path);
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      bytes += st.blocks * 512;
    }
  }
  return bytes;
}
