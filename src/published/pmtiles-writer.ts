// Writing one PMTiles v3 archive. The pmtiles package reads archives and numbers tiles (tile ids
// along the Hilbert curve) but has no writer, so the byte layout is written here by hand, after
// the v3 specification: a 127-byte header, the root directory within the first 16 KiB, JSON
// metadata, leaf directories, then the tile data. Tiles are laid out in tile-id order
// (clustered); identical tiles are stored once and consecutive ones share one run-length entry.
// Directories and metadata are gzip-compressed; PNG tiles are stored as they are.
import { gzipSync } from "node:zlib";
import {
  COMPRESSION_GZIP,
  COMPRESSION_NONE,
  HEADER_BYTES,
  MAX_DIRECTORY_BYTES,
  MAX_DIRECTORY_DECODED,
  MAX_DIRECTORY_ENTRIES,
  MAX_TILE_BYTES,
  ROOT_LIMIT,
  TILE_TYPE_PNG,
} from "./archive-check.ts";

export { HEADER_BYTES, ROOT_LIMIT };

export interface Entry {
  tileId: number;
  offset: number;
  length: number;
  runLength: number;
}

/** A tile to store: its id, a content key (equal keys = equal bytes) and its length. */
export interface PlacedTile {
  tileId: number;
  key: string;
  length: number;
}

export interface ArchiveLayout {
  /** Directory entries (tile data offsets relative to the data section). */
  entries: Entry[];
  /** The distinct contents in data order, by the index into the sorted input of their first use. */
  contents: number[];
  dataLength: number;
  addressed: number;
}

/**
 * Where every tile's bytes go: input sorted by tile id; equal keys share one offset, a run of
 * consecutive ids with one content is one entry.
 */
export function layoutTiles(sorted: PlacedTile[]): ArchiveLayout {
  const at = new Map<string, number>();
  const entries: Entry[] = [];
  const contents: number[] = [];
  let dataLength = 0;
  for (let i = 0; i < sorted.length; i++) {
    const t = sorted[i];
    if (t.length < 1 || t.length > MAX_TILE_BYTES)
      throw new Error(`tile ${t.tileId} is ${t.length} bytes; tiles are 1..${MAX_TILE_BYTES} bytes`);
    if (i > 0 && t.tileId <= sorted[i - 1].tileId) throw new Error(`tile ids not strictly increasing at ${t.tileId}`);
    let offset = at.get(t.key);
    if (offset === undefined) {
      offset = dataLength;
      at.set(t.key, offset);
      contents.push(i);
      dataLength += t.length;
    }
    const last = entries.at(-1);
    if (last && last.offset === offset && last.tileId + last.runLength === t.tileId) last.runLength++;
    else entries.push({ tileId: t.tileId, offset, length: t.length, runLength: 1 });
  }
  return { entries, contents, dataLength, addressed: sorted.length };
}

function pushVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
}

/** The v3 directory encoding: count, then id deltas, run lengths, lengths and offsets, column by column. */
export function serializeDirectory(entries: Entry[]): Buffer {
  const out: number[] = [];
  pushVarint(out, entries.length);
  let lastId = 0;
  for (const e of entries) {
    pushVarint(out, e.tileId - lastId);
    lastId = e.tileId;
  }
  for (const e of entries) pushVarint(out, e.runLength);
  for (const e of entries) pushVarint(out, e.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const prev = entries[i - 1];
    // 0 means "right after the previous entry's bytes", else offset + 1.
    pushVarint(out, i > 0 && e.offset === prev.offset + prev.length ? 0 : e.offset + 1);
  }
  if (entries.length > MAX_DIRECTORY_ENTRIES || out.length > MAX_DIRECTORY_DECODED)
    throw new Error(`a directory of ${entries.length} entries is past the readers' limits`);
  const packed = gzipSync(Buffer.from(out));
  if (packed.length > MAX_DIRECTORY_BYTES) throw new Error(`a directory of ${packed.length} bytes is too large`);
  return packed;
}

/** Root and leaf directories: everything in the root if it fits, else leaves of growing size. */
export function buildDirectories(entries: Entry[]): { root: Buffer; leaves: Buffer } {
  const whole = entries.length <= MAX_DIRECTORY_ENTRIES ? serializeDirectory(entries) : undefined;
  if (whole && whole.length <= ROOT_LIMIT - HEADER_BYTES) return { root: whole, leaves: Buffer.alloc(0) };
  for (let leafSize = 4096; leafSize <= MAX_DIRECTORY_ENTRIES; leafSize *= 2) {
    const rootEntries: Entry[] = [];
    const leaves: Buffer[] = [];
    let offset = 0;
    for (let i = 0; i < entries.length; i += leafSize) {
      const leaf = serializeDirectory(entries.slice(i, i + leafSize));
      rootEntries.push({ tileId: entries[i].tileId, offset, length: leaf.length, runLength: 0 });
      leaves.push(leaf);
      offset += leaf.length;
    }
    const root = serializeDirectory(rootEntries);
    if (root.length <= ROOT_LIMIT - HEADER_BYTES) return { root, leaves: Buffer.concat(leaves) };
  }
  throw new Error(`${entries.length} directory entries do not fit one root and one level of leaves`);
}

export interface HeaderFields {
  rootLength: number;
  metadataLength: number;
  leavesLength: number;
  dataLength: number;
  addressed: number;
  entries: number;
  contents: number;
  minZoom: number;
  maxZoom: number;
  /** [west, south, east, north] in degrees. */
  bounds: [number, number, number, number];
}

/** The 127-byte header; sections follow it in the order root, metadata, leaves, data. */
export function encodeHeader(h: HeaderFields): Buffer {
  const b = Buffer.alloc(HEADER_BYTES);
  b.write("PMTiles", 0, "ascii");
  b.writeUInt8(3, 7);
  const rootOffset = HEADER_BYTES;
  const metadataOffset = rootOffset + h.rootLength;
  const leavesOffset = metadataOffset + h.metadataLength;
  const dataOffset = leavesOffset + h.leavesLength;
  const u64 = [
    rootOffset,
    h.rootLength,
    metadataOffset,
    h.metadataLength,
    leavesOffset,
    h.leavesLength,
    dataOffset,
    h.dataLength,
    h.addressed,
    h.entries,
    h.contents,
  ];
  u64.forEach((v, i) => {
    b.writeBigUInt64LE(BigInt(v), 8 + 8 * i);
  });
  b.writeUInt8(1, 96); // clustered
  b.writeUInt8(COMPRESSION_GZIP, 97);
  b.writeUInt8(COMPRESSION_NONE, 98);
  b.writeUInt8(TILE_TYPE_PNG, 99);
  b.writeUInt8(h.minZoom, 100);
  b.writeUInt8(h.maxZoom, 101);
  const [w, s, e, n] = h.bounds;
  const e7 = (deg: number): number => Math.round(deg * 1e7);
  b.writeInt32LE(e7(w), 102);
  b.writeInt32LE(e7(s), 106);
  b.writeInt32LE(e7(e), 110);
  b.writeInt32LE(e7(n), 114);
  b.writeUInt8(h.minZoom, 118);
  // A box crossing the antimeridian (west > east) has its middle on the other side.
  const centerLon = w <= e ? (w + e) / 2 : (((w + e + 360) / 2 + 180) % 360) - 180;
  b.writeInt32LE(e7(centerLon), 119);
  b.writeInt32LE(e7((s + n) / 2), 123);
  return b;
}

export function encodeMetadata(meta: Record<string, unknown>): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(meta)));
}
