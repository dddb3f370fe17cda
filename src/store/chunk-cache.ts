// A decoded-chunk cache with a byte budget, shared by every reader in the process. Concurrent
// requests for the same chunk share one decode. Least recently used entries go first.
//
// Dropped entries (evicted, invalidated, replaced) can be handed to a `recycle` callback so their
// memory is reused by the next decode instead of left to the garbage collector (fresh memory costs
// page faults on every first touch, the largest part of a cold read on some machines). That makes
// holding an entry's memory a contract:
//  - get() and peek() answers are for use at once: read them before the next `await`. A dropped
//    entry is recycled only from a later macrotask (setImmediate), after every continuation of
//    the microtasks that produced it has run.
//  - To keep an entry across an `await`, take it with lease() and give it back with release():
//    a dropped entry that is leased is recycled only once its last lease is released.

export interface CacheStats {
  hits: number;
  misses: number;
  bytes: number;
  entries: number;
  budget: number;
}

export class ChunkCache<V extends { byteLength: number }> {
  readonly budget: number;
  #entries = new Map<string, V>();
  #pending = new Map<string, Promise<V>>();
  #bytes = 0;
  /** Key of the entry last in LRU order (most recently used), when known. */
  #newest: string | undefined;
  hits = 0;
  misses = 0;
  readonly #recycle: ((v: V) => void) | undefined;
  /** Leases held per entry value. */
  #leases = new Map<V, number>();
  /** Dropped entries waiting to be recycled (leased ones wait for their last release). */
  #dropped = new Set<V>();
  #sweepQueued = false;

  constructor(budgetBytes: number, recycle?: (v: V) => void) {
    this.budget = budgetBytes;
    this.#recycle = recycle;
  }

  /** get(), and the entry stays unrecycled until release(v) (once per lease). */
  async lease(key: string, load: () => Promise<V>): Promise<V> {
    const v = await this.get(key, load);
    // Still in the microtasks that resolved it: no sweep can have run since.
    this.#leases.set(v, (this.#leases.get(v) ?? 0) + 1);
    return v;
  }

  release(v: V): void {
    const n = this.#leases.get(v);
    // A release without a lease would let a holder's memory be reused under it: a bug, never absorbed.
    if (n === undefined) throw new Error("chunk cache: release without a lease");
    if (n > 1) this.#leases.set(v, n - 1);
    else {
      this.#leases.delete(v);
      if (this.#dropped.has(v)) this.#queueSweep();
    }
  }

  /** Leases held now, all entries together (tests). */
  get leased(): number {
    let n = 0;
    for (const c of this.#leases.values()) n += c;
    return n;
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.peek(key);
    if (hit) return hit;
    const pending = this.#pending.get(key);
    if (pending) {
      this.hits++;
      return pending;
    }
    this.misses++;
    const p = load().then(
      (v) => {
        this.#pending.delete(key);
        this.#put(key, v);
        return v;
      },
      (e) => {
        this.#pending.delete(key);
        throw e;
      },
    );
    this.#pending.set(key, p);
    return p;
  }

  /** A decoded entry in hand, counted and refreshed as a hit exactly like get(); else undefined
   * (nothing counted: the caller goes on to get(), which counts the miss or the shared load). */
  peek(key: string): V | undefined {
    const hit = this.#entries.get(key);
    if (!hit) return undefined;
    this.hits++;
    // Already the most recently used: moving it to the end would change nothing.
    if (key !== this.#newest) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      this.#newest = key;
    }
    return hit;
  }

  #put(key: string, v: V): void {
    if (v.byteLength > this.budget) {
      // Never cached: recycled once its takers are done with it, like any dropped entry.
      this.#drop(v);
      return;
    }
    // A key set again (a load that ran across an invalidate) keeps its place in the Map: then the
    // last one is no longer known, and the value it held is dropped.
    const before = this.#entries.get(key);
    if (before !== undefined) {
      this.#bytes -= before.byteLength;
      this.#drop(before);
    }
    this.#newest = before !== undefined ? undefined : key;
    this.#entries.set(key, v);
    this.#bytes += v.byteLength;
    for (const [k, old] of this.#entries) {
      if (this.#bytes <= this.budget) break;
      this.#entries.delete(k);
      if (k === this.#newest) this.#newest = undefined;
      this.#bytes -= old.byteLength;
      this.#drop(old);
    }
  }

  #drop(v: V): void {
    if (!this.#recycle) return;
    this.#dropped.add(v);
    this.#queueSweep();
  }

  #queueSweep(): void {
    if (this.#sweepQueued) return;
    this.#sweepQueued = true;
    setImmediate(() => {
      this.#sweepQueued = false;
      for (const v of this.#dropped) {
        if (this.#leases.has(v)) continue;
        this.#dropped.delete(v);
        this.#recycle!(v);
      }
    });
  }

  /** Drop entries whose key starts with a prefix (a group that changed on disk). */
  invalidate(prefix = ""): void {
    for (const [k, v] of this.#entries) {
      if (k.startsWith(prefix)) {
        this.#entries.delete(k);
        if (k === this.#newest) this.#newest = undefined;
        this.#bytes -= v.byteLength;
        this.#drop(v);
      }
    }
  }

  stats(): CacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      bytes: this.#bytes,
      entries: this.#entries.size,
      budget: this.budget,
    };
  }
}
