// What a PMTiles v3 archive must satisfy before any of its numbers is used, shared by the writer
// (which refuses to write past a limit), the server's reader (which checks each header and
// directory once, before caching it) and publish (which walks every archive of a build). Every
// field is read as untrusted: offsets and lengths must lie inside the file and inside their
// section, lengths inside int32 and the named limits, run lengths inside the zoom's tile count,
// directories are decompressed with a cap on their output so a small "bomb" is refused early.
//
// Layout facts from the v3 specification: a 127-byte header ("PMTiles", version 3, eleven
// little-endian u64 fields from byte 8: root, metadata, leaves and data sections as offset and
// length, then the addressed-tile, entry and content counts; byte 96 clustered, 97 internal
// compression, 98 tile compression, 99 tile type, 100 min zoom, 101 max zoom); the header and
// root directory within the first 16 KiB; a directory is a varint count, then the entries' tile
// id deltas, run lengths, lengths and offsets column by column (offset 0 = right after the
// previous entry, else offset + 1); run length 0 marks a pointer to a leaf directory.

/** Largest tile a build writes or the server reads (a 256 px PNG is far below it). */
export const MAX_TILE_BYTES = 1 << 20;
/** Largest directory as stored (compressed); the root must also fit the first 16 KiB. */
export const MAX_DIRECTORY_BYTES = 8 << 20;
/** Largest directory once decompressed: decompression stops and refuses past it. */
export const MAX_DIRECTORY_DECODED = 8 << 20;
/** Most entries one directory may hold (a decoded entry takes 32 bytes of memory). */
export const MAX_DIRECTORY_ENTRIES = 1 << 18;
/** Root plus leaf levels a tile lookup may descend. */
export const MAX_DIRECTORY_DEPTH = 4;
/** Highest zoom an archive may declare: tile ids stay exact doubles up to here. */
export const MAX_ARCHIVE_ZOOM = 26;
/** Largest metadata document (decompressed), checked at publish. */
export const MAX_METADATA_BYTES = 1 << 20;

export const HEADER_BYTES = 127;
/** Header and root directory must fit in the first 16 KiB, the size a reader fetches first. */
export const ROOT_LIMIT = 16384;
export const COMPRESSION_NONE = 1;
export const COMPRESSION_GZIP = 2;
export const TILE_TYPE_PNG = 2;

/** A field of an archive that breaks the specification or a limit; the message says which. */
export class ArchiveDefect extends Error {}

/** Tile ids 0 .. tileCount(z) - 1 address every tile of zooms 0..z. */
export function tileCount(maxZoom: number): number {
  const top = 4 ** maxZoom;
  return (top - 1) / 3 + top;
}

export interface ArchiveHeader {
  rootOffset: number;
  rootLength: number;
  metadataOffset: number;
  metadataLength: number;
  leavesOffset: number;
  leavesLength: number;
  dataOffset: number;
  dataLength: number;
  addressed: number;
  entries: number;
  contents: number;
  clustered: boolean;
  internalCompression: number;
  minZoom: number;
  maxZoom: number;
  /** Tile ids below this bound exist at zooms up to maxZoom. */
  idLimit: number;
}

const U64_FIELDS = [
  "rootOffset",
  "rootLength",
  "metadataOffset",
  "metadataLength",
  "leavesOffset",
  "leavesLength",
  "dataOffset",
  "dataLength",
  "addressed",
  "entries",
  "contents",
] as const;

/** The header's fields, each checked against the spec, the limits and the file's size. */
export function parseHeader(b: Buffer, fileSize: number): ArchiveHeader {
  if (fileSize < HEADER_BYTES || b.length < HEADER_BYTES)
    throw new ArchiveDefect(`the file is ${fileSize} bytes, shorter than a header`);
  if (b.toString("latin1", 0, 7) !== "PMTiles") throw new ArchiveDefect("no PMTiles magic");
  if (b[7] !== 3) throw new ArchiveDefect(`spec version ${b[7]}, not 3`);
  const f: Record<string, number> = {};
  U64_FIELDS.forEach((name, i) => {
    const v = b.readBigUInt64LE(8 + 8 * i);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ArchiveDefect(`header field ${name} is ${v}, too large`);
    f[name] = Number(v);
  });
  const h = f as unknown as ArchiveHeader;
  // Builds always write tiles in id order; the checks below rely on it.
  if (b[96] !== 1) throw new ArchiveDefect(`clustered flag ${b[96]}, not 1`);
  h.clustered = true;
  h.internalCompression = b[97];
  if (h.internalCompression !== COMPRESSION_GZIP && h.internalCompression !== COMPRESSION_NONE)
    throw new ArchiveDefect(`directory compression ${b[97]} is not gzip or none`);
  if (b[98] !== COMPRESSION_NONE)
    throw new ArchiveDefect(`tile compression ${b[98]}, PNG tiles are stored as they are`);
  if (b[99] !== TILE_TYPE_PNG) throw new ArchiveDefect(`tile type ${b[99]}, not PNG`);
  h.minZoom = b[100];
  h.maxZoom = b[101];
  if (h.maxZoom > MAX_ARCHIVE_ZOOM || h.minZoom > h.maxZoom)
    throw new ArchiveDefect(`zoom range ${h.minZoom}..${h.maxZoom} (at most ${MAX_ARCHIVE_ZOOM})`);
  h.idLimit = tileCount(h.maxZoom);
  if (h.rootOffset < HEADER_BYTES || h.rootLength < 1 || h.rootOffset + h.rootLength > ROOT_LIMIT)
    throw new ArchiveDefect(
      `root directory at ${h.rootOffset} (${h.rootLength} bytes) is not within the first ${ROOT_LIMIT} bytes`,
    );
  const sections: [string, number, number][] = [
    ["root directory", h.rootOffset, h.rootLength],
    ["metadata", h.metadataOffset, h.metadataLength],
    ["leaf directories", h.leavesOffset, h.leavesLength],
    ["tile data", h.dataOffset, h.dataLength],
  ];
  for (const [name, offset, length] of sections) {
    if (length > 0 && offset < HEADER_BYTES) throw new ArchiveDefect(`${name} at ${offset} overlaps the header`);
    if (offset + length > fileSize)
      throw new ArchiveDefect(`${name} ends at ${offset + length}, past the end of the ${fileSize}-byte file`);
  }
  for (let i = 0; i < sections.length; i++)
    for (let j = i + 1; j < sections.length; j++) {
      const [a, ao, al] = sections[i];
      const [c, co, cl] = sections[j];
      if (al > 0 && cl > 0 && ao < co + cl && co < ao + al) throw new ArchiveDefect(`${a} and ${c} overlap`);
    }
  if (h.addressed > h.idLimit)
    throw new ArchiveDefect(`${h.addressed} addressed tiles, more than zooms 0..${h.maxZoom} have`);
  if (h.entries > h.addressed && h.addressed > 0)
    throw new ArchiveDefect(`${h.entries} entries for ${h.addressed} addressed tiles`);
  if (h.contents > h.entries && h.entries > 0)
    throw new ArchiveDefect(`${h.contents} tile contents for ${h.entries} entries`);
  return h;
}

/** A decoded directory: column arrays, ids strictly increasing. */
export interface Directory {
  ids: Float64Array;
  runs: Float64Array;
  lengths: Uint32Array;
  offsets: Float64Array;
  /** True when every entry points at a leaf directory (run length 0), false when all are tiles. */
  leaves: boolean;
  /** Memory the arrays take. */
  bytes: number;
}

/** Where a directory sits: the tile ids it may address, [lo, hi). */
export interface DirectoryScope {
  lo: number;
  hi: number;
}

function readVarint(b: Buffer, at: { pos: number }): number {
  let v = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    if (at.pos >= b.length) throw new ArchiveDefect("directory ends inside a number");
    const byte = b[at.pos++];
    v += (byte & 0x7f) * scale;
    if (byte < 0x80) {
      if (v > Number.MAX_SAFE_INTEGER) break;
      return v;
    }
    scale *= 0x80;
  }
  throw new ArchiveDefect("directory number beyond 2^53");
}

/**
 * Decodes and checks one decompressed directory: entry count within the limit (and within what
 * the bytes can hold, before anything is allocated), ids strictly increasing inside `scope`, runs
 * that never reach the next entry's id or past the scope, lengths within the limits, offsets
 * whose bytes lie inside their section, and tile bytes of distinct entries never overlapping.
 */
export function decodeDirectory(raw: Buffer, h: ArchiveHeader, scope: DirectoryScope): Directory {
  const at = { pos: 0 };
  const n = readVarint(raw, at);
  if (n > MAX_DIRECTORY_ENTRIES)
    throw new ArchiveDefect(`a directory of ${n} entries (at most ${MAX_DIRECTORY_ENTRIES})`);
  if (n * 4 > raw.length - at.pos) throw new ArchiveDefect(`a directory claims ${n} entries in ${raw.length} bytes`);
  const ids = new Float64Array(n);
  const runs = new Float64Array(n);
  const lengths = new Uint32Array(n);
  const offsets = new Float64Array(n);
  let id = 0;
  for (let i = 0; i < n; i++) {
    const delta = readVarint(raw, at);
    if (i > 0 && delta === 0) throw new ArchiveDefect(`tile id ${id} repeats in a directory`);
    id += delta;
    if (id < scope.lo || id >= scope.hi)
      throw new ArchiveDefect(`tile id ${id} outside its directory's range ${scope.lo}..${scope.hi - 1}`);
    ids[i] = id;
  }
  let leafCount = 0;
  for (let i = 0; i < n; i++) {
    runs[i] = readVarint(raw, at);
    if (runs[i] === 0) leafCount++;
  }
  if (leafCount !== 0 && leafCount !== n) throw new ArchiveDefect("a directory mixes tiles and leaf pointers");
  const leaves = n > 0 && leafCount === n;
  const maxLength = leaves ? MAX_DIRECTORY_BYTES : MAX_TILE_BYTES;
  for (let i = 0; i < n; i++) {
    const len = readVarint(raw, at);
    if (len < 1 || len > maxLength)
      throw new ArchiveDefect(
        `${leaves ? "leaf directory" : "tile"} ${ids[i]} has length ${len} (1..${maxLength} bytes allowed)`,
      );
    lengths[i] = len;
  }
  const section = leaves ? h.leavesLength : h.dataLength;
  for (let i = 0; i < n; i++) {
    const v = readVarint(raw, at);
    if (v === 0 && i === 0) throw new ArchiveDefect("the first entry of a directory continues no previous entry");
    const offset = v === 0 ? offsets[i - 1] + lengths[i - 1] : v - 1;
    if (offset + lengths[i] > section)
      throw new ArchiveDefect(
        `${leaves ? "leaf directory" : "tile"} ${ids[i]} at ${offset} (+${lengths[i]}) runs past its ${section}-byte section`,
      );
    offsets[i] = offset;
  }
  if (at.pos !== raw.length) throw new ArchiveDefect(`${raw.length - at.pos} stray bytes after a directory`);
  if (!leaves)
    for (let i = 0; i < n; i++) {
      const end = i + 1 < n ? ids[i + 1] : scope.hi;
      if (ids[i] + runs[i] > end)
        throw new ArchiveDefect(`tile ${ids[i]} has run length ${runs[i]}, reaching past tile id ${end - 1}`);
    }
  checkDisjoint(offsets, lengths, leaves);
  return { ids, runs, lengths, offsets, leaves, bytes: 32 * n + 64 };
}

/** Distinct byte ranges never overlap, and one offset always has one length. */
function checkDisjoint(offsets: Float64Array, lengths: Uint32Array, leaves: boolean): void {
  const order = Array.from(offsets.keys()).sort((a, b) => offsets[a] - offsets[b]);
  for (let k = 1; k < order.length; k++) {
    const [p, q] = [order[k - 1], order[k]];
    if (offsets[p] === offsets[q]) {
      if (lengths[p] !== lengths[q] || leaves)
        throw new ArchiveDefect(`two entries start at ${offsets[q]} with lengths ${lengths[p]} and ${lengths[q]}`);
    } else if (offsets[p] + lengths[p] > offsets[q])
      throw new ArchiveDefect(`entries at ${offsets[p]} (+${lengths[p]}) and ${offsets[q]} overlap`);
  }
}

/**
 * The clustered layout seen from the start of a section: each new content starts exactly where
 * the previous one ended, in tile id order, and a repeated content is an exact earlier start with
 * its length. With the whole directory tree walked (publish) or a root holding every tile, a
 * moved offset leaves a gap or a mismatch here.
 */
export class ClusteredChain {
  end = 0;
  readonly #starts = new Map<number, number>();
  get distinct(): number {
    return this.#starts.size;
  }
  add(id: number, offset: number, length: number): void {
    const seen = this.#starts.get(offset);
    if (seen !== undefined) {
      if (seen !== length)
        throw new ArchiveDefect(`tile ${id} repeats the content at ${offset} with length ${length}, not ${seen}`);
      return;
    }
    if (offset !== this.end)
      throw new ArchiveDefect(
        `tile ${id} starts at ${offset}; the clustered layout puts the next content at ${this.end}`,
      );
    this.#starts.set(offset, length);
    this.end += length;
  }
}

/** A root holding every tile itself: checked whole against the header's counts and data length. */
export function checkWholeRoot(d: Directory, h: ArchiveHeader): void {
  if (d.leaves) return;
  const chain = new ClusteredChain();
  let addressed = 0;
  for (let i = 0; i < d.ids.length; i++) {
    chain.add(d.ids[i], d.offsets[i], d.lengths[i]);
    addressed += d.runs[i];
  }
  checkTotals(h, { addressed, entries: d.ids.length, contents: chain.distinct, dataEnd: chain.end });
}

export function checkTotals(
  h: ArchiveHeader,
  got: { addressed: number; entries: number; contents: number; dataEnd: number },
): void {
  if (got.dataEnd !== h.dataLength)
    throw new ArchiveDefect(`tile contents end at ${got.dataEnd} of a ${h.dataLength}-byte data section`);
  if (h.addressed && got.addressed !== h.addressed)
    throw new ArchiveDefect(`directories address ${got.addressed} tiles, the header says ${h.addressed}`);
  if (h.entries && got.entries !== h.entries)
    throw new ArchiveDefect(`directories hold ${got.entries} tile entries, the header says ${h.entries}`);
  if (h.contents && got.contents !== h.contents)
    throw new ArchiveDefect(`directories reference ${got.contents} contents, the header says ${h.contents}`);
}

/** Index of the last entry whose id is ≤ `id`, or -1. */
export function findEntry(ids: Float64Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] <= id) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi;
}
