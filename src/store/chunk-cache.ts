// A decoded-chunk cache with a byte budget, shared by every reader in the process. Concurrent
// requests for the same chunk share one decode. Least recently used entries go first.

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

  constructor(budgetBytes: number) {
    this.budget = budgetBytes;
  }

  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.#entries.get(key);
    if (hit) {
      this.hits++;
      if (key !== this.#newest) {
        this.#entries.delete(key);
        this.#entries.set(key, hit);
        this.#newest = key;
      }
      return hit;
    }
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
    if (v.byteLength > this.budget) return;
    // A key set again keeps its place in the Map: then the last one is no longer known.
    this.#newest = this.#entries.has(key) ? undefined : key;
    this.#entries.set(key, v);
    this.#bytes += v.byteLength;
    for (const [k, old] of this.#entries) {
      if (this.#bytes <= this.budget) break;
      this.#entries.delete(k);
      if (k === this.#newest) this.#newest = undefined;
      this.#bytes -= old.byteLength;
    }
  }

  /** Drop entries whose key starts with a prefix (a group that changed on disk). */
  invalidate(prefix = ""): void {
    for (const [k, v] of this.#entries) {
      if (k.startsWith(prefix)) {
        this.#entries.delete(k);
        if (k === this.#newest) this.#newest = undefined;
        this.#bytes -= v.byteLength;
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
