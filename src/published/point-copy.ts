// The on-disk format of a build's point copies, writer and reader side by side.
//
//   point/<key>.json   the copy's header (PointCopyHeader): what it holds and what it was made from
//   point/<key>.bin    (blocks + 1) little-endian u64 offsets into the data, then the blocks: each
//                      block's values (node-major; per node level × member × lead, float32 or
//                      float64 as the store's reads give them) byte-shuffled and zstd-compressed
//
// <key> is a digest of the group, variable and run, so a request finds its copy by arithmetic (no
// listing, no index of the build), and a name from a request never becomes a path.
import { createHash } from "node:crypto";
import { closeSync, linkSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { constants as z, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { BoundedMap } from "../bounded-map.ts";
import { readBelow } from "../confined.ts";
import {
  blockCount,
  blockOf,
  type CopyLayout,
  type CopyQuery,
  columnFromNode,
  copyLayout,
  copyRevision,
  type PointCopies,
} from "../forecast/point-copy.ts";
import { regionOf } from "../forecast/read.ts";
import { nativeAddon } from "../native.ts";
import type { Soon } from "../soon.ts";
import { isoNoZone } from "../store/describe.ts";
import { NOT_YET } from "../store/stamp-memo.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import { writeJsonAtomic } from "./manifest.ts";

export const POINT_DIR = "point";
export const POINT_FORMAT = 1;
/** zstd level of the blocks: fast to write, and decoding speed hardly depends on it. */
const ZSTD_LEVEL = 3;
/** Copy headers a reader keeps (per build): a handful per served variable and run. */
const HEADERS_KEPT = 4096;
/** .bin files a reader keeps open (per build). */
const FILES_OPEN = 256;

export interface PointCopyHeader {
  format: number;
  group: string;
  variable: string;
  run: string;
  revision: string;
  /** The run's ingested lead hour when the copy was made (null: the store does not say). */
  ingested: number | null;
  layout: CopyLayout;
  blocks: number;
  /** Version of each stored chunk of the run's last lead (by storage key) the copy was made from. */
  versions: Record<string, string>;
  /** Bytes of the .bin file. */
  bytes: number;
}

/** The file name (without extension) of the copy of a variable's run. */
export function pointCopyKey(group: string, variable: string, run: string): string {
  return createHash("sha256")
    .update(JSON.stringify([group, variable, run]))
    .digest("hex")
    .slice(0, 24);
}

export const pointCopyPaths = (key: string) => ({ json: `${POINT_DIR}/${key}.json`, bin: `${POINT_DIR}/${key}.bin` });

function shuffle(src: Uint8Array, size: number): Uint8Array {
  const n = src.length / size;
  const out = new Uint8Array(src.length);
  for (let b = 0; b < size; b++) for (let i = 0; i < n; i++) out[b * n + i] = src[i * size + b];
  return out;
}

/** Writes one copy's .bin block by block (in block order), then its header. */
/** One block as a copy stores it: byte-shuffled, then zstd. */
export function packBlock(values: Float32Array | Float64Array, bytes: number): Uint8Array {
  const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  return zstdCompressSync(shuffle(raw, bytes), { params: { [z.ZSTD_c_compressionLevel]: ZSTD_LEVEL } });
}

export class PointCopyWriter {
  readonly #fd: number;
  readonly #offsets: BigUint64Array;
  readonly #layout: CopyLayout;
  readonly #paths: { json: string; bin: string };
  readonly #dir: string;
  #next = 0;
  #at = 0;

  constructor(buildDir: string, key: string, layout: CopyLayout) {
    this.#dir = buildDir;
    this.#layout = layout;
    this.#paths = pointCopyPaths(key);
    this.#offsets = new BigUint64Array(blockCount(layout) + 1);
    this.#fd = openSync(join(buildDir, this.#paths.bin), "w");
    // The index is written last, in the room left for it here.
    this.#at = this.#offsets.byteLength;
  }

  add(values: Float32Array | Float64Array): void {
    const packed = packBlock(values, this.#layout.bytes);
    writeSync(this.#fd, packed, 0, packed.length, this.#at);
    this.#at += packed.length;
    this.#offsets[++this.#next] = BigInt(this.#at - this.#offsets.byteLength);
  }

  finish(header: Omit<PointCopyHeader, "format" | "layout" | "blocks" | "bytes">): PointCopyHeader {
    try {
      if (this.#next !== this.#offsets.length - 1) {
        throw new Error(`point copy ${this.#paths.bin}: ${this.#next} of ${this.#offsets.length - 1} blocks written`);
      }
      const index = new Uint8Array(this.#offsets.buffer);
      writeSync(this.#fd, index, 0, index.length, 0);
    } finally {
      closeSync(this.#fd);
    }
    const out: PointCopyHeader = {
      format: POINT_FORMAT,
      ...header,
      layout: this.#layout,
      blocks: this.#offsets.length - 1,
      bytes: this.#at,
    };
    writeJsonAtomic(join(this.#dir, this.#paths.json), out);
    return out;
  }

  /** Gives up: the partial .bin stays in the partial build, which is never published without its header. */
  abort(): void {
    closeSync(this.#fd);
  }
}

/** Hard-links a copy of the previous build into a new one (its data did not change). */
export function linkPointCopy(fromBuild: string, toBuild: string, key: string): void {
  const p = pointCopyPaths(key);
  linkSync(join(fromBuild, p.bin), join(toBuild, p.bin));
  linkSync(join(fromBuild, p.json), join(toBuild, p.json));
}

export async function readPointCopyHeader(buildDir: string, key: string): Promise<PointCopyHeader | undefined> {
  const b = await readBelow(buildDir, join(buildDir, pointCopyPaths(key).json)).catch(() => undefined);
  if (b === undefined) return undefined;
  try {
    const h = JSON.parse(b.toString("utf8")) as PointCopyHeader;
    return h.format === POINT_FORMAT ? h : undefined;
  } catch {
    return undefined;
  }
}

const sameLayout = (a: CopyLayout, b: CopyLayout) =>
  a.ny === b.ny &&
  a.nx === b.nx &&
  a.by === b.by &&
  a.bx === b.bx &&
  a.nLevel === b.nLevel &&
  a.nMember === b.nMember &&
  a.nLead === b.nLead &&
  a.perNode === b.perNode &&
  a.bytes === b.bytes;

/** The stored object's version when known without waiting (Backend.stampNow), NOT_YET otherwise. */
export type VersionNow = (storageKey: string) => string | undefined | typeof NOT_YET;

/**
 * What the copies of one published build give /point (one reader per build). A warm request is
 * answered in the turn it came in: the header in memory, the chunk's version known at once
 * (VersionNow), the .bin file open, and two preads of it from the page cache; what is not in hand
 * yet (a header, a version, after the first request) is waited for once.
 */
export class PointCopyReader implements PointCopies {
  readonly dir: string;
  readonly #versionNow: VersionNow | undefined;
  /** Series answered by the copy rather than the store (the tests count them). */
  hits = 0;
  /** The header once read: null when the build has none under this key. */
  readonly #known = new BoundedMap<string, PointCopyHeader | null>(HEADERS_KEPT);
  readonly #reading = new Map<string, Promise<void>>();
  /** Keys (and run times) by variable and run: the digest is taken once per variable object and run. */
  readonly #keys = new WeakMap<GroupVariable, Map<number, { key: string; run: string }>>();
  /** Open .bin files by key, at most FILES_OPEN (then all closed and opened again as asked). */
  readonly #files = new Map<string, number>();
  #closed = false;

  constructor(buildDir: string, versionNow?: VersionNow) {
    this.dir = buildDir;
    this.#versionNow = versionNow;
  }

  /** Closes the open files (the build is no longer served); later reads open, read and close. */
  close(): void {
    this.#closed = true;
    for (const fd of this.#files.values()) closeSync(fd);
    this.#files.clear();
  }

  #key(group: ForecastGroup, v: GroupVariable, run: number): { key: string; run: string } {
    let byRun = this.#keys.get(v);
    if (!byRun) {
      byRun = new Map();
      this.#keys.set(v, byRun);
    }
    let k = byRun.get(run);
    if (k === undefined) {
      const iso = isoNoZone(group.runs[run]);
      k = { key: pointCopyKey(group.id, v.name, iso), run: iso };
      byRun.set(run, k);
    }
    return k;
  }

  column(q: CopyQuery): Soon<Float32Array | Float64Array | undefined> {
    const { key, run } = this.#key(q.group, q.v, q.run);
    try {
      const h = this.#known.get(key);
      if (h === null) return undefined;
      if (h === undefined) return this.#loadHeader(key).then(() => this.column(q));
      const want = this.#recorded(h, q, run);
      if (want === undefined) return undefined;
      const now = this.#versionNow?.(want.storage);
      if (now === NOT_YET || this.#versionNow === undefined) {
        return q.v.array.chunkVersion(want.coords).then(
          (version) => (version === want.version ? this.#read(h, key, q) : undefined),
          (e: unknown) => this.#failed(key, q, e),
        );
      }
      return (now ?? "") === want.version ? this.#read(h, key, q) : undefined;
    } catch (e) {
      return this.#failed(key, q, e);
    }
  }

  /** The store is the truth: a copy that cannot be read is reported and the store answers. */
  #failed(key: string, q: CopyQuery, e: unknown): undefined {
    console.error(
      `gridcast: point copy ${pointCopyPaths(key).bin} of build ${this.dir} (${q.group.id} ${q.v.name}) ` +
        `cannot be read, answering from the store: ${e instanceof Error ? e.message : String(e)}`,
    );
    return undefined;
  }

  #loadHeader(key: string): Promise<void> {
    let p = this.#reading.get(key);
    if (!p) {
      p = readPointCopyHeader(this.dir, key).then((h) => {
        this.#known.set(key, h ?? null);
        this.#reading.delete(key);
      });
      this.#reading.set(key, p);
    }
    return p;
  }

  /**
   * The chunk whose version the copy must match (the run's last lead at the node) and that
   * version, when the copy holds the same run, revision, ingested lead and layout; else undefined.
   */
  #recorded(h: PointCopyHeader, q: CopyQuery, runIso: string) {
    const { group, v, run } = q;
    if (h.group !== group.id || h.variable !== v.name || h.run !== runIso) return undefined;
    if (h.revision !== copyRevision(group, v) || h.ingested !== (group.ingested?.[run] ?? null)) return undefined;
    const layout = copyLayout(v);
    if (!sameLayout(h.layout, layout) || h.blocks !== blockCount(layout)) return undefined;
    const member = Array.isArray(q.member) ? q.member[0] : q.member;
    const last = Math.max(0, layout.nLead - 1);
    const region = regionOf(group, v, { run, lead: last, level: q.level, member, lat: q.iy, lon: q.ix });
    const coords = region.map(([a], d) => Math.floor(a / v.array.chunks[d]));
    const storage = v.array.storageKey(coords);
    const version = h.versions[storage];
    return version === undefined ? undefined : { coords, storage, version };
  }

  /** Buffers reused by every read (a read is synchronous: one at a time). */
  readonly #index = Buffer.allocUnsafe(16);
  readonly #buffers = new Map<string, Uint8Array>();

  #scratch(name: string, bytes: number): Uint8Array {
    let b = this.#buffers.get(name);
    if (!b || b.length < bytes) {
      b = new Uint8Array(Math.max(bytes, 2 * (b?.length ?? 0)));
      this.#buffers.set(name, b);
    }
    return b.subarray(0, bytes);
  }

  /**
   * A block's zstd frame decoded, exactly `bytes` long: into a reused buffer by the native addon
   * (node:zlib's one-shot call builds and frees a decoder context each time, most of a request).
   */
  #decode(packed: Uint8Array, bytes: number, block: number): Uint8Array {
    const sync = nativeAddon()?.zstdDecodeSync;
    const out = sync ? this.#scratch("decoded", bytes) : zstdDecompressSync(packed);
    const n = sync ? sync(packed, out) : out.length;
    if (n !== bytes) throw new Error(`block ${block} holds ${n} bytes, not ${bytes}`);
    return out;
  }

  #fd(key: string): { fd: number; kept: boolean } {
    const kept = this.#files.get(key);
    if (kept !== undefined) return { fd: kept, kept: true };
    const fd = openSync(join(this.dir, pointCopyPaths(key).bin), "r");
    if (this.#closed) return { fd, kept: false };
    if (this.#files.size >= FILES_OPEN) {
      for (const f of this.#files.values()) closeSync(f);
      this.#files.clear();
    }
    this.#files.set(key, fd);
    return { fd, kept: true };
  }

  /** The node's column from its block: two preads, one zstd decode, the node's bytes unshuffled. */
  #read(h: PointCopyHeader, key: string, q: CopyQuery): Float32Array | Float64Array {
    const layout = h.layout;
    const { block, node, nodes } = blockOf(layout, q.iy, q.ix);
    const { fd, kept } = this.#fd(key);
    const size = layout.bytes;
    const count = nodes * layout.perNode;
    let packed: Uint8Array;
    try {
      const index = this.#index;
      readSync(fd, index, 0, 16, block * 8);
      const start = Number(index.readBigUInt64LE(0));
      const end = Number(index.readBigUInt64LE(8));
      const base = (h.blocks + 1) * 8;
      if (!(end > start && base + end <= h.bytes)) throw new Error(`block ${block} has offsets ${start}..${end}`);
      packed = this.#scratch("packed", end - start);
      if (readSync(fd, packed, 0, packed.length, base + start) !== packed.length) {
        throw new Error(`block ${block} is cut short`);
      }
    } finally {
      if (!kept) closeSync(fd);
    }
    const shuffled = this.#decode(packed, count * size, block);
    // Only this node's values are put back together: value i's byte b sits at b * count + i.
    const raw = new Uint8Array(layout.perNode * size);
    const first = node * layout.perNode;
    for (let b = 0; b < size; b++) {
      const from = b * count + first;
      for (let i = 0; i < layout.perNode; i++) raw[i * size + b] = shuffled[from + i];
    }
    const values = size === 8 ? new Float64Array(raw.buffer) : new Float32Array(raw.buffer);
    this.hits++;
    return columnFromNode(q.v, layout, values, q.level, q.member);
  }
}
