// The public files of one build kept in memory once served: what a confined open of this build
// read (published/static.ts, openInside), with its headers worked out once and its compressed
// twins beside it. A build never rewrites a file in place (a new build is a new directory and a
// new Snapshot, so a new cache: the old one goes with its snapshot at publish), so an entry stays
// true for the build's life. Confinement is exactly that of the open: an entry only ever holds
// bytes a confined open of this build returned; a symlink planted or a directory swapped later
// changes nothing an entry holds, and a path not yet cached is opened (and checked) afresh.
//
// Bounded by bytes: files up to a size limit, all of them within a budget; past it the oldest
// entries leave first. Larger files are streamed from disk each time (static.ts) and only their
// being large is remembered, so they are not read twice.
import type { Stats } from "node:fs";
import { promisify } from "node:util";
import { brotliCompress, gzip, constants as z } from "node:zlib";
import { BoundedMap } from "../bounded-map.ts";
import { type Chosen, CODING_SUFFIX, type Coding, codedEtag, compressibleName } from "../content-coding.ts";
import { contentType, etagOf, type LocationCheck, openInside } from "./static.ts";

/** Bytes one build's cache may hold in all (bodies and their compressed twins). */
export const STATIC_CACHE_BYTES = 64 * 1024 * 1024;
/** Files larger than this are streamed from disk, not kept (tiles and legends are far smaller). */
export const STATIC_CACHE_FILE_MAX = 1024 * 1024;
/** Text documents (a real build's catalog can be megabytes) are kept up to this size. */
export const STATIC_CACHE_DOCUMENT_MAX = 16 * 1024 * 1024;
/** What an entry costs besides its bodies (key, headers, objects), counted against the budget. */
const ENTRY_OVERHEAD = 512;
/** Paths known to name files too large to keep; bounded like every memo on a request path. */
const LARGE_MEMO_MAX = 4096;

/**
 * Compression of a document that has no twin in the build (a build written before twins existed,
 * or a file the build copied in): moderate levels, as it runs while a client waits, once per build.
 */
const ON_LOAD = {
  gzip: { level: 6 },
  br: { params: { [z.BROTLI_PARAM_QUALITY]: 5 } },
};
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export interface CachedBody {
  bytes: Buffer;
  etag: string;
  coding: Chosen;
  /** Its response heads as the lean path writes them, by Cache-Control (static-reply.ts, leanHeads). */
  heads?: Map<string, LeanHeads>;
}

/**
 * A body's whole header set, worked out once: flat [name, value, …] arrays for res.writeHead, the
 * request id's value at index 1 (filled in per request, read synchronously by writeHead).
 */
export interface LeanHeads {
  ok: string[];
  notModified: string[];
  /** The same headers but the request id, as checked `name: value\r\n` lines (raw-head.ts). */
  okLines: string;
  notModifiedLines: string;
}

export interface CachedFile {
  type: string;
  mtimeMs: number;
  lastModified: string;
  identity: CachedBody;
  /** Compressed twins smaller than the identity body, by coding. */
  coded: Partial<Record<Coding, CachedBody>>;
  /** The codings `coded` holds, in the order chooseCoding is asked about them. */
  codings: Coding[];
  /** Whether the answer depends on Accept-Encoding (a text document): then Vary says so. */
  varies: boolean;
  cost: number;
  /** chooseCoding over `codings`, remembered by Accept-Encoding text (static-reply.ts). */
  choose?: (acceptEncoding: string) => Chosen;
}

export type Lookup = CachedFile | "large" | undefined;

export class StaticCache {
  readonly root: string;
  readonly budget: number;
  readonly #isPublic: LocationCheck | undefined;
  readonly #entries = new Map<string, CachedFile>();
  readonly #loading = new Map<string, Promise<Lookup>>();
  readonly #large = new BoundedMap<string, true>(LARGE_MEMO_MAX);
  #bytes = 0;

  constructor(root: string, isPublic?: LocationCheck, budget = STATIC_CACHE_BYTES) {
    this.root = root;
    this.#isPublic = isPublic;
    this.budget = budget;
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** What is known of `key` without touching the disk: an entry, "large", or undefined (ask load). */
  peek(key: string): Lookup {
    return this.#entries.get(key) ?? (this.#large.has(key) ? "large" : undefined);
  }

  /** The file at `key` when it is in memory already; undefined when not (yet) or when streamed. */
  warm(key: string): CachedFile | undefined {
    return this.#entries.get(key);
  }

  /**
   * The file `parts` names, read through a confined open of the root: an entry (kept if it fits
   * the budget), "large" when it is to be streamed, undefined when there is no such public file.
   * Concurrent loads of one path share one read.
   */
  load(key: string, parts: string[]): Promise<Lookup> {
    const known = this.peek(key);
    if (known) return Promise.resolve(known);
    let p = this.#loading.get(key);
    if (!p) {
      p = this.#read(key, parts).finally(() => this.#loading.delete(key));
      this.#loading.set(key, p);
    }
    return p;
  }

  async #read(key: string, parts: string[]): Promise<Lookup> {
    const name = parts.at(-1)!;
    const compressible = compressibleName(name);
    const file = await openInside(this.root, parts, this.#isPublic);
    if (!file) return undefined;
    let bytes: Buffer;
    let st: Stats;
    try {
      st = file.st;
      if (st.size > (compressible ? STATIC_CACHE_DOCUMENT_MAX : STATIC_CACHE_FILE_MAX)) {
        this.#large.set(key, true);
        return "large";
      }
      bytes = await file.fh.readFile();
    } finally {
      await file.fh.close();
    }
    // Read what the open returned, whatever its size now: the stat must describe these bytes.
    if (bytes.length !== st.size) return undefined;
    const twins: Partial<Record<Coding, Buffer>> = {};
    if (compressible) for (const coding of CODINGS) twins[coding] = await this.#twin(parts, coding);
    const entry = await cachedDocument(bytes, contentType(name), etagOf(st), st.mtime, compressible, twins);
    this.#keep(key, entry);
    return entry;
  }

  /** The build's pre-compressed twin of a document, read through the same confined open. */
  async #twin(parts: string[], coding: Coding): Promise<Buffer | undefined> {
    const twinParts = [...parts.slice(0, -1), parts.at(-1)! + CODING_SUFFIX[coding]];
    const file = await openInside(this.root, twinParts, this.#isPublic);
    if (!file) return undefined;
    try {
      if (file.st.size > STATIC_CACHE_DOCUMENT_MAX) return undefined;
      const bytes = await file.fh.readFile();
      return bytes.length === file.st.size ? bytes : undefined;
    } finally {
      await file.fh.close();
    }
  }

  #keep(key: string, entry: CachedFile): void {
    // One file larger than the whole budget is answered from what was read, and not kept.
    if (entry.cost > this.budget) return;
    for (const [k, old] of this.#entries) {
      if (this.#bytes + entry.cost <= this.budget) break;
      this.#entries.delete(k);
      this.#bytes -= old.cost;
    }
    this.#entries.set(key, entry);
    this.#bytes += entry.cost;
  }
}

const CODINGS = ["br", "gzip"] as const;

/**
 * An entry for `bytes`: headers worked out once and, for a text document (`compressible`), its
 * compressed bodies: the build's `twins` where given, else compressed now (off the event loop),
 * each kept only when smaller than the identity body.
 */
export async function cachedDocument(
  bytes: Buffer,
  type: string,
  etag: string,
  modified: Date,
  compressible: boolean,
  twins: Partial<Record<Coding, Buffer>> = {},
): Promise<CachedFile> {
  const entry: CachedFile = {
    type,
    mtimeMs: modified.getTime(),
    lastModified: modified.toUTCString(),
    identity: { bytes, etag, coding: "identity" },
    coded: {},
    codings: [],
    varies: compressible,
    cost: ENTRY_OVERHEAD + bytes.length,
  };
  if (!compressible) return entry;
  for (const coding of CODINGS) {
    const twin = twins[coding] ?? (await compressOnLoad(bytes, coding));
    if (twin.length >= bytes.length) continue;
    entry.coded[coding] = { bytes: twin, etag: codedEtag(etag, coding), coding };
    entry.codings.push(coding);
    entry.cost += twin.length;
  }
  return entry;
}

function compressOnLoad(bytes: Buffer, coding: Coding): Promise<Buffer> {
  return coding === "gzip" ? gzipAsync(bytes, ON_LOAD.gzip) : brotliAsync(bytes, ON_LOAD.br);
}
