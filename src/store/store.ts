// The store facade: the only entry point the rest of gridcast uses to reach Zarr data. It opens a
// directory or http(s) root, reads and revalidates its metadata, hands out StoredArrays that share
// one decoded-chunk cache, finds embedding items, and counts every read. Which forecast groups
// there are, and each one built and kept, is groups.ts's; the Store answers for it.

import { createHash } from "node:crypto";
import { GridcastError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import { registry as defaultRegistry, type Registry } from "../registry/registry.ts";
import type { Soon } from "../soon.ts";
import { StoredArray } from "./array.ts";
import type { Backend } from "./backend.ts";
import { type CachePolicy, ChunkCache } from "./chunk-cache.ts";
import { type CountingBackend, openBackend, type Recording, recording } from "./counting-backend.ts";
import { rootGroupName, rootStoredName } from "./discovery.ts";
import type { ForecastGroup } from "./forecast-group.ts";
import { ForecastGroups, type GroupStatus } from "./groups.ts";
import { confineKey } from "./keys.ts";
import { childrenFrom, type NodeMeta, readConsolidated, readNode } from "./metadata.ts";
import type { NotServed } from "./not-served.ts";
import type { Chunk } from "./region.ts";
import { Revalidated, type Stamped } from "./revalidate.ts";
import { giveBytes } from "./scan-buffers.ts";

export interface StoreOptions {
  cacheMb?: number;
  /** The chunk cache's policy (chunk-cache.ts): "slru" unless a bench compares it with "lru". */
  cachePolicy?: CachePolicy;
  /** Per-read timeout of http(s) stores. */
  timeoutMs?: number;
  registry?: Registry;
  /** Milliseconds metadata is trusted before it is revalidated (default METADATA_CHECK_MS). */
  checkMs?: number;
  /** Name of the forecast group found at the store root (default: the store directory's name). */
  rootGroupName?: string;
  /** Budget of one cell grid's tables, MiB (the cell_grid_mb setting; default CELL_GRID_MB). */
  cellGridMb?: number;
  /** Where a group that cannot be read is reported (once per failure), e.g. the server's log. */
  log?: (entry: Record<string, unknown>) => void;
}

/** How long group metadata is trusted before its documents are checked for a new cycle. */
export const METADATA_CHECK_MS = 2000;

export class Store {
  readonly root: string;
  readonly backend: CountingBackend;
  readonly cache: ChunkCache<Chunk & { byteLength: number }>;
  readonly registry: Registry;
  readonly checkMs: number;
  readonly cellGridMb: number | undefined;
  #root: Revalidated<Map<string, NodeMeta>>;
  #groupMeta = new Map<string, Revalidated<Map<string, NodeMeta>>>();
  /** Metadata revision each node was read under: part of its arrays' chunk cache keys. */
  #revision = new WeakMap<NodeMeta, string>();
  /** Group metadata whose nodes' revisions are recorded (so it may be answered at once). */
  #recorded = new WeakSet<Map<string, NodeMeta>>();
  #arrays = new Map<string, StoredArray>();
  readonly #groups: ForecastGroups;

  constructor(root: string, opts: StoreOptions = {}) {
    this.root = root;
    this.backend = openBackend(root, opts.timeoutMs);
    // Dropped chunks' buffers go back to the shared pool, where the next decode of that size finds
    // memory already paged in (only buffers the pool lent are taken back; zarrita's are left).
    this.cache = new ChunkCache((opts.cacheMb ?? 256) * 1024 * 1024, (c) => giveBytes(c.data), {
      policy: opts.cachePolicy,
    });
    this.registry = opts.registry ?? defaultRegistry;
    this.checkMs = opts.checkMs ?? METADATA_CHECK_MS;
    this.cellGridMb = opts.cellGridMb;
    this.#groups = new ForecastGroups(this, rootGroupName(root, opts.rootGroupName), opts.log, rootStoredName(root));
    this.#root = this.#revalidated(async (rb) => (await readConsolidated(rb, "")) ?? new Map<string, NodeMeta>());
  }

  #revalidated(load: (rb: Backend) => Promise<Map<string, NodeMeta>>): Revalidated<Map<string, NodeMeta>> {
    return new Revalidated(
      (touch) => load(recording(this.backend, touch)),
      (keys) => this.#stamp(keys),
      this.checkMs,
    );
  }

  /**
   * Versions of metadata documents as they are now: a stat each on disk (never one remembered for
   * chunk reads, which could be older than the check), a hash of each document over HTTP.
   */
  async #stamp(keys: string[]): Promise<string> {
    const b = this.backend;
    const parts = await Promise.all(
      keys.map(async (k) => {
        if (b.freshStamp) return (await b.freshStamp(k)) ?? "-";
        const bytes = await b.get(k);
        return bytes ? createHash("sha1").update(bytes).digest("base64url") : "-";
      }),
    );
    return createHash("sha1").update(parts.join("\n")).digest("base64url");
  }

  /** Consolidated metadata at the store root, if any (empty map when there is none). */
  async #rootConsolidated(touch?: (key: string) => void): Promise<Map<string, NodeMeta>> {
    // Whatever is built from the root document depends on it: its readers revalidate with it.
    touch?.("zarr.json");
    touch?.(".zmetadata");
    return (await this.#root.get()).value;
  }

  /** Metadata of one node (group or array), or undefined. */
  async node(path: string): Promise<NodeMeta | undefined> {
    const rel = confineKey(path);
    const known = (await this.#rootConsolidated()).get(rel);
    return known ?? readNode(this.backend, rel);
  }

  /** Names of the child nodes of a group. */
  children(path: string): Promise<string[]> {
    return this.#children(path, this.backend);
  }

  async #children(path: string, backend: Backend, touch?: (key: string) => void): Promise<string[]> {
    const rel = confineKey(path);
    const names = new Set(childrenFrom(await this.#rootConsolidated(touch), rel));
    const listed = await backend.listDirs?.(rel);
    if (listed === undefined && names.size === 0) {
      throw new StoreUnavailableError("this store cannot be listed and has no consolidated metadata at its root");
    }
    for (const n of listed ?? []) names.add(n);
    return [...names].sort();
  }

  /**
   * All metadata of a group and its direct children (consolidated when the group has it). Trusted
   * for checkMs, then revalidated against the documents it was read from. The metadata in hand is
   * answered at once.
   */
  groupNodes(path: string): Soon<Map<string, NodeMeta>> {
    const got = this.#groupMeta.get(path)?.peek();
    return got && this.#recorded.has(got.value) ? got.value : this.#groupNodes(path);
  }

  async #groupNodes(path: string): Promise<Map<string, NodeMeta>> {
    let r = this.#groupMeta.get(path);
    if (!r) {
      r = this.#revalidated(async (rb) => {
        const own = await readConsolidated(rb, path);
        if (own) return own;
        const touch = (rb as Recording).touch;
        const root = await this.#rootConsolidated(touch);
        const self = root.get(path) ?? (await readNode(rb, path));
        if (self?.kind !== "group") throw new NotFoundError(`no group ${path}`);
        const out = new Map<string, NodeMeta>([[path, self]]);
        for (const child of await this.#children(path, rb, touch)) {
          const full = path === "" ? child : `${path}/${child}`;
          const meta = root.get(full) ?? (await readNode(rb, full));
          if (meta) out.set(meta.path, meta);
        }
        return out;
      });
      this.#groupMeta.set(path, r);
    }
    let got: Stamped<Map<string, NodeMeta>>;
    try {
      got = await r.get();
    } catch (e) {
      if (this.#groupMeta.get(path) === r) this.#groupMeta.delete(path);
      throw e;
    }
    for (const meta of got.value.values()) if (!this.#revision.has(meta)) this.#revision.set(meta, got.stamp);
    this.#recorded.add(got.value);
    return got.value;
  }

  array(meta: NodeMeta): StoredArray {
    let a = this.#arrays.get(meta.path);
    if (!a || a.meta !== meta) {
      a = new StoredArray(meta, this.backend, this.cache, this.#revision.get(meta) ?? "");
      this.#arrays.set(meta.path, a);
    }
    return a;
  }

  /** Forecast group ids, the listing in hand at once (see ForecastGroups.ids). */
  forecastGroupIds(): Soon<string[]> {
    return this.#groups.ids();
  }

  /** A forecast group by id (forecast/<name>), at once when in hand (see ForecastGroups.group). */
  forecastGroup(id: string): Soon<ForecastGroup> {
    return this.#groups.group(id);
  }

  /** Every readable forecast group other than `except`, at once when all are in hand. */
  readableGroups(except?: string): Soon<ForecastGroup[]> {
    return this.#groups.readable(except);
  }

  /** The metadata a group was built from (what /data publishes beside it, never a newer read). */
  nodesOf(group: ForecastGroup): Map<string, NodeMeta> {
    return this.#groups.nodesOf(group);
  }

  /** Readable forecast groups; the unreadable ones are left out (see groupStatus for why). */
  forecastGroups(): Promise<ForecastGroup[]> {
    return this.#groups.all();
  }

  /** Every discovered group, readable or not, with the reason for each one that is not. */
  groupStatus(): Promise<GroupStatus[]> {
    return this.#groups.status();
  }

  /** Nodes that look like data but are no group gridcast serves, each with the reason (not-served.ts). */
  notServed(): Promise<NotServed[]> {
    return this.#groups.notServed();
  }

  /**
   * Embedding item paths below embeddings/, each "<family>/rf/<version>/base/<product>/<period>/<tile>".
   * Walks the tree once (listing or root consolidated metadata); callers cache the result.
   */
  async embeddingItemPaths(): Promise<string[]> {
    const out: string[] = [];
    const walk = async (prefix: string, depth: number): Promise<void> => {
      const kids = await this.children(`embeddings/${prefix}`.replace(/\/$/, ""));
      for (const k of kids) {
        const next = prefix ? `${prefix}/${k}` : k;
        if (depth === 6) out.push(next);
        else await walk(next, depth + 1);
      }
    };
    if ((await this.node("embeddings")) === undefined) return [];
    await walk("", 0);
    return out.sort();
  }

  /** Throws StoreUnavailableError unless the root holds Zarr metadata now. */
  async ping(): Promise<void> {
    const [v3, v2] = await Promise.all([this.backend.get("zarr.json"), this.backend.get(".zgroup")]);
    if (!v3 && !v2) throw new StoreUnavailableError("the store root holds no Zarr group");
  }

  /**
   * Revalidate all metadata at the next read, whatever checkMs says (after a publish, say). Cached
   * chunks need no flush: their keys carry the metadata revision and the stored object's version.
   */
  refresh(): void {
    this.#root.expire();
    for (const r of this.#groupMeta.values()) r.expire();
    this.#groups.expire();
  }

  /** Raw stored bytes of one key (for pass-through publishing); undefined when absent. */
  async rawBytes(key: string): Promise<Uint8Array | undefined> {
    try {
      return await this.backend.get(confineKey(key));
    } catch (e) {
      if (e instanceof GridcastError) throw e;
      throw new StoreUnavailableError("the store cannot be read right now", {}, { cause: e });
    }
  }
}

export type { StoredArray } from "./array.ts";
export type { ForecastGroup, GroupVariable } from "./forecast-group.ts";
export type { GroupStatus } from "./groups.ts";
export { type Grid, storedLongitudes } from "./lat-lon-grid.ts";
export type { NodeMeta } from "./metadata.ts";
