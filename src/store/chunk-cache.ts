// A decoded-chunk cache with a byte budget, shared by every reader in the process. Concurrent
// requests for the same chunk share one decode.
//
// Scan resistance (issue 51): a segmented LRU. A chunk enters *probation*; a second use (a hit, or
// a load shared with a request already waiting for it) moves it to *protected*, which may hold
// PROTECTED_SHARE of the budget (past that, its least recently used entry goes back to
// probation's most recent end). Room is made from probation's least recently used end first. A
// request that touches more chunks than the cache holds (a /point down 120 whole-field leads, a
// big /data view) thus churns probation only and cannot evict the chunks other requests keep
// coming back to; and a read that knows it will touch more than the whole cache loads with
// `admit: false` (StoredArray.readInto): its chunks are decoded for it and not kept at all, since
// under any recency order it would evict its own first chunks before it came back to them.
// `policy: "lru"` keeps the former single least-recently-used list (benches compare the two).
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

/** Share of the budget the protected segment (chunks used more than once) may hold. */
export const PROTECTED_SHARE = 0.8;

export type CachePolicy = "slru" | "lru";

export interface CacheStats {
  hits: number;
  misses: number;
  /** Loads not kept (admit: false, or larger than the budget). */
  bypassed: number;
  bytes: number;
  /** Bytes in the protected segment (0 under "lru"). */
  protectedBytes: number;
  entries: number;
  budget: number;
  policy: CachePolicy;
}

export class ChunkCache<V extends { byteLength: number }> {
  readonly budget: number;
  readonly policy: CachePolicy;
  /** Most bytes the protected segment holds. */
  readonly #protectedBudget: number;
  /** New entries, least recently used first (every entry under "lru"). */
  #probation = new Map<string, V>();
  /** Entries used more than once, least recently used first. */
  #protected = new Map<string, V>();
  #pending = new Map<string, Promise<V>>();
  /** Keys whose pending load was shared by a second request: a second use, so they enter protected. */
  #sharedLoads = new Set<string>();
  #bytes = 0;
  #protectedBytes = 0;
  /** Key at the most recent end of protected (of probation under "lru"), when known: a hit on it moves nothing. */
  #newest: string | undefined;
  hits = 0;
  misses = 0;
  bypassed = 0;
  readonly #recycle: ((v: V) => void) | undefined;
  /** Leases held per entry value. */
  #leases = new Map<V, number>();
  /** Dropped entries waiting to be recycled (leased ones wait for their last release). */
  #dropped = new Set<V>();
  #sweepQueued = false;

  constructor(budgetBytes: number, recycle?: (v: V) => void, opts: { policy?: CachePolicy } = {}) {
    this.budget = budgetBytes;
    this.policy = opts.policy ?? "slru";
    this.#protectedBudget = this.policy === "slru" ? Math.floor(budgetBytes * PROTECTED_SHARE) : 0;
    this.#recycle = recycle;
  }

  /** get(), and the entry stays unrecycled until release(v) (once per lease). */
  async lease(key: string, load: () => Promise<V>, admit = true): Promise<V> {
    const v = await this.get(key, load, admit);
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

  /**
   * The entry under `key`, loaded when the cache does not have it. `admit` false: a load this call
   * starts is handed to its takers and then dropped, not kept (under "lru" it is kept regardless,
   * as before).
   */
  async get(key: string, load: () => Promise<V>, admit = true): Promise<V> {
    const hit = this.peek(key);
    if (hit) return hit;
    const pending = this.#pending.get(key);
    if (pending) {
      this.hits++;
      this.#sharedLoads.add(key);
      return pending;
    }
    this.misses++;
    const keep = admit || this.policy === "lru";
    const p = load().then(
      (v) => {
        this.#pending.delete(key);
        const shared = this.#sharedLoads.delete(key);
        if (keep) this.#put(key, v, shared);
        else {
          this.bypassed++;
          this.#drop(v);
        }
        return v;
      },
      (e) => {
        this.#pending.delete(key);
        this.#sharedLoads.delete(key);
        throw e;
      },
    );
    this.#pending.set(key, p);
    return p;
  }

  /** Whether the cache holds `key` (nothing counted or moved). */
  has(key: string): boolean {
    return this.#protected.has(key) || this.#probation.has(key);
  }

  /** A decoded entry in hand, counted and refreshed as a hit exactly like get(); else undefined
   * (nothing counted: the caller goes on to get(), which counts the miss or the shared load).
   * `touch` false: counted, but left where it is (a read larger than the cache, whose passing
   * over an entry says nothing about whether it will be wanted again). */
  peek(key: string, touch = true): V | undefined {
    const prot = this.#protected.get(key);
    if (prot !== undefined) {
      this.hits++;
      if (!touch) return prot;
      // Already the most recently used: moving it to the end would change nothing.
      if (key !== this.#newest) {
        this.#protected.delete(key);
        this.#protected.set(key, prot);
        this.#newest = key;
      }
      return prot;
    }
    const hit = this.#probation.get(key);
    if (hit === undefined) return undefined;
    this.hits++;
    if (!touch) return hit;
    if (this.policy === "lru") {
      if (key !== this.#newest) {
        this.#probation.delete(key);
        this.#probation.set(key, hit);
      }
    } else {
      this.#probation.delete(key);
      this.#promote(key, hit);
    }
    this.#newest = key;
    return hit;
  }

  /** An entry used a second time into protected, the least recently used ones past its share back to probation. */
  #promote(key: string, v: V): void {
    this.#protected.set(key, v);
    this.#protectedBytes += v.byteLength;
    for (const [k, old] of this.#protected) {
      if (this.#protectedBytes <= this.#protectedBudget || k === key) break;
      this.#protected.delete(k);
      this.#protectedBytes -= old.byteLength;
      this.#probation.set(k, old);
    }
  }

  #put(key: string, v: V, usedTwice: boolean): void {
    if (v.byteLength > this.budget) {
      // Never cached: recycled once its takers are done with it, like any dropped entry.
      this.bypassed++;
      this.#drop(v);
      return;
    }
    // A key set again (a load that ran across an invalidate): the value it held is dropped.
    this.#remove(key);
    this.#bytes += v.byteLength;
    if (this.policy === "lru") {
      this.#probation.set(key, v);
      this.#newest = key;
    } else if (usedTwice) {
      this.#promote(key, v);
      this.#newest = key;
    } else this.#probation.set(key, v);
    this.#evict();
  }

  /** Room made down to the budget: probation's least recently used first, then protected's. */
  #evict(): void {
    for (const segment of [this.#probation, this.#protected]) {
      for (const [k, old] of segment) {
        if (this.#bytes <= this.budget) return;
        this.#unlink(segment, k, old);
      }
    }
  }

  #unlink(segment: Map<string, V>, k: string, v: V): void {
    segment.delete(k);
    if (segment === this.#protected) this.#protectedBytes -= v.byteLength;
    if (k === this.#newest) this.#newest = undefined;
    this.#bytes -= v.byteLength;
    this.#drop(v);
  }

  #remove(key: string): void {
    for (const segment of [this.#probation, this.#protected]) {
      const v = segment.get(key);
      if (v !== undefined) this.#unlink(segment, key, v);
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
    for (const segment of [this.#probation, this.#protected]) {
      for (const [k, v] of segment) if (k.startsWith(prefix)) this.#unlink(segment, k, v);
    }
  }

  stats(): CacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      bypassed: this.bypassed,
      bytes: this.#bytes,
      protectedBytes: this.#protectedBytes,
      entries: this.#probation.size + this.#protected.size,
      budget: this.budget,
      policy: this.policy,
    };
  }
}
