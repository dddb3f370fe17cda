// The last step of an archive build: each lead's part files (archive-sink.ts) become one PMTiles
// archive, tiles in tile-id order and identical tiles once. Runs at finalize, after every shard
// and thread has written its parts; memory is one index record per tile of the lead being merged.
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { MAX_TILE_BYTES } from "./archive-check.ts";
import { PART_DATA, PART_INDEX, partsOf, RECORD_BYTES } from "./archive-sink.ts";
import { ARCHIVE_EXT, type TileFormat } from "./format.ts";
import type { Manifest } from "./manifest.ts";
import {
  buildDirectories,
  encodeHeader,
  encodeMetadata,
  HEADER_BYTES,
  layoutTiles,
  type PlacedTile,
} from "./pmtiles-writer.ts";

/** Bytes copied per write when moving tile data into the archive (at least one largest tile). */
const COPY_BUFFER = MAX_TILE_BYTES;

interface Sourced extends PlacedTile {
  part: number;
  offset: number;
}

export interface ArchiveInfo {
  path: string;
  bytes: number;
  tiles: number;
  contents: number;
}

/** Merges the parts of one lead into `<leadDir>.pmtiles`; returns undefined when it has no parts. */
export function assembleLead(
  leadDir: string,
  meta: { layer: string; run: string; lead: number; maxZoom: number; bounds: [number, number, number, number] },
): ArchiveInfo | undefined {
  const parts = partsOf(leadDir);
  if (!parts.length) return undefined;
  const tiles: Sourced[] = [];
  parts.forEach((p, part) => {
    const idx = readFileSync(p + PART_INDEX);
    for (let at = 0; at + RECORD_BYTES <= idx.length; at += RECORD_BYTES) {
      tiles.push({
        tileId: idx.readDoubleLE(at),
        offset: idx.readDoubleLE(at + 8),
        length: idx.readUInt32LE(at + 16),
        key: idx.toString("hex", at + 20, at + 36),
        part,
      });
    }
  });
  tiles.sort((a, b) => a.tileId - b.tileId);
  const layout = layoutTiles(tiles);
  const { root, leaves } = buildDirectories(layout.entries);
  const metadata = encodeMetadata({
    name: meta.layer,
    format: "png",
    type: "overlay",
    description: `${meta.layer}, run ${meta.run}, lead ${meta.lead} h`,
    gridcast: { layer: meta.layer, run: meta.run, lead_hours: meta.lead },
  });
  const header = encodeHeader({
    rootLength: root.length,
    metadataLength: metadata.length,
    leavesLength: leaves.length,
    dataLength: layout.dataLength,
    addressed: layout.addressed,
    entries: layout.entries.length,
    contents: layout.contents.length,
    minZoom: 0,
    maxZoom: meta.maxZoom,
    bounds: meta.bounds,
  });
  const target = leadDir + ARCHIVE_EXT;
  const tmp = `${target}.tmp-${process.pid}`;
  const out = openSync(tmp, "w");
  const fds = parts.map((p) => openSync(p + PART_DATA, "r"));
  try {
    let pos = 0;
    for (const b of [header, root, metadata, leaves]) {
      writeSync(out, b, 0, b.length, pos);
      pos += b.length;
    }
    const buf = Buffer.allocUnsafe(COPY_BUFFER);
    let used = 0;
    const drain = (): void => {
      writeSync(out, buf, 0, used, pos);
      pos += used;
      used = 0;
    };
    for (const i of layout.contents) {
      const t = tiles[i];
      if (t.length > COPY_BUFFER) throw new Error(`tile ${t.tileId} of ${leadDir} is larger than ${COPY_BUFFER} bytes`);
      if (used + t.length > COPY_BUFFER) drain();
      readSync(fds[t.part], buf, used, t.length, t.offset);
      used += t.length;
    }
    drain();
    if (pos !== HEADER_BYTES + root.length + metadata.length + leaves.length + layout.dataLength) {
      throw new Error(`archive ${target} came out ${pos} bytes, not the size its header states`);
    }
  } finally {
    closeSync(out);
    for (const fd of fds) closeSync(fd);
  }
  renameSync(tmp, target);
  for (const p of parts) {
    rmSync(p + PART_DATA, { force: true });
    rmSync(p + PART_INDEX, { force: true });
  }
  return {
    path: target,
    bytes: HEADER_BYTES + root.length + metadata.length + leaves.length + layout.dataLength,
    tiles: layout.addressed,
    contents: layout.contents.length,
  };
}

/**
 * Assembles every lead of the build that left parts, and says which tile format the build holds.
 * A build must be one format throughout: a mix of folders and archives is refused.
 */
export function assembleBuild(dir: string, manifest: Manifest): TileFormat {
  const bounds = new Map(manifest.layers.map((l) => [l.id, l.bounds]));
  let archives = 0;
  let folders = 0;
  for (const e of manifest.entries) {
    // The manifest key is the lead's folder below tiles/ (pipeline/jobs.ts).
    const lead = join(dir, "tiles", e.key);
    assembleLead(lead, {
      layer: e.layer,
      run: e.run,
      lead: e.lead,
      maxZoom: manifest.max_zoom,
      bounds: bounds.get(e.layer) ?? [-180, -85.0511, 180, 85.0511],
    });
    if (existsSync(lead + ARCHIVE_EXT)) archives++;
    else if (existsSync(lead)) folders++;
  }
  if (archives && folders) {
    throw new Error(
      `build ${manifest.build_id} holds both tile folders and archives; rebuild it with one --tiles format`,
    );
  }
  return archives ? "pmtiles" : "zxy";
}
