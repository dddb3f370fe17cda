// The bytes served for one chunk of a published array: stored bytes as they are when the encoding
// passes through, otherwise the decoded chunk re-encoded (kept in a small byte-budgeted cache so a
// client re-reading a chunk does not pay for zstd again).
import { CorruptDataError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import { ChunkCache } from "../store/chunk-cache.ts";
import type { Store } from "../store/store.ts";
import { TYPED_ARRAYS } from "../store/typed-values.ts";
import { compress, inCOrder, type Values, valueBytes } from "./chunk-codec.ts";
import type { PublishedArray } from "./dataset.ts";
import { itemSize } from "./dtype.ts";
import { flippedChunk, storedChunksOf } from "./north-up.ts";

/** Byte budget of re-encoded chunks kept per store. */
export const REENCODED_CACHE_MB = 64;

type Bytes = Uint8Array & { byteLength: number };

export class ChunkBytes {
  readonly #store: Store;
  readonly #reencoded = new ChunkCache<Bytes>(REENCODED_CACHE_MB * 1024 * 1024);
  // Per published array: coordinate bytes, and the filled chunk of the v2 view.
  readonly #memo = new WeakMap<PublishedArray, Promise<Uint8Array>>();
  // Per coordinate of fixed chunk length: its chunks by index (a handful: axis length / chunk).
  readonly #coordParts = new WeakMap<PublishedArray, Map<number, Promise<Uint8Array>>>();
  // Cache keys name the published array, not its path: a refreshed store publishes new arrays.
  readonly #serial = new WeakMap<PublishedArray, number>();
  #next = 0;

  constructor(store: Store) {
    this.#store = store;
  }

  async get(a: PublishedArray, coords: number[], view: 2 | 3): Promise<Uint8Array> {
    const src = a.source;
    if (src.kind === "coordinate") return this.#coordinateChunk(a, src.coord.values, coords[0] ?? 0);
    if (a.encoding.passthrough) {
      const stored = await this.#store.rawBytes(src.sourceKey(coords));
      if (stored) return stored;
      // Missing metadata too means the group went away under us: an outage, not a chunk of fill.
      const meta = src.array.meta;
      if (!(await this.#store.rawBytes(`${meta.path}/${meta.format === 3 ? "zarr.json" : ".zarray"}`))) {
        throw new StoreUnavailableError("the forecast data is not available right now");
      }
      if (view === 2 && a.fill.v2ServesAbsent) return this.#once(a, () => this.#filled(a));
      throw new NotFoundError("no such chunk");
    }
    let serial = this.#serial.get(a);
    if (serial === undefined) this.#serial.set(a, (serial = this.#next++));
    // The stored object's version is part of the key: a chunk rewritten in place is re-encoded anew.
    const flip = a.flip;
    const version = flip
      ? (
          await Promise.all(
            storedChunksOf(coords[flip.dim], a.chunks[flip.dim], a.shape[flip.dim]).map((j) =>
              src.array.chunkVersion(coords.map((c, d) => (d === flip.dim ? j : c))),
            ),
          )
        ).join("+")
      : await src.array.chunkVersion(coords);
    return this.#reencoded.get(`${serial}|${coords.join(",")}|${version}`, async () => {
      if (flip) {
        const values = await flippedChunk(src.array, a.chunks, a.shape, a.dtype, coords, flip, a.fill.absentValue);
        return compress(valueBytes(values, "little"), a.encoding.v2Compressor, itemSize(a.dtype));
      }
      // Leased: the compressor reads the chunk's memory from the thread pool, after an await.
      const ch = await src.array.leaseChunk(coords);
      try {
        const n = a.chunks.reduce((x, y) => x * y, 1);
        if (ch.data.length !== n) throw new CorruptDataError("a stored chunk does not have the array's chunk shape");
        const values = inCOrder(ch.data as Values, ch.shape, ch.stride);
        const out = await compress(valueBytes(values, "little"), a.encoding.v2Compressor, itemSize(a.dtype));
        // Uncompressed bytes may be a view of the chunk itself: kept here, they need their own copy.
        return out.buffer === (ch.data as Values).buffer ? out.slice() : out;
      } finally {
        src.array.releaseChunk(ch);
      }
    });
  }

  /**
   * Chunk i of a coordinate: its values, padded to the chunk length where the axis ends inside
   * the chunk (a whole chunk is what Zarr readers decode; the padding lies beyond the shape).
   */
  #coordinateChunk(a: PublishedArray, values: Values, i: number): Promise<Uint8Array> {
    const len = a.chunks[0] ?? values.length;
    if (i === 0 && len === values.length) return this.#once(a, async () => valueBytes(values, "little"));
    let parts = this.#coordParts.get(a);
    if (!parts) this.#coordParts.set(a, (parts = new Map()));
    let p = parts.get(i);
    if (!p) {
      const out = new (values.constructor as new (n: number) => Values)(len);
      if (out instanceof Float64Array) out.fill(Number.NaN);
      out.set(values.subarray(i * len, Math.min(values.length, (i + 1) * len)) as never);
      p = Promise.resolve(valueBytes(out, "little"));
      parts.set(i, p);
    }
    return p;
  }

  #once(a: PublishedArray, make: () => Promise<Uint8Array>): Promise<Uint8Array> {
    let p = this.#memo.get(a);
    if (!p) {
      p = make();
      p.catch(() => this.#memo.delete(a));
      this.#memo.set(a, p);
    }
    return p;
  }

  /** A whole chunk of the value the store reads where it holds no chunk. */
  #filled(a: PublishedArray): Promise<Uint8Array> {
    const n = a.chunks.reduce((x, y) => x * y, 1);
    const values = new TYPED_ARRAYS[a.dtype](n);
    const v = a.fill.absentValue;
    if (values instanceof BigInt64Array || values instanceof BigUint64Array)
      values.fill(BigInt(Number.isFinite(v) ? v : 0));
    else values.fill(v);
    return compress(valueBytes(values, a.encoding.endian), a.encoding.v2Compressor, itemSize(a.dtype));
  }
}
