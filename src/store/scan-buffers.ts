// Reused byte buffers for bulk reads (see scan.ts). A request that reads many chunks would
// otherwise allocate two buffers per chunk (the stored bytes and the decoded values), several MiB
// each: V8 counts that memory as external pressure and answers it with a full collection almost
// every request. Buffers come in size classes (powers of two and the quarters between them, so at
// most a quarter is wasted) and go back to a bounded free list when their last user is done.
// Only whole buffers handed out here come back, each at most once.

const MIN_CLASS = 64 * 1024;
/** Free buffers kept for reuse, all classes together; beyond this they are left to the GC. */
export const POOL_BYTES = 64 * 1024 * 1024;

const free = new Map<number, ArrayBuffer[]>();
const inPool = new WeakSet<ArrayBuffer>();
const lent = new WeakSet<ArrayBuffer>();
let pooled = 0;
let poison = false;
/**
 * Buffers handed out, how many of them had to be allocated (benches read both), how many are out
 * now (handed out, not yet back) and the most that were out at once (tests read those).
 */
export const bufferStats = { taken: 0, fresh: 0, out: 0, peak: 0 };

/**
 * Tests: fill every buffer handed back with a marker (0x7f bytes; 3.4e38 as float32), so a value
 * read out of a buffer after it was handed back shows up as a wrong number instead of passing by
 * luck of timing.
 */
export function poisonReturned(on: boolean): void {
  poison = on;
}

/** The size class holding n bytes: 64 KiB, or 2^k × 1, 1.25, 1.5 or 1.75 at or above n. */
export function sizeClass(n: number): number {
  if (n <= MIN_CLASS) return MIN_CLASS;
  const p = 2 ** Math.floor(Math.log2(n));
  for (const q of [1, 1.25, 1.5, 1.75]) if (p * q >= n) return p * q;
  return 2 * p;
}

/** A view of n bytes at the start of a buffer of n's class; its contents are whatever was there. */
export function takeBytes(n: number): Uint8Array {
  const c = sizeClass(n);
  bufferStats.taken++;
  bufferStats.peak = Math.max(bufferStats.peak, ++bufferStats.out);
  const ab = free.get(c)?.pop();
  if (ab) {
    pooled -= c;
    inPool.delete(ab);
    lent.add(ab);
    return new Uint8Array(ab, 0, n);
  }
  bufferStats.fresh++;
  const fresh = new ArrayBuffer(c);
  lent.add(fresh);
  return new Uint8Array(fresh, 0, n);
}

/**
 * Hand back a view takeBytes gave, once its bytes are no longer read or written by anyone. Any
 * other buffer (one a backend made, which it may still hold) is left alone.
 */
export function giveBytes(view: { readonly buffer: ArrayBufferLike } | ArrayLike<unknown>): void {
  const ab = (view as { buffer?: unknown }).buffer;
  // Handing a buffer back twice would give it to two readers at once: a bug, never to be absorbed.
  if (ab instanceof ArrayBuffer && inPool.has(ab)) throw new Error("scan buffer handed back twice");
  if (!(ab instanceof ArrayBuffer) || !lent.has(ab)) return;
  lent.delete(ab);
  bufferStats.out--;
  if (poison) new Uint8Array(ab).fill(0x7f);
  if (pooled + ab.byteLength > POOL_BYTES) return;
  let list = free.get(ab.byteLength);
  if (!list) {
    list = [];
    free.set(ab.byteLength, list);
  }
  list.push(ab);
  inPool.add(ab);
  pooled += ab.byteLength;
}

/** Bytes held for reuse (tests and the bench read it). */
export function pooledBytes(): number {
  return pooled;
}
