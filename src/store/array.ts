// One stored array opened through zarrita, read by regions of index space into physical values.
// Decoded chunks go through the shared ChunkCache; which chunks a region needs is computed from
// metadata alone, so callers can size a request before any chunk is read.
import * as zarr from "zarrita";
import { CorruptDataError, GridcastError, StoreUnavailableError } from "../errors.ts";
import type { Backend, RangeQuery } from "./backend.ts";
import { type Packing, packingFrom, unpack } from "./cf.ts";
import type { ChunkCache } from "./chunk-cache.ts";
import { storageKeyOf } from "./chunk-key.ts";
// Native decoders (Blosc, Zstandard, gzip, zlib) bounded by the chunk shape, registered with zarrita.
import "./codecs/register.ts";
import { sliceWhole } from "./http-backend.ts";
import type { NodeMeta } from "./metadata.ts";

export type Chunk = { data: ArrayLike<number | bigint> & { byteLength: number }; shape: number[]; stride: number[] };
export type Range = [start: number, stop: number];

const encoder = new TextEncoder();

/** zarrita's view of the backend: metadata documents we already hold are served from memory. */
export function zarritaStore(backend: Backend, known: Map<string, Uint8Array>) {
  const rel = (key: string) => (key.startsWith("/") ? key.slice(1) : key);
  const metaKeys = [...known.keys()];
  return {
    async get(key: string) {
      const k = rel(key);
      const hit = known.get(k);
      if (hit) return hit;
      const got = await backend.get(k);
      // A missing chunk normally means "all fill value". If the array's own metadata has gone too,
      // the group was removed or replaced underneath us: that is an outage, not a field of NaN.
      if (got === undefined && metaKeys.length > 0) {
        const still = await Promise.all(metaKeys.map((m) => backend.get(m)));
        if (still.every((b) => b === undefined)) {
          throw new StoreUnavailableError("the forecast data is not available right now");
        }
      }
      return got;
    },
    // Sharded arrays read each shard's index and inner chunks by byte range.
    async getRange(key: string, range: RangeQuery) {
      if (backend.getRange) return backend.getRange(rel(key), range);
      const all = await backend.get(rel(key));
      return all && sliceWhole(backend, rel(key), all, range);
    },
  };
}

export function metaDocuments(meta: NodeMeta): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [file, doc] of Object.entries(meta.raw)) {
    const key = meta.path === "" ? file : `${meta.path}/${file}`;
    out.set(key, encoder.encode(JSON.stringify(doc)));
  }
  return out;
}

export class StoredArray {
  readonly meta: NodeMeta;
  readonly shape: number[];
  readonly chunks: number[];
  readonly dtype: string;
  readonly packing: Packing;
  readonly #backend: Backend;
  readonly #cache: ChunkCache<Chunk & { byteLength: number }>;
  /** Revision of the group metadata this array was opened from (part of every cache key). */
  readonly revision: string;
  /** Stored object (chunk or shard) holding the chunk at some coordinates. */
  readonly storageKey: (coords: number[]) => string;
  #opened: Promise<zarr.Array<zarr.DataType, zarr.Readable>> | undefined;

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
    this.packing = packingFrom(meta.attrs, meta.array.fill_value, meta.format === 2);
  }

  get path(): string {
    return this.meta.path;
  }

  get dims(): string[] {
    return this.meta.array?.dimension_names ?? this.shape.map((_, i) => `dim_${i}`);
  }

  #open(): Promise<zarr.Array<zarr.DataType, zarr.Readable>> {
    this.#opened ??= (async () => {
      const store = zarritaStore(this.#backend, metaDocuments(this.meta));
      const loc = zarr.root(store).resolve(this.meta.path);
      try {
        return this.meta.format === 3
          ? await zarr.open.v3(loc, { kind: "array" })
          : await zarr.open.v2(loc, { kind: "array", attrs: false });
      } catch (cause) {
        this.#opened = undefined;
        throw wrap(cause);
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
      throw located(wrap(cause), this.#backend, key, coords);
    }
  }

  async chunk(coords: number[]): Promise<Chunk> {
    // Degenerate metadata (a 0 in the chunk shape, absurd sizes) is refused before any decode.
    const problem = this.meta.array?.problem;
    if (problem) throw new CorruptDataError(`array metadata cannot be used: ${problem}`);
    const version = await this.chunkVersion(coords);
    const cacheKey = `${this.meta.path}|${this.revision}|${coords.join(",")}|${version}`;
    return this.#cache.get(cacheKey, async () => {
      const key = this.storageKey(coords);
      try {
        const arr = await this.#open();
        const c = (await arr.getChunk(coords)) as unknown as Chunk;
        checkChunk(c, this.chunks);
        return Object.assign(c, { byteLength: c.data.byteLength });
      } catch (cause) {
        throw located(wrap(cause), this.#backend, key, coords);
      }
    });
  }

  /** Physical values (unpacked, missing → NaN) of a region, C order, as float32 or float64. */
  async read(region: Range[], out?: Float32Array | Float64Array): Promise<Float32Array | Float64Array> {
    const rshape = region.map(([a, b]) => b - a);
    const size = rshape.reduce((a, b) => a * b, 1);
    const result = out ?? (this.dtype === "float64" ? new Float64Array(size) : new Float32Array(size));
    if (size === 0) return result;
    const rstride = strides(rshape);
    const chunkList = this.chunksFor(region);
    await Promise.all(
      chunkList.map(async (cc) => {
        const ch = await this.chunk(cc);
        copyRegion(ch, cc, this.chunks, region, rstride, result, this.packing);
      }),
    );
    return result;
  }

  /** Raw stored values of a small whole array (coordinates), without unpacking. */
  async readRaw(): Promise<number[]> {
    const region: Range[] = this.shape.map((n) => [0, n]);
    const size = this.shape.reduce((a, b) => a * b, 1);
    const out = new Array<number>(size);
    const rstride = strides(this.shape);
    for (const cc of this.chunksFor(region)) {
      const ch = await this.chunk(cc);
      copyRegion(ch, cc, this.chunks, region, rstride, out, null);
    }
    return out;
  }
}

/** A decoded chunk must hold exactly one chunk of values: anything else is damaged data. */
function checkChunk(c: Chunk, chunkShape: number[]): void {
  const n = chunkShape.reduce((a, b) => a * b, 1);
  const shapeOk = c.shape.length === chunkShape.length && c.shape.every((v, i) => v === chunkShape[i]);
  if (!shapeOk || c.data.length !== n) {
    const err = new CorruptDataError("stored data could not be decoded");
    err.logFields = { detail: `decoded ${c.data.length} values of shape [${c.shape}], chunk shape [${chunkShape}]` };
    throw err;
  }
}

/** Name the store, stored key and chunk in the error's log line (never in the client's body). */
function located(err: Error, backend: Backend, key: string, coords: number[]): Error {
  if (err instanceof GridcastError) {
    err.logFields = { store: backend.description, key, chunk: coords.join(","), ...err.logFields };
  }
  return err;
}

function wrap(cause: unknown): Error {
  if (cause instanceof GridcastError) return cause;
  if (cause instanceof zarr.CodecPipelineError || cause instanceof zarr.InvalidMetadataError) {
    return new CorruptDataError("stored data could not be decoded", {}, { cause });
  }
  if (cause instanceof zarr.NotFoundError) return new StoreUnavailableError("array metadata is missing", {}, { cause });
  if (cause instanceof RangeError || cause instanceof TypeError) {
    return new CorruptDataError("stored data could not be decoded", {}, { cause });
  }
  return new StoreUnavailableError("the store cannot be read right now", {}, { cause });
}

export function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

function cartesian(lists: number[][]): number[][] {
  let acc: number[][] = [[]];
  for (const l of lists) acc = acc.flatMap((prefix) => l.map((v) => [...prefix, v]));
  return acc;
}

/** Copy the intersection of one decoded chunk with a region into the region's output buffer. */
function copyRegion(
  ch: Chunk,
  cc: number[],
  chunkShape: number[],
  region: Range[],
  rstride: number[],
  out: { [i: number]: number; length: number },
  packing: Packing | null,
): void {
  const nd = region.length;
  const lo = new Array<number>(nd);
  const hi = new Array<number>(nd);
  for (let d = 0; d < nd; d++) {
    const c0 = cc[d] * chunkShape[d];
    lo[d] = Math.max(region[d][0], c0);
    hi[d] = Math.min(region[d][1], c0 + chunkShape[d]);
    if (hi[d] <= lo[d]) return;
  }
  const data = ch.data;
  const isBig = typeof data[0] === "bigint";
  const idx = lo.slice();
  const last = nd - 1;
  const cStrideLast = ch.stride[last];
  const rStrideLast = rstride[last];
  const plainPacking = packing !== null && packing.missing.length === 0 && packing.scale === 1 && packing.offset === 0;
  const isFloatData = data instanceof Float32Array || data instanceof Float64Array;
  const bulk = plainPacking && isFloatData && ArrayBuffer.isView(out) && cStrideLast === 1 && rStrideLast === 1;
  for (;;) {
    let src = 0;
    let dst = 0;
    for (let d = 0; d < nd; d++) {
      src += (idx[d] - cc[d] * chunkShape[d]) * ch.stride[d];
      dst += (idx[d] - region[d][0]) * rstride[d];
    }
    const n = hi[last] - lo[last];
    if (bulk) {
      // Contiguous run of floats with nothing to unpack: one typed-array copy.
      (out as Float32Array).set((data as Float32Array).subarray(src, src + n), dst);
    } else if (packing && !isBig) {
      const p = packing;
      const plain = p.missing.length === 0 && p.scale === 1 && p.offset === 0;
      for (let k = 0; k < n; k++) {
        const raw = data[src + k * cStrideLast] as number;
        out[dst + k * rStrideLast] = plain ? raw : unpack(raw, p);
      }
    } else {
      for (let k = 0; k < n; k++) {
        const raw = data[src + k * cStrideLast];
        const v = Number(raw);
        out[dst + k * rStrideLast] = packing ? unpack(v, packing) : v;
      }
    }
    let d = last - 1;
    while (d >= 0) {
      idx[d]++;
      if (idx[d] < hi[d]) break;
      idx[d] = lo[d];
      d--;
    }
    if (d < 0) break;
  }
}
