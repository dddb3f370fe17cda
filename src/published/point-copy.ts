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
  type CopyBoxPart,
  type CopyBoxQuery,
  type CopyLayout,
  type CopyQuery,
  columnFromNode,
  copyLayout,
  copyRevision,
  type PointCopies,
} from "../forecast/point-copy.ts";
import { regionOf } from "../forecast/read.ts";
import { nativeAddon } from "../native.ts";
import { type Soon, then } from "../soon.ts";
import { isoNoZone } from "../store/describe.ts";
import type { Range } from "../store/region.ts";
import { NOT_YET } from "../store/stamp-memo.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import { writeJsonAtomic } from "./manifest.ts";

export const POINT_DIR = "point";
/** 2: `versions` holds every chunk of the run (1 held the last lead's only). */
export const POINT_FORMAT = 2;
/** zstd level of the blocks: fast to write, and decoding speed hardly depends on it. */
const ZSTD_LEVEL = 3;
/** Copy headers a reader keeps (per build): a handful per served variable and run. */
const HEADERS_KEPT = 4096;
/** Chunk regions a reader keeps the recorded chunks of, per copy header. */
const WITNESS_REGIONS_KEPT = 1024;
/** .bin files a reader keeps open (per build). */
const FILES_OPEN = 256;

/** Every lead of the run at the column's node, its level and member(s): the region it is read from. */
const columnRegion = (q: CopyQuery): Range[] =>
  regionOf(q.group, q.v, { run: q.run, level: q.level, member: q.member, lat: q.iy, lon: q.ix });

/** A stored chunk a column's values come from, and the version the copy was made from. */
interface Witness {
  coords: number[];
  storage: string;
  version: string;
}

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
  /** Version of every stored chunk of the run (by storage key) the copy was made from. */
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
  /** Copy headers read from disk (the tests count them). */
  headerReads = 0;
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
    return then(this.#usable(q), (u) => {
      if (u === undefined) return undefined;
      try {
        return this.#read(u.h, u.key, q);
      } catch (e) {
        return this.#failed(u.key, q, e);
      }
    });
  }

  /**
   * Whether the copy holds the column exactly as the store holds it now (see column), with no
   * value read: what a server's warm-up asks, so that the headers and chunk versions are in hand.
   */
  async holds(q: CopyQuery): Promise<boolean> {
    return (await this.#usable(q)) !== undefined;
  }

  heldNow(q: CopyQuery): (() => boolean) | undefined {
    const { key, run } = this.#key(q.group, q.v, q.run);
    const h = this.#known.get(key);
    const versionNow = this.#versionNow;
    if (!h || versionNow === undefined || !this.#matches(h, q.group, q.v, q.run, run)) return undefined;
    const witnesses = this.#witnesses(h, q.v, columnRegion(q));
    if (witnesses === undefined) return undefined;
    // Checked on every reuse of the answer: the reader still open (its build served) and every
    // chunk at the version the copy was made from, as far as the store knows without waiting.
    return () => {
      if (this.#closed) return false;
      for (const w of witnesses) {
        const now = versionNow(w.storage);
        if (now === NOT_YET || (now ?? "") !== w.version) return false;
      }
      return true;
    };
  }

  /** The copy (key and header) that holds the column as the store holds it now, else undefined. */
  #usable(q: CopyQuery): Soon<{ key: string; h: PointCopyHeader } | undefined> {
    return this.#usableFor(q.group, q.v, q.run, () => [columnRegion(q)], q);
  }

  /**
   * The copy (key and header) of the variable's run when it holds the values of `regions` as the
   * store holds them now, else undefined (`q` names the column in a log line).
   */
  #usableFor(
    group: ForecastGroup,
    v: GroupVariable,
    run: number,
    regions: () => Range[][],
    q: CopyQuery,
  ): Soon<{ key: string; h: PointCopyHeader } | undefined> {
    const { key, run: runIso } = this.#key(group, v, run);
    try {
      const h = this.#known.get(key);
      if (h === null) return undefined;
      if (h === undefined) return this.#loadHeader(key).then(() => this.#usableFor(group, v, run, regions, q));
      if (!this.#matches(h, group, v, run, runIso)) return undefined;
      // Every stored chunk the values come from must hold the version the copy was made from: a
      // lead rewritten in place, any lead, sends the read to the store.
      let waiting: Promise<boolean>[] | undefined;
      for (const region of regions()) {
        const witnesses = this.#witnesses(h, v, region);
        if (witnesses === undefined) return undefined;
        for (const w of witnesses) {
          const now = this.#versionNow?.(w.storage);
          if (now === NOT_YET || this.#versionNow === undefined) {
            (waiting ??= []).push(v.array.chunkVersion(w.coords).then((version) => version === w.version));
          } else if ((now ?? "") !== w.version) {
            return undefined;
          }
        }
      }
      if (waiting === undefined) return { key, h };
      return Promise.all(waiting).then(
        (same) => (same.every(Boolean) ? { key, h } : undefined),
        (e: unknown) => this.#failed(key, q, e),
      );
    } catch (e) {
      return this.#failed(key, q, e);
    }
  }

  /**
   * A small box's values for leads [l0, l1) from the copy, each region's values written where
   * `place` says (as StoredArray.readInto places them), before unit conversion; false (nothing
   * trusted in `out`) when the copy does not hold every one of them as the store holds them now.
   */
  box(q: CopyBoxQuery, out: Float32Array): Soon<boolean> {
    const column: CopyQuery = { group: q.group, v: q.v, run: q.run, level: q.level, member: q.member, iy: 0, ix: 0 };
    const regions = () => q.parts.map((p) => p.region);
    return then(this.#usableFor(q.group, q.v, q.run, regions, column), (u) => {
      if (u === undefined) return false;
      try {
        for (const part of q.parts) this.#fillBox(u.h, u.key, q, part, out);
        this.hits++;
        return true;
      } catch (e) {
        this.#failed(u.key, column, e);
        return false;
      }
    });
  }

  /** One region's values from the blocks it touches, each block decoded once. */
  #fillBox(h: PointCopyHeader, key: string, q: CopyBoxQuery, part: CopyBoxPart, out: Float32Array): void {
    const l = h.layout;
    const roles = q.v.roles;
    const { region, place } = part;
    const yd = roles.indexOf("lat");
    const xd = roles.indexOf("lon");
    const td = roles.indexOf("lead");
    const [y0, y1] = yd < 0 ? [0, 1] : region[yd];
    const [x0, x1] = xd < 0 ? [0, 1] : region[xd];
    const sy = yd < 0 ? 0 : place.strides[yd];
    const sx = xd < 0 ? 0 : place.strides[xd];
    const st = td < 0 ? 0 : place.strides[td];
    const [t0, t1] = td < 0 ? [0, 1] : region[td];
    const md = roles.indexOf("member");
    const m = md < 0 ? 0 : region[md][0];
    const li = q.level ?? 0;
    const size = l.bytes;
    const word = new Uint8Array(8);
    const asFloat = size === 8 ? new Float64Array(word.buffer) : new Float32Array(word.buffer, 0, 1);
    for (let by = Math.floor(y0 / l.by) * l.by; by < y1; by += l.by) {
      for (let bx = Math.floor(x0 / l.bx) * l.bx; bx < x1; bx += l.bx) {
        const { block, nodes } = blockOf(l, by, bx);
        const count = nodes * l.perNode;
        const shuffled = this.#block(h, key, block, count * size);
        const w = Math.min(l.bx, l.nx - bx);
        for (let iy = Math.max(y0, by); iy < Math.min(y1, by + l.by); iy++) {
          for (let ix = Math.max(x0, bx); ix < Math.min(x1, bx + w); ix++) {
            const first = ((iy - by) * w + (ix - bx)) * l.perNode;
            const at = place.offset + (iy - y0) * sy + (ix - x0) * sx;
            for (let t = t0; t < t1; t++) {
              const i = first + (li * l.nMember + m) * l.nLead + t;
              for (let b = 0; b < size; b++) word[b] = shuffled[b * count + i];
              out[at + (t - t0) * st] = asFloat[0];
            }
          }
        }
      }
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
      this.headerReads++;
      p = readPointCopyHeader(this.dir, key).then((h) => {
        this.#known.set(key, h ?? null);
        this.#reading.delete(key);
      });
      this.#reading.set(key, p);
    }
    return p;
  }

  /** The chunks (with the versions the copy was made from) behind the columns of a header, by chunk region. */
  readonly #witnessMemo = new WeakMap<PointCopyHeader, BoundedMap<string, Witness[]>>();

  /** Whether a header is the copy of this variable's run as the store describes it now. */
  #matches(h: PointCopyHeader, group: ForecastGroup, v: GroupVariable, run: number, runIso: string): boolean {
    if (h.group !== group.id || h.variable !== v.name || h.run !== runIso) return false;
    if (h.revision !== copyRevision(group, v) || h.ingested !== (group.ingested?.[run] ?? null)) return false;
    const layout = copyLayout(v);
    return sameLayout(h.layout, layout) && h.blocks === blockCount(layout);
  }

  /**
   * The stored chunks a region's values come from, with the version each had when the copy was
   * made; undefined when the copy did not record one of them.
   */
  #witnesses(h: PointCopyHeader, v: GroupVariable, region: Range[]): Witness[] | undefined {
    const chunks = v.array.chunks;
    const at = region.map(([a, b], d) => `${Math.floor(a / chunks[d])}-${Math.floor((b - 1) / chunks[d])}`).join(",");
    let memo = this.#witnessMemo.get(h);
    if (!memo) {
      memo = new BoundedMap(WITNESS_REGIONS_KEPT);
      this.#witnessMemo.set(h, memo);
    }
    let list = memo.get(at);
    if (list === undefined) {
      list = [];
      for (const coords of v.array.chunksFor(region)) {
        const storage = v.array.storageKey(coords);
        const version = h.versions[storage];
        if (version === undefined) return undefined;
        list.push({ coords, storage, version });
      }
      memo.set(at, list);
    }
    return list;
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

  /** A block's values as stored (shuffled), `bytes` long: two preads and one zstd decode. */
  #block(h: PointCopyHeader, key: string, block: number, bytes: number): Uint8Array {
    const { fd, kept } = this.#fd(key);
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
    return this.#decode(packed, bytes, block);
  }

  /** The node's column from its block, only the node's bytes unshuffled. */
  #read(h: PointCopyHeader, key: string, q: CopyQuery): Float32Array | Float64Array {
    const layout = h.layout;
    const { block, node, nodes } = blockOf(layout, q.iy, q.ix);
    const size = layout.bytes;
    const count = nodes * layout.perNode;
    const shuffled = this.#block(h, key, block, count * size);
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
