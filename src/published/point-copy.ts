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
import { closeSync, linkSync, openSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
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
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import { writeJsonAtomic } from "./manifest.ts";

export const POINT_DIR = "point";
export const POINT_FORMAT = 1;
/** zstd level of the blocks: fast to write, and decoding speed hardly depends on it. */
const ZSTD_LEVEL = 3;
/** Copy headers a reader keeps (per build): a handful per served variable and run. */
const HEADERS_KEPT = 4096;

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

function unshuffle(src: Uint8Array, size: number): Uint8Array {
  const n = src.length / size;
  const out = new Uint8Array(src.length);
  for (let b = 0; b < size; b++) for (let i = 0; i < n; i++) out[i * size + b] = src[b * n + i];
  return out;
}

/** Writes one copy's .bin block by block (in block order), then its header. */
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
    const raw = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    const packed = zstdCompressSync(shuffle(raw, this.#layout.bytes), {
      params: { [z.ZSTD_c_compressionLevel]: ZSTD_LEVEL },
    });
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

/** What the copies of one published build give /point (one reader per build). */
export class PointCopyReader implements PointCopies {
  readonly dir: string;
  /** Copies read from (tests and /metrics: a series answered by the copy, not the store). */
  hits = 0;

  constructor(buildDir: string) {
    this.dir = buildDir;
  }

  /** The header once read: null when the build has none under this key (then no promise). */
  readonly #known = new BoundedMap<string, PointCopyHeader | null>(HEADERS_KEPT);
  readonly #reading = new BoundedMap<string, Promise<PointCopyHeader | undefined>>(HEADERS_KEPT);
  /** Keys by variable and run: the digest is taken once per variable object and run. */
  readonly #keys = new WeakMap<GroupVariable, Map<number, string>>();

  #key(group: ForecastGroup, v: GroupVariable, run: number): string {
    let byRun = this.#keys.get(v);
    if (!byRun) {
      byRun = new Map();
      this.#keys.set(v, byRun);
    }
    let k = byRun.get(run);
    if (k === undefined) {
      k = pointCopyKey(group.id, v.name, isoNoZone(group.runs[run]));
      byRun.set(run, k);
    }
    return k;
  }

  column(q: CopyQuery): Promise<Float32Array | Float64Array | undefined> | undefined {
    const key = this.#key(q.group, q.v, q.run);
    const known = this.#known.get(key);
    if (known === null) return undefined;
    return this.#column(q, key, known).catch((e: unknown) => {
      // The store is the truth: a damaged copy is reported and the store answers.
      console.error(
        `gridcast: point copy ${pointCopyPaths(key).bin} of build ${this.dir} (${q.group.id} ${q.v.name}) ` +
          `cannot be read, answering from the store: ${e instanceof Error ? e.message : String(e)}`,
      );
      return undefined;
    });
  }

  async #column(
    q: CopyQuery,
    key: string,
    known: PointCopyHeader | undefined,
  ): Promise<Float32Array | Float64Array | undefined> {
    const { group, v, run } = q;
    let h = known;
    if (h === undefined) {
      let reading = this.#reading.get(key);
      if (!reading) {
        reading = readPointCopyHeader(this.dir, key);
        this.#reading.set(key, reading);
      }
      h = await reading;
      this.#known.set(key, h ?? null);
      this.#reading.delete(key);
      if (!h) return undefined;
    }
    const runIso = isoNoZone(group.runs[run]);
    if (h.group !== group.id || h.variable !== v.name || h.run !== runIso) return undefined;
    if (h.revision !== copyRevision(group, v) || h.ingested !== (group.ingested?.[run] ?? null)) return undefined;
    const layout = copyLayout(v);
    if (!sameLayout(h.layout, layout) || h.blocks !== blockCount(layout)) return undefined;
    if (!(await this.#chunkCurrent(h, q))) return undefined;
    const { block, node, nodes } = blockOf(layout, q.iy, q.ix);
    const fh = await open(join(this.dir, pointCopyPaths(key).bin), "r");
    let packed: Buffer;
    try {
      const index = Buffer.allocUnsafe(16);
      await fh.read(index, 0, 16, block * 8);
      const start = Number(index.readBigUInt64LE(0));
      const end = Number(index.readBigUInt64LE(8));
      const base = (h.blocks + 1) * 8;
      if (!(end > start && base + end <= h.bytes)) throw new Error(`block ${block} has offsets ${start}..${end}`);
      packed = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await fh.read(packed, 0, packed.length, base + start);
      if (bytesRead !== packed.length) throw new Error(`block ${block} is cut short`);
    } finally {
      await fh.close();
    }
    const raw = unshuffle(zstdDecompressSync(packed), layout.bytes);
    const need = nodes * layout.perNode * layout.bytes;
    if (raw.length !== need) throw new Error(`block ${block} holds ${raw.length} bytes, not ${need}`);
    const start = node * layout.perNode;
    const values =
      layout.bytes === 8
        ? new Float64Array(raw.buffer, raw.byteOffset + start * 8, layout.perNode)
        : new Float32Array(raw.buffer, raw.byteOffset + start * 4, layout.perNode);
    this.hits++;
    return columnFromNode(v, layout, values, q.level, q.member);
  }

  /** Whether the stored chunk of the run's last lead at the node is the version the copy was made from. */
  async #chunkCurrent(h: PointCopyHeader, q: CopyQuery): Promise<boolean> {
    const { group, v } = q;
    const member = Array.isArray(q.member) ? q.member[0] : q.member;
    const last = Math.max(0, h.layout.nLead - 1);
    const region = regionOf(group, v, { run: q.run, lead: last, level: q.level, member, lat: q.iy, lon: q.ix });
    const coords = v.array.chunksFor(region)[0];
    const version = h.versions[v.array.storageKey(coords)];
    return version !== undefined && version === (await v.array.chunkVersion(coords));
  }
}
