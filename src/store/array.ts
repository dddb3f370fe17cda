// One stored array opened through zarrita, read by regions of index space into physical values.
// Decoded chunks go through the shared ChunkCache (answered at once when the cache has them in
// hand); which chunks a region needs is computed from metadata alone, so callers can size a
// request before any chunk is read. Copying a chunk's part of a region is region.ts's, zarrita's
// view of the backend zarrita-store.ts's, and the errors a read ends in chunk-errors.ts's.
import * as zarr from "zarrita";
import { CorruptDataError, UnsupportedEncodingError } from "../errors.ts";
import { fitsNow, pace, TURN_BYTES } from "../loop-turns.ts";
import { nativeAddon } from "../native.ts";
import { type Soon, then } from "../soon.ts";
import type { Backend } from "./backend.ts";
import { cfDecoding, type Decoding } from "./cf.ts";
import type { ChunkCache } from "./chunk-cache.ts";
import { checkChunk, located, wrap } from "./chunk-errors.ts";
import { storageKeyOf } from "./chunk-key.ts";
import { CodecInputError } from "./codecs/bound.ts";
import { type DirectDecoder, directDecoder } from "./codecs/direct.ts";
import { giveBytes, takeBytes } from "./scan-buffers.ts";
import { NOT_YET } from "./stamp-memo.ts";
// Native decoders (Blosc, Zstandard, gzip, zlib) bounded by the chunk shape, registered with zarrita.
import "./codecs/register.ts";
import type { NodeMeta } from "./metadata.ts";
import {
  type Chunk,
  checkPlacement,
  chunkPieces,
  copyRegion,
  type OutValues,
  type Placement,
  type Range,
  runsOf,
  strides,
} from "./region.ts";
import { TYPED_ARRAYS } from "./typed-values.ts";
import { metaDocuments, shardIndexAtStart, zarritaStore } from "./zarrita-store.ts";

interface ChunkKeys {
  storage: string;
  prefix: string;
  version: string | undefined;
  cache: string;
}

const KEY_MEMO_MAX = 4096;
/** Chunks one readStoredInto reads and decodes at once (twice libuv's default pool of four). */
const READS_IN_FLIGHT = 8;
/**
 * Most chunks a readStoredSplit reads at once (all of its chunks' stored bytes are held together,
 * so that every chunk's first part is decoded before any second part); more go readStoredInto's way.
 */
export const SPLIT_CHUNKS_MAX = 2 * READS_IN_FLIGHT;

/** Decoded chunks from this size (512 KiB) up have a small part's Blosc blocks read alone (#blocksFrom). */
const BLOCK_READS_MIN = 512 * 1024;

/** The items [lo, hi) of a chunk a rising runs geometry (decodeRuns') reads. */
function runsSpan(geom: Float64Array): [number, number] {
  const k = geom[3];
  const lo = geom[0];
  let hi = lo + geom[2];
  for (let d = 0; d < k; d++) if (geom[4 + d] > 1) hi += (geom[4 + d] - 1) * geom[4 + k + d];
  return [lo, hi];
}

/** A read in two parts along one dimension: see StoredArray.readStoredSplit. */
export interface StoredSplit {
  /** How many leading indices of the region along the dimension have all their values in place. */
  head: Promise<number>;
  /** Every value in place. */
  done: Promise<void>;
}

/**
 * Whether reads larger than the chunk cache decode only the part of each chunk they need (#partFrom)
 * rather than whole chunks outside the cache; off only to measure the difference (benches, tests).
 */
let partialReads = true;
/** Whether those reads fetch only the Blosc blocks they decode (#blocksFrom); off only to measure. */
let blockReads = true;
export function partialDecodes(on: boolean, blocks = on): void {
  partialReads = on;
  blockReads = blocks;
}

export class StoredArray {
  readonly meta: NodeMeta;
  readonly shape: number[];
  readonly chunks: number[];
  readonly dtype: string;
  /** How stored values become physical ones (cf.ts); `problem` set when gridcast cannot decode them. */
  readonly packing: Decoding;
  readonly #backend: Backend;
  readonly #cache: ChunkCache<Chunk & { byteLength: number }>;
  /** Revision of the group metadata this array was opened from (part of every cache key). */
  readonly revision: string;
  /** Stored object (chunk or shard) holding the chunk at some coordinates. */
  readonly storageKey: (coords: number[]) => string;
  #opened: Promise<zarr.Array<zarr.DataType, zarr.Readable>> | undefined;
  #direct: DirectDecoder | undefined | null = null;
  readonly #keys = new Map<number, ChunkKeys>();

  constructor(meta: NodeMeta, backend: Backend, cache: ChunkCache<Chunk & { byteLength: number }>, revision = "") {
    if (!meta.array) throw new Error(`not an array: ${meta.path}`);
    this.revision = revision;
    this.storageKey = storageKeyOf(meta);
    this.meta = meta;
    this.shape = meta.array.shape;
    this.chunks = meta.array.chunks;
    this.dtype = meta.array.dtype;
    this.#backend = backend;
    this.#cache = cache;
    this.packing = cfDecoding(meta.attrs, meta.array.dtype, meta.array.fill_value, meta.format);
  }

  get path(): string {
    return this.meta.path;
  }

  get dims(): string[] {
    return this.meta.array?.dimension_names ?? this.shape.map((_, i) => `dim_${i}`);
  }

  #open(): Promise<zarr.Array<zarr.DataType, zarr.Readable>> {
    this.#opened ??= (async () => {
      const store = zarritaStore(this.#backend, metaDocuments(this.meta), shardIndexAtStart(this.meta));
      const loc = zarr.root(store).resolve(this.meta.path);
      try {
        return this.meta.format === 3
          ? await zarr.open.v3(loc, { kind: "array" })
          : await zarr.open.v2(loc, { kind: "array", attrs: false });
      } catch (cause) {
        this.#opened = undefined;
        throw wrap(cause, this.meta.path);
      }
    })();
    return this.#opened;
  }

  /** Chunk coordinates a region touches, computed from metadata only. */
  chunksFor(region: Range[]): number[][] {
    const perDim = region.map(([start, stop], d) => {
      const c = this.chunks[d];
      const out: number[] = [];
      for (let i = Math.floor(start / c); i <= Math.floor((stop - 1) / c); i++) out.push(i);
      return out;
    });
    return cartesian(perDim);
  }

  /**
   * Version of the stored object behind a chunk (a stat on disk; validators over HTTP, asked at most
   * every couple of seconds). A chunk rewritten in place gets a new version, so cached decodes of
   * the old bytes are not used again.
   */
  async chunkVersion(coords: number[]): Promise<string> {
    const key = this.storageKey(coords);
    try {
      const b = this.#backend;
      return (await (b.stamp ? b.stamp(key) : b.remoteStamp?.(key))) ?? "";
    } catch (cause) {
      throw located(wrap(cause, this.meta.path), this.#backend, key, coords);
    }
  }

  /**
   * The decoded chunk when the cache has it in hand: its version known without waiting and its
   * decode cached under that version (a warm read). Undefined otherwise: then #chunk() reads. The
   * same key, version and hit counting as #chunk(); nothing is read or decoded here.
   */
  #cached(coords: number[], touch = true): Chunk | undefined {
    if (this.meta.array?.problem) return undefined;
    const key = this.#keyNow(coords);
    return key === undefined ? undefined : this.#cache.peek(key, touch);
  }

  /**
   * The cache key of the one chunk holding a region (array path, revision, chunk, the stored
   * object's version) when that version is known at once; undefined otherwise. The key a warm
   * read of the region used: two equal keys name the same stored bytes, so a caller that kept
   * something computed from a read can tell whether the store still holds what it read.
   */
  chunkKeyNow(region: Range[]): string | undefined {
    if (region.some(([a, b]) => b <= a)) return undefined;
    const one = this.#soleChunk(region);
    return one && this.#keyNow(one);
  }

  /** The chunk's cache key with its version, when the version is known without waiting. */
  #keyNow(coords: number[]): string | undefined {
    const keys = this.#keysOf(coords);
    if (!keys) return undefined;
    const b = this.#backend;
    let version: string | undefined | typeof NOT_YET = "";
    if (b.stamp || b.remoteStamp) {
      if (!b.stampNow) return undefined;
      try {
        version = b.stampNow(keys.storage);
      } catch {
        return undefined; // #chunk() reports it, with the chunk located
      }
      if (version === NOT_YET) return undefined;
    }
    version ??= "";
    // The same strings as long as the version holds: Map lookups with them reuse their hashes.
    if (version !== keys.version) {
      keys.version = version;
      keys.cache = `${keys.prefix}${version}`;
    }
    return keys.cache;
  }

  /**
   * The key strings of a chunk (stored object, cache key up to the version), kept per chunk for
   * the warm path; undefined for coordinates outside the chunk grid. Bounded: starts over past
   * KEY_MEMO_MAX chunks.
   */
  #keysOf(coords: number[]): ChunkKeys | undefined {
    let index = 0;
    for (let d = 0; d < coords.length; d++) {
      const n = Math.ceil(this.shape[d] / this.chunks[d]);
      const c = coords[d];
      if (!(Number.isInteger(c) && c >= 0 && c < n)) return undefined;
      index = index * n + c;
    }
    let keys = this.#keys.get(index);
    if (!keys) {
      if (this.#keys.size >= KEY_MEMO_MAX) this.#keys.clear();
      keys = {
        storage: this.storageKey(coords),
        prefix: this.#cacheKey(coords, ""),
        version: undefined,
        cache: "",
      };
      this.#keys.set(index, keys);
    }
    return keys;
  }

  #cacheKey(coords: number[], version: string): string {
    return `${this.meta.path}|${this.revision}|${coords.join(",")}|${version}`;
  }

  /**
   * A decoded chunk, for use at once: read it before the next `await` (its memory may be reused
   * for another chunk after that; see chunk-cache.ts). To hold it longer, leaseChunk(). Answered
   * at once when the cache has it in hand, else read and decoded.
   */
  chunk(coords: number[]): Soon<Chunk> {
    return this.#cached(coords) ?? this.#chunk(coords, false);
  }

  /** A decoded chunk held until releaseChunk(it), across any number of awaits. */
  leaseChunk(coords: number[]): Promise<Chunk> {
    return this.#chunk(coords, true);
  }

  releaseChunk(ch: Chunk): void {
    this.#cache.release(ch as Chunk & { byteLength: number });
  }

  async #chunk(coords: number[], lease: boolean, admit = true): Promise<Chunk> {
    // Degenerate metadata (a 0 in the chunk shape, absurd sizes) is refused before any decode.
    const problem = this.meta.array?.problem;
    if (problem) throw new CorruptDataError(`array metadata cannot be used: ${problem}`);
    const version = await this.chunkVersion(coords);
    const cacheKey = this.#cacheKey(coords, version);
    const load = async () => {
      // The chains scans decode directly load the same way here (the stored bytes in a reused
      // buffer, read in one job), into a pooled buffer the cache hands back when it drops the
      // chunk; the rest through zarrita.
      const direct = await this.decodeDirect(coords, takeBytes, giveBytes);
      if (direct) return Object.assign(direct.chunk, { byteLength: direct.buffer.byteLength });
      const key = this.storageKey(coords);
      try {
        const arr = await this.#open();
        const c = (await arr.getChunk(coords)) as unknown as Chunk;
        checkChunk(c, this.chunks);
        return Object.assign(c, { byteLength: c.data.byteLength });
      } catch (cause) {
        throw located(wrap(cause, this.meta.path), this.#backend, key, coords);
      }
    };
    return lease ? this.#cache.lease(cacheKey, load, admit) : this.#cache.get(cacheKey, load, admit);
  }

  /** How this array's chunks decode into a caller's buffer, if its codec chain allows (direct.ts). */
  get direct(): DirectDecoder | undefined {
    if (this.#direct === null) this.#direct = directDecoder(this.meta);
    return this.#direct;
  }

  /**
   * One chunk read and decoded outside the chunk cache, into buffers from `take` (handed back with
   * `give` as soon as they are done with: the stored bytes here, the decoded ones by the caller).
   * Undefined when the chunk is not stored (its fill value is the cached path's to give) or the
   * array has no direct decoder.
   */
  async decodeDirect(
    coords: number[],
    take: (n: number) => Uint8Array,
    give: (b: Uint8Array) => void,
    takeDecoded: (n: number) => Uint8Array = take,
  ): Promise<{ chunk: Chunk; buffer: Uint8Array } | undefined> {
    const dec = this.direct;
    if (!dec) return undefined;
    const key = this.storageKey(coords);
    const b = this.#backend;
    let stored: Uint8Array | undefined;
    try {
      // Stored chunks are at most a little larger than decoded ones (Blosc's and Zstandard's
      // overhead on incompressible data); a larger one is read at its own size and refused below.
      stored = b.getInto ? await b.getInto(key, take, dec.bytes + (dec.bytes >> 6) + 4096) : await b.get(key);
      if (stored === undefined) return undefined;
      const decoded = await dec.decode(stored, () => takeDecoded(dec.bytes));
      if (decoded !== stored) give(stored);
      if (decoded.length !== dec.bytes) {
        if (decoded !== stored) give(decoded);
        throw new CodecInputError(`decoded ${decoded.length} bytes, ${dec.bytes} expected`);
      }
      return {
        chunk: { data: dec.values(decoded), shape: this.chunks, stride: strides(this.chunks) },
        buffer: decoded,
      };
    } catch (cause) {
      throw located(wrap(cause, this.meta.path), b, key, coords);
    }
  }

  /**
   * Physical values are never made from an array whose encoding gridcast does not understand: the
   * read is refused, naming the array and the reason.
   */
  #decodable(): void {
    const problem = this.packing.problem;
    if (problem) {
      const err = new UnsupportedEncodingError(`${this.meta.path} cannot be decoded: ${problem}`);
      err.logFields = { array: this.meta.path };
      throw err;
    }
  }

  /**
   * Copy what one decoded chunk holds of a region into its place in a caller's buffer: physical
   * values under the array's own CF decoding, or under `packing` when given (null: stored values,
   * unchanged, for a caller that decodes them itself).
   */
  copyChunk(
    ch: Chunk,
    coords: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null = this.packing,
  ): void {
    if (packing === this.packing) this.#decodable();
    copyRegion(ch, coords, this.chunks, region, place, out, packing);
  }

  /**
   * copyChunk for a bulk read (an export's slab): the copy cut into pieces of at most a turn's
   * bytes, each paced (loop-turns.ts), so a large chunk, or many exports copying at once, never
   * hold the event loop for longer than a turn.
   */
  async copyChunkPaced(
    ch: Chunk,
    coords: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null = this.packing,
  ): Promise<void> {
    if (packing === this.packing) this.#decodable();
    const size = out.BYTES_PER_ELEMENT;
    for (const piece of chunkPieces(coords, this.chunks, region, place, Math.floor(TURN_BYTES / size))) {
      const wait = pace(piece.values * size);
      if (wait) await wait;
      copyRegion(ch, coords, this.chunks, piece.region, piece.place, out, packing);
    }
  }

  /**
   * Whether readStoredInto decodes this array's chunks straight into an output of type `Out` on
   * libuv's pool (the addon's decodeRuns): its chunks have a direct decoder and the output holds
   * their stored type.
   */
  decodesInto(Out: unknown): boolean {
    return this.direct !== undefined && nativeAddon()?.decodeRuns !== undefined && TYPED_ARRAYS[this.dtype] === Out;
  }

  /**
   * Whether this array's stored values are its physical ones as float32 and the addon decodes its
   * chunks into place: no scale, offset, _Unsigned or missing marker (a float's NaN fill needs
   * none), so readStoredInto into a Float32Array gives what read gives.
   */
  readsPhysicalInPlace(): boolean {
    const p = this.packing;
    return (
      !p.problem &&
      p.scale === 1 &&
      p.offset === 0 &&
      p.missing.length === 0 &&
      p.unsigned === 0 &&
      this.decodesInto(Float32Array)
    );
  }

  /**
   * Stored values (nothing unpacked) of a region written into their place, as readInto(…, null),
   * outside the chunk cache: when decodesInto(out) holds, each chunk is read, decoded and copied
   * into `out` by one job on libuv's pool, so the main thread neither makes a decoded chunk nor
   * copies one; of a Blosc chunk only the blocks holding the region are decoded, and of an
   * uncompressed one only the bytes the region spans are read when that is under half of it
   * (#rangeFrom). A stored chunk the addon declines (a layout it does not take) or cannot decode is
   * read again and decoded outside the cache (decodeDirect: damage is named, never answered from
   * an earlier decode); a chunk that is not stored, and every chunk of an array without a direct
   * decoder, go the cached way, which gives the fill value or names what is wrong as readInto does.
   */
  async readStoredInto(region: Range[], out: OutValues, place: Placement): Promise<void> {
    checkPlacement(region, out.length, place);
    if (region.some(([a, b]) => b <= a)) return;
    const fast = this.decodesInto(out.constructor);
    const list = this.chunksFor(region);
    // A bounded number of chunks in flight: enough to keep libuv's pool busy, few enough that the
    // stored-bytes buffers of the first ones are back in scan-buffers' free list for the later
    // ones. With every chunk of a whole field at once (128 for a 0.25° lead), each took a fresh
    // zero-filled buffer, and the page faults and memset were a tenth of a build's CPU.
    let next = 0;
    const lane = async () => {
      while (next < list.length) {
        const cc = list[next++];
        const runs = fast
          ? ((await this.#rangeFrom(cc, region, out, place)) ?? (await this.#decodeRuns(cc, region, out, place)))
          : "declined";
        if (runs !== "done") await this.#placeOtherwise(cc, region, out, place, runs);
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, list.length) }, lane));
  }

  /**
   * A chunk decodeRuns did not place ("absent": not stored; "declined"), placed another way: read
   * again and decoded outside the cache, so a chunk damaged since the cache decoded it is reported,
   * never answered from the earlier decode; only a chunk that is not stored (its fill value, looked
   * up once more only there) or one without a direct decoder goes the cached way.
   */
  async #placeOtherwise(
    cc: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
    runs: "absent" | "declined",
  ): Promise<void> {
    const got = runs === "absent" ? undefined : await this.decodeDirect(cc, takeBytes, giveBytes);
    if (got) {
      try {
        copyRegion(got.chunk, cc, this.chunks, region, place, out, null);
      } finally {
        giveBytes(got.buffer);
      }
      return;
    }
    copyRegion(await this.chunk(cc), cc, this.chunks, region, place, out, null);
  }

  /**
   * readStoredInto for a caller that sends what is ready first (a box export, whose one slab needs
   * every chunk before its first lead is complete): each Blosc chunk's stored bytes are read once
   * and decoded by two jobs, the blocks before the block boundary nearest the chunk's middle and
   * those after it (native decodeRuns' window), every chunk's first job done before any second
   * one is queued. `head` then tells how many leading indices along `dim` (whose earlier dimensions the
   * region holds at one index) have all their values in place, while the rest decode. Each block
   * is decoded once. Any other read (more chunks than SPLIT_CHUNKS_MAX, more than one chunk step
   * along `dim`, chunks the addon does not unshuffle into runs) is readStoredInto's, its head the
   * whole region once done.
   */
  readStoredSplit(region: Range[], out: OutValues, place: Placement, dim: number): StoredSplit {
    const all = region[dim][1] - region[dim][0];
    const list = region.some(([a, b]) => b <= a) ? [] : this.chunksFor(region);
    const splits =
      list.length > 0 &&
      list.length <= SPLIT_CHUNKS_MAX &&
      this.direct?.runs === 0 &&
      this.decodesInto(out.constructor) &&
      region.every(([a, b], d) => d >= dim || b - a === 1) &&
      list.every((cc) => cc[dim] === list[0][dim]);
    if (!splits) {
      const done = this.readStoredInto(region, out, place);
      const head = done.then(() => all);
      head.catch(() => {});
      return { head, done };
    }
    checkPlacement(region, out.length, place);
    const item = out.BYTES_PER_ELEMENT;
    const dec = this.direct!;
    const decodeRuns = nativeAddon()!.decodeRuns!;
    const cs = strides(this.chunks);
    let ready = all;
    let headsLeft = list.length;
    let firstsLeft = list.length;
    let headDone!: (n: number) => void;
    let headFailed!: (e: unknown) => void;
    const head = new Promise<number>((ok, fail) => {
      headDone = ok;
      headFailed = fail;
    });
    // Second jobs wait until every first one is done, so that on a busy pool the first parts are
    // not slowed by second ones running beside them: the head is sent while the seconds decode.
    let firstsDone!: () => void;
    const allFirstsDone = new Promise<void>((ok) => {
      firstsDone = ok;
    });
    const firstDone = () => {
      if (--firstsLeft === 0) firstsDone();
    };
    const headIn = (n: number) => {
      ready = Math.min(ready, n);
      if (--headsLeft === 0) headDone(ready);
    };
    const one = async (cc: number[]) => {
      let counted = false;
      const count = () => {
        if (!counted) firstDone();
        counted = true;
      };
      let stored: Uint8Array | undefined;
      try {
        const geom = this.#runsGeometry(cc, region, place);
        stored = geom === "declined" || geom === "none" ? undefined : await this.#storedBytes(cc);
        if (!stored || geom === "declined" || geom === "none") {
          count();
          if (geom !== "none") await this.#placeOtherwise(cc, region, out, place, stored ? "declined" : "absent");
          headIn(all);
          return;
        }
        // The chunk's items of the region's earlier dimensions (one index each) and along `dim`.
        let pre = 0;
        for (let d = 0; d < dim; d++) pre += (region[d][0] - cc[d] * this.chunks[d]) * cs[d];
        const skip = region[dim][0] - cc[dim] * this.chunks[dim];
        const items = dec.bytes / item;
        const at = splitItem(stored, item, items);
        const firstOk = (await decodeRuns(dec.runs, stored, dec.bytes, out, geom, 0, at)) === dec.bytes;
        count();
        // Placed whole another way (the same values, or an error naming the chunk).
        if (!firstOk) await this.#placeOtherwise(cc, region, out, place, "declined");
        if (!firstOk || at >= items) {
          headIn(all);
          return;
        }
        // The leading indices are in place while the second part decodes.
        headIn(Math.max(0, Math.min(all, Math.floor((at - pre) / cs[dim]) - skip)));
        await allFirstsDone;
        if ((await decodeRuns(dec.runs, stored, dec.bytes, out, geom, at)) !== dec.bytes) {
          await this.#placeOtherwise(cc, region, out, place, "declined");
        }
      } finally {
        count();
        if (stored) giveBytes(stored);
      }
    };
    const done = Promise.all(list.map(one)).then(() => {});
    done.catch(headFailed);
    head.catch(() => {});
    return { head, done };
  }

  /**
   * A large Blosc chunk's small part of a region, from a remote store, with only the stored bytes
   * its blocks need read: the header, the block table, then the span of the blocks holding the part
   * (three ranged reads), into a buffer laid out as the stored chunk whose other blocks are never looked at,
   * decoded by decodeRuns (which decodes only the blocks the runs read). Only for chunks decodeRuns
   * places block by block (no delta filter, not both shuffles, Blosc's type size the items', whole
   * elements a block), so no block outside the part is ever decoded from bytes not read. "done";
   * "declined" when it did not decode (the whole chunk is then read and decoded, which names what
   * is wrong); undefined when this does not apply (small chunks, large parts, layouts it does not
   * take), and the whole stored chunk is read instead.
   */
  async #blocksFrom(
    cc: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
  ): Promise<"done" | "declined" | undefined> {
    const dec = this.direct;
    const b = this.#backend;
    const decodeRuns = nativeAddon()?.decodeRuns;
    // A store read whole in one job (getInto: local files) reads a stored chunk faster than three
    // ranged reads (bench/chunk-cache-scan.ts); remote stores save the bytes and the transfer.
    if (!blockReads || b.getInto || dec?.runs !== 0 || !b.getRange || !decodeRuns || dec.bytes < BLOCK_READS_MIN) {
      return undefined;
    }
    const geom = this.#runsGeometry(cc, region, place);
    if (geom === "none") return "done";
    if (geom === "declined") return undefined;
    const item = out.BYTES_PER_ELEMENT;
    const [lo, hi] = runsSpan(geom);
    if ((hi - lo) * item > dec.bytes / 4) return undefined;
    const key = this.storageKey(cc);
    let stored: Uint8Array | undefined;
    try {
      // The header first: a stored object shorter than one (damaged) goes the whole way, which names it.
      const head = await b.getRange(key, { offset: 0, length: 16 }).catch(() => undefined);
      if (!head || head.length < 16) return undefined;
      const v = new DataView(head.buffer, head.byteOffset, head.byteLength);
      const [flags, ts] = [head[2], head[3]];
      const [nbytes, blocksize, cbytes] = [v.getUint32(4, true), v.getUint32(8, true), v.getUint32(12, true)];
      const takes =
        (head[0] === 1 || head[0] === 2) &&
        (flags & 0x8) === 0 &&
        (flags & 0x5) !== 0x5 &&
        (flags & 0x2) === 0 &&
        ts === item &&
        blocksize > 0 &&
        blocksize % ts === 0 &&
        nbytes === dec.bytes;
      if (!takes) return undefined;
      const nblocks = Math.ceil(nbytes / blocksize);
      const tableEnd = 16 + 4 * nblocks;
      if (tableEnd > cbytes) return undefined;
      const table = await b.getRange(key, { offset: 16, length: tableEnd - 16 });
      if (!table || table.length !== tableEnd - 16) return undefined;
      const t = new DataView(table.buffer, table.byteOffset, table.byteLength);
      const starts = Array.from({ length: nblocks }, (_, i) => t.getUint32(4 * i, true));
      // The stored span of the blocks holding items [lo, hi): blocks need not be stored in order
      // (threaded writers append them as they finish), so each ends where the next stored one starts.
      const sorted = [...starts].sort((x, y) => x - y);
      const endOf = (at: number) => sorted.find((x) => x > at) ?? cbytes;
      let from = cbytes;
      let to = tableEnd;
      for (let k = Math.floor((lo * item) / blocksize); k <= Math.floor((hi * item - 1) / blocksize); k++) {
        const at = starts[k];
        if (at < tableEnd || at >= cbytes) return undefined;
        from = Math.min(from, at);
        to = Math.max(to, endOf(at));
      }
      const span = await b.getRange(key, { offset: from, length: to - from });
      if (!span || span.length !== to - from) return undefined;
      // Zeros where nothing was read: a block decoded from there (an addon built before it placed
      // every layout block by block would decode the chunk whole) has streams of length 0, which
      // never decode, so the chunk is declined and read whole, never answered from stale bytes.
      stored = takeBytes(cbytes).fill(0);
      stored.set(head);
      stored.set(table, 16);
      stored.set(span, from);
    } catch (cause) {
      if (stored) giveBytes(stored);
      throw located(wrap(cause, this.meta.path), b, key, cc);
    }
    try {
      return (await decodeRuns(0, stored, dec.bytes, out, geom)) === dec.bytes ? "done" : "declined";
    } finally {
      giveBytes(stored);
    }
  }

  /**
   * An uncompressed chunk's part of a region with only its bytes read (the span from its first item
   * to its last, one ranged read) and copied into place: "done"; undefined for any other chunk, a
   * part spanning more than half the chunk, a chunk not stored, or one stored at a size other than
   * its shape's (the whole read reports that).
   */
  async #rangeFrom(cc: number[], region: Range[], out: OutValues, place: Placement): Promise<"done" | undefined> {
    const dec = this.direct;
    const b = this.#backend;
    const copyRuns = nativeAddon()?.copyRuns;
    if (dec?.runs !== 2 || !b.getRange || !b.size || !copyRuns) return undefined;
    const geom = this.#runsGeometry(cc, region, place);
    if (geom === "none") return "done";
    if (geom === "declined") return undefined;
    const item = out.BYTES_PER_ELEMENT;
    const [lo, hi] = runsSpan(geom);
    // Most of the chunk wanted (a whole-field read): one whole read costs less than a stat and a range.
    if ((hi - lo) * item > dec.bytes / 2) return undefined;
    const key = this.storageKey(cc);
    let bytes: Uint8Array | undefined;
    try {
      if ((await b.size(key)) !== dec.bytes) return undefined;
      bytes = await b.getRange(key, { offset: lo * item, length: (hi - lo) * item });
    } catch (cause) {
      throw located(wrap(cause, this.meta.path), b, key, cc);
    }
    if (!bytes) return undefined;
    const aligned = bytes.byteOffset % item === 0 ? bytes : bytes.slice();
    const View = out.constructor as new (b: ArrayBufferLike, at: number, n: number) => OutValues;
    geom[0] = 0;
    copyRuns(new View(aligned.buffer, aligned.byteOffset, hi - lo), out, geom);
    return "done";
  }

  /**
   * One chunk's part of a region into `out` by decodeRuns: "done", "absent" when the chunk is not
   * stored, "declined" when the addon does not take the layout or cannot decode the chunk.
   */
  async #decodeRuns(
    cc: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
  ): Promise<"done" | "absent" | "declined"> {
    const dec = this.direct!;
    const decodeRuns = nativeAddon()!.decodeRuns!;
    const geom = this.#runsGeometry(cc, region, place);
    if (geom === "none") return "done";
    if (geom === "declined") return "declined";
    const stored = await this.#storedBytes(cc);
    if (stored === undefined) return "absent";
    try {
      return (await decodeRuns(dec.runs, stored, dec.bytes, out, geom)) === dec.bytes ? "done" : "declined";
    } finally {
      giveBytes(stored);
    }
  }

  /**
   * decodeRuns' geometry of one chunk's part of a region: "none" when the chunk holds none of it,
   * "declined" when the runs are not a layout the addon takes (more outer dimensions than it holds,
   * runs not contiguous on both sides).
   */
  #runsGeometry(cc: number[], region: Range[], place: Placement): Float64Array | "none" | "declined" {
    const runs = runsOf(cc, this.chunks, strides(this.chunks), region, place);
    if (!runs) return "none";
    const { lo, hi, cStride, oStride } = runs;
    const k = lo.length - 1;
    if (k > 16 || cStride[k] !== 1 || oStride[k] !== 1) return "declined";
    const geom = new Float64Array(4 + 3 * k);
    geom[0] = runs.src;
    geom[1] = runs.dst;
    geom[2] = hi[k] - lo[k];
    geom[3] = k;
    for (let d = 0; d < k; d++) {
      geom[4 + d] = hi[d] - lo[d];
      geom[4 + k + d] = cStride[d];
      geom[4 + 2 * k + d] = oStride[d];
    }
    return geom;
  }

  /** One chunk's stored bytes in a buffer from scan-buffers (give it back), or undefined when not stored. */
  async #storedBytes(cc: number[]): Promise<Uint8Array | undefined> {
    const dec = this.direct!;
    const key = this.storageKey(cc);
    const b = this.#backend;
    try {
      // As decodeDirect: a stored chunk is at most a little larger than a decoded one.
      return b.getInto ? await b.getInto(key, takeBytes, dec.bytes + (dec.bytes >> 6) + 4096) : await b.get(key);
    } catch (cause) {
      throw located(wrap(cause, this.meta.path), b, key, cc);
    }
  }

  /**
   * Physical values (unpacked, missing → NaN) of a region, C order, as float32 or float64. A region
   * inside one chunk the cache has in hand (a warm point column) is answered at once.
   */
  read(region: Range[], out?: Float32Array | Float64Array): Soon<Float32Array | Float64Array> {
    this.#decodable();
    const rshape = region.map(([a, b]) => b - a);
    const size = rshape.reduce((a, b) => a * b, 1);
    const result = out ?? (this.dtype === "float64" ? new Float64Array(size) : new Float32Array(size));
    const place = { offset: 0, strides: strides(rshape) };
    const one = region.some(([a, b]) => b <= a) ? undefined : this.#soleChunk(region);
    if (!one) return this.readInto(region, result, place).then(() => result);
    checkPlacement(region, result.length, place);
    return then(this.chunk(one), (ch) => {
      copyRegion(ch, one, this.chunks, region, place, result, this.packing);
      return result;
    });
  }

  /**
   * Physical values of a region written straight into a caller's buffer at a placement: one
   * output stride per dimension (negative to reverse an axis, 0 for a dimension of length 1), so
   * a caller assembling a larger array (a box across the antimeridian, rows flipped to run south
   * to north, a slab of several leads) needs no intermediate copy. Every chunk the region touches
   * is read and copied in parallel.
   */
  async readInto(
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null = this.packing,
  ): Promise<void> {
    if (packing === this.packing) this.#decodable();
    checkPlacement(region, out.length, place);
    if (region.some(([a, b]) => b <= a)) return;
    // A region inside one chunk (a point series): no chunk list to build, nothing to gather.
    const one = this.#soleChunk(region);
    if (one) {
      await this.#copyOut(await this.chunk(one), one, region, out, place, packing);
      return;
    }
    const list = this.chunksFor(region);
    if (this.#overflows(list.length)) {
      await this.#readPassing(list, region, out, place, packing);
      return;
    }
    await Promise.all(list.map(async (cc) => this.#copyOut(await this.chunk(cc), cc, region, out, place, packing)));
  }

  /**
   * A chunk's part of a region copied from a chunk answered for use at once: at once when it fits
   * in this turn of the event loop (a point's few values); a larger one, or one that must wait for
   * a later turn, holds the chunk leased across its waits and copies in paced pieces (loop-turns.ts).
   */
  async #copyOut(
    ch: Chunk,
    cc: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null,
  ): Promise<void> {
    const size = out.BYTES_PER_ELEMENT;
    // A few values (a point's series) are copied at once, never queued behind bulk work.
    let values = size;
    for (const [a, b] of region) values *= b - a;
    if (values <= SMALL_COPY_BYTES) {
      copyRegion(ch, cc, this.chunks, region, place, out, packing);
      return;
    }
    const pieces = chunkPieces(cc, this.chunks, region, place, Math.floor(TURN_BYTES / size));
    if (pieces.length <= 1 && fitsNow((pieces[0]?.values ?? 0) * size)) {
      copyRegion(ch, cc, this.chunks, region, place, out, packing);
      return;
    }
    const held = await this.leaseChunk(cc);
    try {
      await this.copyChunkPaced(held, cc, region, out, place, packing);
    } finally {
      this.releaseChunk(held);
    }
  }

  /**
   * Whether a read of `chunks` whole decoded chunks would not fit in the chunk cache: under the
   * cache's segmented policy such a read is not admitted (chunk-cache.ts), since keeping its chunks
   * would only evict its own first ones, and everyone else's, before anything came back to them.
   */
  #overflows(chunks: number): boolean {
    const Typed = TYPED_ARRAYS[this.dtype];
    // A cache of size 0 keeps nothing anyway: its reads go the cached way, sharing concurrent loads.
    if (this.#cache.policy !== "slru" || !Typed || this.#cache.budget === 0) return false;
    let bytes = chunks * Typed.BYTES_PER_ELEMENT;
    for (const c of this.chunks) bytes *= c;
    return bytes > this.#cache.budget;
  }

  /**
   * readInto for a read larger than the chunk cache (a point series down 120 whole-field leads):
   * chunks the cache has in hand are copied from it; each other one is read for this request alone
   * and not kept. Where the codec allows, only what the region needs of it is decoded (partFrom);
   * otherwise it is decoded whole outside the cache. A bounded number of chunks in flight, as
   * readStoredInto, so the stored and decoded bytes held at once do not grow with the read.
   */
  async #readPassing(
    list: number[][],
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null,
  ): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < list.length) {
        const cc = list[next++];
        // Used where it lies: a sweep through more chunks than the cache holds is no second use.
        const hit = this.#cached(cc, false);
        if (hit) copyRegion(hit, cc, this.chunks, region, place, out, packing);
        else if (partialReads && this.decodesInto(TYPED_ARRAYS[this.dtype])) {
          await this.#partFrom(cc, region, out, place, packing);
        } else {
          const ch = await this.#chunk(cc, false, false);
          copyRegion(ch, cc, this.chunks, region, place, out, packing);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, list.length) }, lane));
  }

  /**
   * One chunk's part of a region read from the store and decoded for this read alone, outside the
   * cache: by decodeRuns, which decodes only the Blosc blocks holding the part (native/jobs.h),
   * into `out` when it takes the stored values as they are, else into a buffer of the part's size
   * that is then unpacked into place. An uncompressed chunk has only the bytes of the part read
   * (#rangeFrom). A chunk damaged in a block the part needs fails as a whole decode does, naming the
   * store and key (#placeOtherwise decodes it whole and reports what is wrong).
   */
  async #partFrom(
    cc: number[],
    region: Range[],
    out: OutValues,
    place: Placement,
    packing: Decoding | null,
  ): Promise<void> {
    const Typed = TYPED_ARRAYS[this.dtype] as new (n: number) => OutValues;
    const plain =
      packing === null ||
      (packing.scale === 1 && packing.offset === 0 && packing.missing.length === 0 && packing.unsigned === 0);
    let into = out;
    let at = place;
    let part = region;
    if (!(plain && out.constructor === Typed)) {
      // The part of the region in this chunk, its stored values laid out on their own.
      part = region.map(([a, b], d): Range => {
        const c = this.chunks[d];
        return [Math.max(a, cc[d] * c), Math.min(b, (cc[d] + 1) * c)];
      });
      const shape = part.map(([a, b]) => b - a);
      into = new Typed(shape.reduce((a, b) => a * b, 1));
      at = { offset: 0, strides: strides(shape) };
    }
    const runs =
      (await this.#rangeFrom(cc, part, into, at)) ??
      (await this.#blocksFrom(cc, part, into, at)) ??
      (await this.#decodeRuns(cc, part, into, at));
    if (runs !== "done") await this.#placeOtherwise(cc, part, into, at, runs);
    if (into === out) return;
    const shape = part.map(([a, b]) => b - a);
    let offset = place.offset;
    for (let d = 0; d < part.length; d++) offset += (part[d][0] - region[d][0]) * place.strides[d];
    const zero = shape.map(() => 0);
    const whole = shape.map((n): Range => [0, n]);
    const ch = { data: into, shape, stride: strides(shape) };
    copyRegion(ch, zero, shape, whole, { offset, strides: place.strides }, out, packing);
  }

  /** The coordinates of the one chunk holding a whole region, if one does. */
  #soleChunk(region: Range[]): number[] | undefined {
    const cc = new Array<number>(region.length);
    for (let d = 0; d < region.length; d++) {
      const c = this.chunks[d];
      const first = Math.floor(region[d][0] / c);
      if (Math.floor((region[d][1] - 1) / c) !== first) return undefined;
      cc[d] = first;
    }
    return cc;
  }

  /** Fetch and decode the chunks of a region into the chunk cache, copying nothing. */
  async warm(region: Range[]): Promise<void> {
    if (region.some(([a, b]) => b <= a)) return;
    await Promise.all(this.chunksFor(region).map((cc) => this.chunk(cc)));
  }

  /** Raw stored values of a small whole array (coordinates), without unpacking. */
  /**
   * Every stored value (no CF decoding) as float64, for a coordinate of millions of values (a cell
   * grid's centres): the chunks read one at a time, each leased while its values are copied in
   * pieces paced by the event loop's turns (loop-turns.ts), so reading it never holds the loop for
   * more than a turn's bytes; what it holds is the output and one chunk.
   */
  async readValues(): Promise<Float64Array> {
    const region: Range[] = this.shape.map((n) => [0, n]);
    const out = new Float64Array(this.shape.reduce((a, b) => a * b, 1));
    const place = { offset: 0, strides: strides(this.shape) };
    for (const cc of this.chunksFor(region)) {
      const ch = await this.leaseChunk(cc);
      try {
        await this.copyChunkPaced(ch, cc, region, out, place, null);
      } finally {
        this.releaseChunk(ch);
      }
    }
    return out;
  }

  async readRaw(): Promise<number[]> {
    const region: Range[] = this.shape.map((n) => [0, n]);
    const size = this.shape.reduce((a, b) => a * b, 1);
    const out = new Array<number>(size);
    const place = { offset: 0, strides: strides(this.shape) };
    for (const cc of this.chunksFor(region)) {
      const ch = await this.chunk(cc);
      copyRegion(ch, cc, this.chunks, region, place, out, null);
    }
    return out;
  }
}

/** Bytes a read copies out of a chunk at once, unpaced by the loop's turns: a point's series. */
const SMALL_COPY_BYTES = 16 * 1024;

function cartesian(lists: number[][]): number[][] {
  let acc: number[][] = [[]];
  for (const l of lists) acc = acc.flatMap((prefix) => l.map((v) => [...prefix, v]));
  return acc;
}

/**
 * Where readStoredSplit cuts a Blosc chunk: the block boundary nearest its middle (in items), from
 * the chunk's own header (bytes 4–11: decoded size, block size); all of its items when it has one
 * block, or a header that does not say (decodeRuns then judges the chunk itself).
 */
function splitItem(stored: Uint8Array, item: number, items: number): number {
  if (stored.length < 16) return items;
  const view = new DataView(stored.buffer, stored.byteOffset, 16);
  const nbytes = view.getUint32(4, true);
  const blocksize = view.getUint32(8, true);
  if (blocksize === 0 || blocksize % item !== 0 || nbytes !== items * item) return items;
  const blocks = Math.ceil(nbytes / blocksize);
  if (blocks < 2) return items;
  return Math.round(blocks / 2) * (blocksize / item);
}
