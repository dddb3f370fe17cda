// A bulk read (an export, a latent slice) as one scan over an array: the parts go out in order
// along one dimension (leads, rows), each read while the one before is sent. The scan decodes the
// chunks it needs into reused buffers (scan-buffers.ts) that only it holds, keeps each until the
// parts have moved past it, and hands its buffers back. The shared chunk cache is left to the
// small reads that revisit chunks (/point, /data, tiles): a large export neither evicts them nor
// fills the heap with chunk buffers for the GC to chase.
//
// Ownership: a held chunk is pinned while a copy out of it is pending, and its buffer goes back
// only when it is retired or the scan closes, it is not pinned, and its decode has finished (the
// thread pool may still be writing into it before then).
import type { StoredArray } from "./array.ts";
import type { Decoding } from "./cf.ts";
import type { Chunk, OutValues, Placement, Range } from "./region.ts";
import { giveBytes, takeBytes } from "./scan-buffers.ts";

interface Held {
  /** The chunk's coordinates joined: its key in the scan's map. */
  key: string;
  /** End of the chunk along the scan's dimension: once the parts reach it, it is done with. */
  end: number;
  loaded: Promise<Chunk>;
  /** Our buffer behind chunk.data (undefined for a chunk from the cache: the cache owns it). */
  buffer?: Uint8Array;
  /** A chunk leased from the cache (a fill-value chunk), released with the buffer. */
  leased?: Chunk;
  settled: boolean;
  pins: number;
  done: boolean;
}

/** Decoded-chunk bytes reserved by the scans running in this process. */
let reserved = 0;

/**
 * Reserve `bytes` against the same process-wide budget as the scans (a bulk read that holds its
 * own buffers instead of decoded chunks); false, reserving nothing, when they would not fit.
 */
export function reserveScanBytes(bytes: number, budgetBytes: number): boolean {
  if (reserved + bytes > budgetBytes) return false;
  reserved += bytes;
  return true;
}

/** Give back what reserveScanBytes reserved. */
export function releaseScanBytes(bytes: number): void {
  reserved -= bytes;
}

export class ChunkScan {
  readonly array: StoredArray;
  readonly dim: number;
  /** Bytes this scan reserved against the process-wide budget (given back when it closes). */
  readonly reservation: number;
  #held = new Map<string, Held>();
  #closed = false;

  constructor(array: StoredArray, dim: number, reservation = 0) {
    this.array = array;
    this.dim = dim;
    this.reservation = reservation;
  }

  /**
   * A scan over these regions along `dim`, or undefined when the read should go through the chunk
   * cache instead: the array has no direct decoder, or the decoded chunks the scan may hold would
   * not fit in what is left of `budgetBytes`, shared by all scans of the process. What a scan may
   * hold is three times the chunks of one chunk-step along `dim` (the most one part pins: the part
   * being read, the one being warmed, and chunks straddling both). So concurrent scans hold at most
   * the budget together, and beyond it requests share decodes through the cache as before.
   */
  static open(array: StoredArray, regions: Range[][], dim: number, budgetBytes: number): ChunkScan | undefined {
    const need = ChunkScan.holdFor(array, regions, dim);
    if (need === undefined || reserved + need > budgetBytes) return undefined;
    reserved += need;
    return new ChunkScan(array, dim, need);
  }

  /** Bytes of decoded chunks a scan of these regions may hold; undefined without a direct decoder. */
  static holdFor(array: StoredArray, regions: Range[][], dim: number): number | undefined {
    const dec = array.direct;
    if (!dec) return undefined;
    let chunks = 0;
    for (const region of regions) {
      let n = 1;
      for (let d = 0; d < region.length; d++) {
        if (d === dim) continue;
        const c = array.chunks[d];
        const [a, b] = region[d];
        if (b <= a) return undefined;
        n *= Math.floor((b - 1) / c) - Math.floor(a / c) + 1;
      }
      chunks += n;
    }
    return 3 * chunks * dec.bytes;
  }

  /** Bytes reserved by all open scans (tests, benches). */
  static get reservedBytes(): number {
    return reserved;
  }

  /** Physical values of a region written into its place (as StoredArray.readInto, `packing` too). */
  async readInto(region: Range[], out: OutValues, place: Placement, packing?: Decoding | null): Promise<void> {
    if (this.#closed) throw new Error("scan already closed");
    if (region.some(([a, b]) => b <= a)) return;
    await Promise.all(
      this.array.chunksFor(region).map(async (cc) => {
        const h = this.#hold(cc);
        h.pins++;
        try {
          const ch = await h.loaded;
          // In pieces of at most a turn's bytes, paced: the chunk stays pinned across the waits.
          await this.array.copyChunkPaced(
            ch,
            cc,
            region,
            out,
            place,
            packing === undefined ? this.array.packing : packing,
          );
        } finally {
          h.pins--;
          this.#release(h);
        }
      }),
    );
  }

  /** Start decoding the chunks of a region (a part after the next), copying nothing. */
  prefetch(region: Range[]): void {
    if (this.#closed || region.some(([a, b]) => b <= a)) return;
    for (const cc of this.array.chunksFor(region)) this.#hold(cc);
  }

  /** The parts have reached `upTo` along the scan's dimension: chunks ending there are done. */
  retire(upTo: number): void {
    for (const h of this.#held.values()) {
      if (h.end <= upTo) {
        h.done = true;
        this.#release(h);
      }
    }
  }

  /** The scan is over (finished, failed or abandoned): every buffer goes back once free. */
  close(): void {
    if (!this.#closed) reserved -= this.reservation;
    this.#closed = true;
    for (const h of this.#held.values()) {
      h.done = true;
      this.#release(h);
    }
  }

  /** Chunks held now (tests). */
  get holding(): number {
    return this.#held.size;
  }

  #hold(cc: number[]): Held {
    const key = cc.join(",");
    const had = this.#held.get(key);
    if (had) return had;
    const c = this.array.chunks[this.dim];
    const h: Held = { key, end: (cc[this.dim] + 1) * c, settled: false, pins: 0, done: false } as Held;
    h.loaded = this.#load(cc).then(
      (got) => {
        h.buffer = got.buffer;
        h.leased = got.leased;
        h.settled = true;
        this.#release(h);
        return got.chunk;
      },
      (e) => {
        h.settled = true;
        this.#release(h);
        throw e;
      },
    );
    // A prefetched chunk nobody reads (the client left) must not be an unhandled rejection; the
    // read that needs it awaits the same promise and sees the error.
    h.loaded.catch(() => {});
    this.#held.set(key, h);
    return h;
  }

  async #load(cc: number[]): Promise<{ chunk: Chunk; buffer?: Uint8Array; leased?: Chunk }> {
    const got = await this.array.decodeDirect(cc, takeBytes, giveBytes);
    if (got) return got;
    // A chunk that is not stored is its fill value: the cached path knows how to answer that.
    // Held across awaits, so leased (the cache may drop it meanwhile and reuse its memory).
    const chunk = await this.array.leaseChunk(cc);
    return { chunk, leased: chunk };
  }

  #release(h: Held): void {
    if (!h.done || !h.settled || h.pins > 0) return;
    if (this.#held.get(h.key) !== h) return;
    this.#held.delete(h.key);
    if (h.buffer) giveBytes(h.buffer);
    if (h.leased) this.array.releaseChunk(h.leased);
    h.buffer = undefined;
    h.leased = undefined;
  }
}
