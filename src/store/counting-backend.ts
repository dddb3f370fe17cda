// Read accounting over any backend (what a request touched, for tests and /metrics), the recording
// wrapper that reports which documents a value came from, and the one place a root becomes a backend.
import { type Backend, type RangeQuery, sliceWhole } from "./backend.ts";
import { DirectoryBackend } from "./directory-backend.ts";
import { HttpBackend } from "./http-backend.ts";
import type { NOT_YET } from "./stamp-memo.ts";

/** Counts reads per key so tests (and /metrics) can see exactly what a request touched. */
/** Distinct keys CountingBackend counts by name; reads of further keys are only counted. */
export const KEYS_TRACKED = 4096;

export class CountingBackend implements Backend {
  readonly inner: Backend;
  /** Reads per key since the last reset, for at most KEYS_TRACKED keys (a server runs for weeks
   * over stores of millions of chunks: the map must not grow with them). */
  readonly reads = new Map<string, number>();
  /** Reads of keys past the first KEYS_TRACKED since the last reset. */
  untracked = 0;
  lists = 0;
  bytes = 0;
  /**
   * Called with every key read or listed, and awaited before the read goes out (so what it notes
   * of the key, a version say, is never newer than the bytes read). See watchReads.
   */
  #watch: ((key: string) => Promise<void>) | undefined;

  readonly stamp?: (key: string) => Promise<string | undefined>;
  readonly freshStamp?: (key: string) => Promise<string | undefined>;
  readonly remoteStamp?: (key: string) => Promise<string | undefined>;
  readonly freshStamps?: (keys: readonly string[]) => (string | undefined)[];
  readonly getInto?: Backend["getInto"];
  readonly stampNow?: (key: string) => string | undefined | typeof NOT_YET;

  constructor(inner: Backend) {
    this.inner = inner;
    if (inner.stamp) this.stamp = (key) => inner.stamp!(key);
    if (inner.freshStamp) this.freshStamp = (key) => inner.freshStamp!(key);
    if (inner.freshStamps) this.freshStamps = (keys) => inner.freshStamps!(keys);
    if (inner.remoteStamp) this.remoteStamp = (key) => inner.remoteStamp!(key);
    if (inner.stampNow) this.stampNow = (key) => inner.stampNow!(key);
    // Scans read into their own buffers only where the store can (see scan.ts); the count is kept.
    if (inner.getInto) {
      this.getInto = async (key, take, expect) => {
        if (this.#watch) await this.#watch(rel(key));
        return this.#count(key, await inner.getInto!(key, take, expect));
      };
    }
  }

  /**
   * Every key read (get, getRange, getInto) or listed from now on goes to `watch` first, awaited
   * before the read; undefined stops it. One watcher at a time.
   */
  watchReads(watch: ((key: string) => Promise<void>) | undefined): void {
    this.#watch = watch;
  }

  get description(): string {
    return this.inner.description;
  }

  #count(key: string, got: Uint8Array | undefined): Uint8Array | undefined {
    const k = key.startsWith("/") ? key.slice(1) : key;
    const n = this.reads.get(k);
    if (n !== undefined) this.reads.set(k, n + 1);
    else if (this.reads.size < KEYS_TRACKED) this.reads.set(k, 1);
    else this.untracked++;
    if (got) this.bytes += got.byteLength;
    return got;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    if (this.#watch) await this.#watch(rel(key));
    return this.#count(key, await this.inner.get(key, opts));
  }

  async getRange(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    if (this.#watch) await this.#watch(rel(key));
    const got = this.inner.getRange
      ? await this.inner.getRange(key, range, opts)
      : sliceRange(this.inner, key, await this.inner.get(key, opts), range);
    return this.#count(key, got);
  }

  async listDirs(prefix: string): Promise<string[] | undefined> {
    this.lists++;
    if (this.#watch) await this.#watch(rel(prefix));
    return this.inner.listDirs?.(prefix);
  }

  async size(key: string): Promise<number | undefined> {
    return this.inner.size?.(key);
  }

  reset(): void {
    this.reads.clear();
    this.untracked = 0;
    this.lists = 0;
    this.bytes = 0;
  }

  /** Keys read since the last reset, sorted (the first KEYS_TRACKED of them). */
  keysRead(): string[] {
    return [...this.reads.keys()].sort();
  }
}

const rel = (k: string) => (k.startsWith("/") ? k.slice(1) : k);

function sliceRange(backend: Backend, key: string, bytes: Uint8Array | undefined, range: RangeQuery) {
  return bytes && sliceWhole(backend, key, bytes, range);
}

/** A backend that reports every key it is asked for (to know which documents a value came from). */
export type Recording = Backend & { touch: (key: string) => void };

export function recording(inner: Backend, touch: (key: string) => void): Recording {
  const rel = (k: string) => (k.startsWith("/") ? k.slice(1) : k);
  return {
    description: inner.description,
    touch,
    get: (key, opts) => {
      touch(rel(key));
      return inner.get(key, opts);
    },
    listDirs: inner.listDirs
      ? (prefix) => {
          // A directory's version changes when entries are added or removed.
          touch(rel(prefix));
          return inner.listDirs!(prefix);
        }
      : undefined,
  };
}

export function openBackend(root: string, timeoutMs?: number): CountingBackend {
  const inner = /^https?:\/\//i.test(root) ? new HttpBackend(root, timeoutMs) : new DirectoryBackend(root);
  return new CountingBackend(inner);
}
