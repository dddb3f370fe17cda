// Sequential reads with reads ahead: while the consumer handles part i (sends it), part i+1 (and
// more, if asked) is already being read, so store reads and decoding overlap with sending. At
// most `ahead` + 1 parts are held at once (two by default).

import { inSlices } from "./loop-turns.ts";

/**
 * Yields read(parts[0]), read(parts[1]), … in order, starting each read `ahead` parts early (one
 * by default). With `warm`, the part after those is warmed too (its chunks fetched and decoded
 * into the chunk cache, nothing assembled), so decoding runs one more part ahead of sending while
 * only `ahead` + 1 parts are held.
 */
export async function* readAhead<P, T>(
  parts: P[],
  read: (part: P) => Promise<T>,
  warm?: (part: P) => Promise<void>,
  ahead = 1,
): AsyncGenerator<T> {
  const start = (i: number) => {
    const p = read(parts[i]);
    // Observed here so that a read left behind by a consumer that stopped (a client that went
    // away) is not an unhandled rejection; whoever awaits it still sees the error.
    p.catch(() => {});
    return p;
  };
  const pending: Promise<T>[] = [];
  for (let i = 0; i < Math.min(ahead, parts.length); i++) pending.push(start(i));
  for (let i = 0; i < parts.length; i++) {
    const part = await pending.shift()!;
    if (i + ahead < parts.length) pending.push(start(i + ahead));
    // Errors of warming are the read's to report when its turn comes.
    if (warm && i + ahead + 1 < parts.length) warm(parts[i + ahead + 1]).catch(() => {});
    yield part;
  }
}

// Slab buffers are reused once the connection has taken their bytes. A fresh buffer of several
// MiB is mapped and page-faulted in by the kernel on first touch, which cost as much as filling
// it; a reused one is already resident. Only whole buffers nobody else holds come back (the
// stream hands one back from the write callback of its last use), and the free list is bounded.
/** Free slab buffers kept for reuse, at most (beyond it a buffer handed back is left to the GC). */
export const SLAB_POOL_BYTES = 32 * 1024 * 1024;
const free: ArrayBuffer[] = [];
let pooled = 0;

/**
 * A float32 buffer of n values, every one NaN until written (unless `fill` is false: for a caller
 * that writes every value): from the free list when one fits.
 */
export function slab(n: number, fill = true): Float32Array {
  const bytes = n * 4;
  for (let i = 0; i < free.length; i++) {
    const ab = free[i];
    // Not more than twice the size asked for, so small slabs do not pin large buffers.
    if (ab.byteLength >= bytes && ab.byteLength <= 2 * bytes) {
      free.splice(i, 1);
      pooled -= ab.byteLength;
      const a = new Float32Array(ab, 0, n);
      return fill ? a.fill(Number.NaN) : a;
    }
  }
  const a = new Float32Array(n);
  return fill ? a.fill(Number.NaN) : a;
}

/**
 * slab() for the main thread's bulk reads: its NaN fill done in slices paced by the event loop's
 * turns (loop-turns.ts), so a fresh buffer of megabytes (page-faulted in as it is filled) never
 * holds the loop for more than a turn's bytes.
 */
export async function pacedSlab(n: number, fill = true): Promise<Float32Array> {
  const a = slab(n, false);
  if (fill) await inSlices(n, 4, (from, to) => a.fill(Number.NaN, from, to));
  return a;
}

// A slab sent in two parts (slabParts): the first part, never handed back by itself, and the last
// part, mapped to the whole slab it ends.
const heads = new WeakSet<Float32Array>();
const tails = new WeakMap<Float32Array, Float32Array>();

/**
 * A slab as two parts to send one after the other, values [0, at) and [at, end): recycleSlab of
 * the first does nothing (the second may still be being written), of the second hands back the
 * whole slab (the first, sent before it on the same connection, is on the wire by then).
 */
export function slabParts(whole: Float32Array, at: number): [Float32Array, Float32Array] {
  const head = whole.subarray(0, at);
  const tail = whole.subarray(at);
  heads.add(head);
  tails.set(tail, whole);
  return [head, tail];
}

/** Give a slab back once nothing refers to its bytes any more (they are on the wire). */
export function recycleSlab(part: Float32Array): void {
  if (heads.has(part)) return;
  const a = tails.get(part) ?? part;
  const ab = a.buffer;
  if (!(ab instanceof ArrayBuffer) || a.byteOffset !== 0) return;
  if (pooled + ab.byteLength > SLAB_POOL_BYTES) return;
  free.push(ab);
  pooled += ab.byteLength;
}
