// Byte-level store backends: a directory or an http(s) URL. Both satisfy zarrita's two-method
// readable interface (get, getRange) and return undefined for a missing key. I/O failures other
// than "missing" become StoreUnavailableError so callers can answer 503 without leaking paths.
import { lstat, open, readdir, readFile, realpath } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { StoreUnavailableError } from "../errors.ts";
import { confineKey } from "./keys.ts";

export type RangeQuery = { offset: number; length: number } | { suffixLength: number };

export interface Backend {
  /** Human description without secrets (used in logs and inspect). */
  readonly description: string;
  get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined>;
  getRange?(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined>;
  /** Child names under a prefix, directories only; undefined when the backend cannot list. */
  listDirs?(prefix: string): Promise<string[] | undefined>;
  /** Size of an object without reading it, when the backend can tell. */
  size?(key: string): Promise<number | undefined>;
}

const MISSING = new Set(["ENOENT", "ENOTDIR", "EISDIR"]);

export class DirectoryBackend implements Backend {
  readonly root: string;
  readonly description: string;
  #realRoot: Promise<string> | undefined;

  constructor(root: string) {
    this.root = resolve(root);
    this.description = "directory store";
  }

  /** Resolve a key inside the root; symlinks that leave the root are treated as missing. */
  async #path(key: string): Promise<string | undefined> {
    const rel = confineKey(key);
    const full = join(this.root, rel);
    if (full !== this.root && !full.startsWith(this.root + sep)) return undefined;
    this.#realRoot ??= realpath(this.root).catch(() => this.root);
    const realRoot = await this.#realRoot;
    try {
      const real = await realpath(full);
      if (real !== realRoot && !real.startsWith(realRoot + sep)) return undefined;
      return real;
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
      throw unavailable(e);
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const p = await this.#path(key);
    if (!p) return undefined;
    try {
      return new Uint8Array(await readFile(p));
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
      throw unavailable(e);
    }
  }

  async getRange(key: string, range: RangeQuery): Promise<Uint8Array | undefined> {
    const p = await this.#path(key);
    if (!p) return undefined;
    let fh: Awaited<ReturnType<typeof open>> | undefined;
    try {
      fh = await open(p, "r");
      const { size } = await fh.stat();
      const offset = "suffixLength" in range ? Math.max(0, size - range.suffixLength) : range.offset;
      const length = "suffixLength" in range ? size - offset : Math.max(0, Math.min(range.length, size - offset));
      const buf = Buffer.alloc(length);
      await fh.read(buf, 0, length, offset);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
      throw unavailable(e);
    } finally {
      await fh?.close();
    }
  }

  async size(key: string): Promise<number | undefined> {
    const p = await this.#path(key);
    if (!p) return undefined;
    try {
      const st = await lstat(p);
      return st.isFile() ? st.size : undefined;
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
      throw unavailable(e);
    }
  }

  async listDirs(prefix: string): Promise<string[] | undefined> {
    const p = await this.#path(prefix);
    if (!p) return [];
    try {
      const entries = await readdir(p, { withFileTypes: true });
      return entries
        .filter((d) => d.isDirectory() && !d.name.startsWith("."))
        .map((d) => d.name)
        .sort();
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return [];
      throw unavailable(e);
    }
  }
}

/** Object storage (or any static file server) reached over HTTP(S). */
export class HttpBackend implements Backend {
  readonly base: URL;
  readonly description: string;
  readonly timeoutMs: number;

  constructor(url: string, timeoutMs = 15_000) {
    this.base = new URL(url.endsWith("/") ? url : `${url}/`);
    this.description = `http store ${this.base.origin}`;
    this.timeoutMs = timeoutMs;
  }

  async #fetch(key: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Uint8Array | undefined> {
    const rel = confineKey(key);
    const url = new URL(rel.split("/").map(encodeURIComponent).join("/"), this.base);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (e) {
      throw unavailable(e);
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new StoreUnavailableError("the store answered with an error", { upstream_status: res.status });
    }
    try {
      return new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      throw unavailable(e);
    }
  }

  get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.#fetch(key, {}, opts?.signal);
  }

  getRange(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    const header =
      "suffixLength" in range
        ? `bytes=-${range.suffixLength}`
        : `bytes=${range.offset}-${range.offset + range.length - 1}`;
    return this.#fetch(key, { Range: header }, opts?.signal);
  }
}

function unavailable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError("the store cannot be read right now", {}, { cause });
}

/** Counts reads per key so tests (and /metrics) can see exactly what a request touched. */
export class CountingBackend implements Backend {
  readonly inner: Backend;
  readonly reads = new Map<string, number>();
  lists = 0;
  bytes = 0;

  constructor(inner: Backend) {
    this.inner = inner;
  }

  get description(): string {
    return this.inner.description;
  }

  #count(key: string, got: Uint8Array | undefined): Uint8Array | undefined {
    const k = key.startsWith("/") ? key.slice(1) : key;
    this.reads.set(k, (this.reads.get(k) ?? 0) + 1);
    if (got) this.bytes += got.byteLength;
    return got;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.#count(key, await this.inner.get(key, opts));
  }

  async getRange(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    const got = this.inner.getRange
      ? await this.inner.getRange(key, range, opts)
      : sliceRange(await this.inner.get(key, opts), range);
    return this.#count(key, got);
  }

  async listDirs(prefix: string): Promise<string[] | undefined> {
    this.lists++;
    return this.inner.listDirs?.(prefix);
  }

  async size(key: string): Promise<number | undefined> {
    return this.inner.size?.(key);
  }

  reset(): void {
    this.reads.clear();
    this.lists = 0;
    this.bytes = 0;
  }

  /** Keys read since the last reset, sorted. */
  keysRead(): string[] {
    return [...this.reads.keys()].sort();
  }
}

function sliceRange(bytes: Uint8Array | undefined, range: RangeQuery): Uint8Array | undefined {
  if (!bytes) return undefined;
  if ("suffixLength" in range) return bytes.subarray(Math.max(0, bytes.length - range.suffixLength));
  return bytes.subarray(range.offset, range.offset + range.length);
}

export function openBackend(root: string, timeoutMs?: number): CountingBackend {
  const inner = /^https?:\/\//i.test(root) ? new HttpBackend(root, timeoutMs) : new DirectoryBackend(root);
  return new CountingBackend(inner);
}
