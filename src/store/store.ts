// The store facade: the only entry point the rest of gridcast uses to reach Zarr data. It opens a
// directory or http(s) root, discovers forecast groups and embedding items, hands out StoredArrays
// that share one decoded-chunk cache, and counts every read.

import { createHash } from "node:crypto";
import { GridcastError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import { registry as defaultRegistry, type Registry } from "../registry/registry.ts";
import { type Chunk, StoredArray } from "./array.ts";
import type { Backend } from "./backend.ts";
import { ChunkCache } from "./chunk-cache.ts";
import { type CountingBackend, openBackend, type Recording, recording } from "./counting-backend.ts";
import { roleOf } from "./dims.ts";
import { rootGroupName } from "./discovery.ts";
import { buildForecastGroup, type ForecastGroup, GroupUnreadableError } from "./forecast-group.ts";
import { confineKey } from "./keys.ts";
import { childrenFrom, type NodeMeta, readConsolidated, readNode } from "./metadata.ts";
import { Revalidated, type Stamped } from "./revalidate.ts";
import { giveBytes } from "./scan-buffers.ts";

export interface StoreOptions {
  cacheMb?: number;
  /** Per-read timeout of http(s) stores. */
  timeoutMs?: number;
  registry?: Registry;
  /** Milliseconds metadata is trusted before it is revalidated (default METADATA_CHECK_MS). */
  checkMs?: number;
  /** Name of the forecast group found at the store root (default: the store directory's name). */
  rootGroupName?: string;
  /** Where a group that cannot be read is reported (once per failure), e.g. the server's log. */
  log?: (entry: Record<string, unknown>) => void;
}

/** One group as discovery found it: readable, or skipped with the reason. */
export interface GroupStatus {
  id: string;
  /** Path in the store ("" for the root). */
  path: string;
  ok: boolean;
  reason?: string;
}

const GROUP_LIST_TTL_MS = 2000;
/** How long the answer to "is the root itself a dataset?" is kept. */
const ROOT_KIND_TTL_MS = 30_000;
/** How long group metadata is trusted before its documents are checked for a new cycle. */
export const METADATA_CHECK_MS = 2000;
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

interface GroupEntry {
  nodes: Map<string, NodeMeta>;
  group: Promise<ForecastGroup>;
  /** How `group` ended, once it has. */
  settled?: { group: ForecastGroup } | { error: unknown };
}

export class Store {
  readonly root: string;
  readonly backend: CountingBackend;
  readonly cache: ChunkCache<Chunk & { byteLength: number }>;
  readonly registry: Registry;
  readonly checkMs: number;
  #root: Revalidated<Map<string, NodeMeta>>;
  #groups = new Map<string, GroupEntry>();
  #groupMeta = new Map<string, Revalidated<Map<string, NodeMeta>>>();
  /** Metadata revision each node was read under: part of its arrays' chunk cache keys. */
  #revision = new WeakMap<NodeMeta, string>();
  #arrays = new Map<string, StoredArray>();
  #nodesOf = new WeakMap<ForecastGroup, Map<string, NodeMeta>>();
  #groupIds: Promise<string[]> | undefined;
  /** What #groupIds resolved to, once it has (for the answers that cannot wait). */
  #groupIdsSettled: { of: Promise<string[]>; ids: string[] } | undefined;
  #groupIdsAt = 0;
  /** Store path of each discovered group id. */
  #paths = new Map<string, string>();
  #rootKind: { at: number; p: Promise<boolean> } | undefined;
  readonly #rootName: string;
  readonly #log: ((entry: Record<string, unknown>) => void) | undefined;

  constructor(root: string, opts: StoreOptions = {}) {
    this.root = root;
    this.backend = openBackend(root, opts.timeoutMs);
    // Dropped chunks' buffers go back to the shared pool, where the next decode of that size finds
    // memory already paged in (only buffers the pool lent are taken back; zarrita's are left).
    this.cache = new ChunkCache((opts.cacheMb ?? 256) * 1024 * 1024, (c) => giveBytes(c.data));
    this.registry = opts.registry ?? defaultRegistry;
    this.checkMs = opts.checkMs ?? METADATA_CHECK_MS;
    this.#rootName = rootGroupName(root, opts.rootGroupName);
    this.#log = opts.log;
    this.#root = this.#revalidated(async (rb) => (await readConsolidated(rb, "")) ?? new Map<string, NodeMeta>());
  }

  #revalidated(load: (rb: Backend) => Promise<Map<string, NodeMeta>>): Revalidated<Map<string, NodeMeta>> {
    return new Revalidated(
      (touch) => load(recording(this.backend, touch)),
      (keys) => this.#stamp(keys),
      this.checkMs,
    );
  }

  /** Versions of metadata documents: a stat each on disk, a hash of each document over HTTP. */
  async #stamp(keys: string[]): Promise<string> {
    const b = this.backend;
    const parts = await Promise.all(
      keys.map(async (k) => {
        if (b.stamp) return (await b.stamp(k)) ?? "-";
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
   * for checkMs, then revalidated against the documents it was read from.
   */
  async groupNodes(path: string): Promise<Map<string, NodeMeta>> {
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

  /**
   * Forecast group ids: every group below forecast/, plus the dataset at the store root when the
   * root itself is one (as xarray's to_zarr(path) and dynamical.org/ARCO stores are, or a store
   * opened at one group's own directory). Every /point asks (to look for patches), so the listing
   * is kept for GROUP_LIST_TTL_MS: a group added by a new cycle shows up within that time.
   */
  forecastGroupIds(): Promise<string[]> {
    const now = Date.now();
    if (!this.#groupIds || now - this.#groupIdsAt > GROUP_LIST_TTL_MS) {
      this.#groupIdsAt = now;
      const p = this.#discover();
      this.#groupIds = p;
      p.then(
        (ids) => {
          if (this.#groupIds === p) this.#groupIdsSettled = { of: p, ids };
        },
        () => {
          if (this.#groupIds === p) this.#groupIds = undefined;
        },
      );
    }
    return this.#groupIds;
  }

  /**
   * The answer forecastGroupIds() would give, when it is in hand: undefined when the listing has
   * to be read (first call, or older than GROUP_LIST_TTL_MS; the read is started as by
   * forecastGroupIds). The /point path asks this first so a warm request does not wait on a
   * chain of promises for answers that are already known.
   */
  forecastGroupIdsNow(): string[] | undefined {
    const p = this.forecastGroupIds();
    const s = this.#groupIdsSettled;
    return s !== undefined && s.of === p ? s.ids : undefined;
  }

  async #discover(): Promise<string[]> {
    const paths = new Map<string, string>();
    const forecast = await this.node("forecast");
    if (forecast?.kind === "group") {
      for (const n of await this.children("forecast"))
        if (GROUP_NAME.test(n)) paths.set(`forecast/${n}`, `forecast/${n}`);
    }
    if (await this.#rootIsDataset()) {
      let id = `forecast/${this.#rootName}`;
      if (paths.has(id)) id = `forecast/${this.#rootName.slice(0, 59)}-root`;
      paths.set(id, "");
    }
    for (const [id, path] of paths) this.#paths.set(id, path);
    return [...paths.keys()].sort();
  }

  /**
   * The root holds latitude and longitude arrays of its own: it is a dataset, not a container.
   * What a root is changes far less often than the groups below it, so the answer is kept longer.
   */
  #rootIsDataset(): Promise<boolean> {
    const now = Date.now();
    if (!this.#rootKind || now - this.#rootKind.at > ROOT_KIND_TTL_MS) {
      const p = this.#probeRoot();
      p.catch(() => {
        if (this.#rootKind?.p === p) this.#rootKind = undefined;
      });
      this.#rootKind = { at: now, p };
    }
    return this.#rootKind.p;
  }

  async #probeRoot(): Promise<boolean> {
    let names: string[];
    try {
      names = await this.children("");
    } catch (e) {
      if (!(e instanceof StoreUnavailableError)) throw e;
      // Unlistable and not consolidated: probe the usual spellings.
      names = [];
      for (const n of ["latitude", "lat", "longitude", "lon"]) if (await this.node(n)) names.push(n);
    }
    const roles = new Set(names.map((n) => roleOf(n)));
    if (!roles.has("lat") || !roles.has("lon")) return false;
    const root = await this.node("");
    return root?.kind === "group";
  }

  /**
   * A forecast group by id (forecast/<name>); NotFoundError when absent, StoreUnavailableError when
   * unreadable. Rebuilt when its metadata changes; a group whose metadata gridcast cannot use stays
   * refused (and is logged once) until its metadata changes.
   */
  async forecastGroup(id: string): Promise<ForecastGroup> {
    const m = /^forecast\/(.+)$/.exec(id);
    if (!m || !GROUP_NAME.test(m[1])) throw new NotFoundError(`no forecast group "${id}"`);
    if (!this.#paths.has(id)) await this.forecastGroupIds();
    // Not listed (an unlistable HTTP store without it in the root's consolidated metadata): try the id.
    const path = this.#paths.get(id) ?? id;
    let nodes: Map<string, NodeMeta>;
    try {
      nodes = await this.groupNodes(path);
    } catch (e) {
      if (e instanceof NotFoundError) throw new NotFoundError(`no forecast group "${id}"`);
      throw e;
    }
    const known = this.#groups.get(id);
    if (known?.nodes === nodes) return known.group;
    const self = nodes.get(path)!;
    const arrays = new Map<string, StoredArray>();
    const prefix = path === "" ? "" : `${path}/`;
    for (const [p, meta] of nodes) {
      if (meta.kind !== "array" || !p.startsWith(prefix)) continue;
      const rel = p.slice(prefix.length);
      if (rel !== "" && !rel.includes("/")) arrays.set(rel, this.array(meta));
    }
    const group = (async () => {
      const g = await buildForecastGroup({ id, path, format: self.format, attrs: self.attrs, arrays }, this.registry);
      this.#nodesOf.set(g, nodes);
      return g;
    })();
    const entry: GroupEntry = { nodes, group };
    group.then(
      (g) => {
        entry.settled = { group: g };
      },
      (e: unknown) => {
        entry.settled = { error: e };
        if (e instanceof GroupUnreadableError) {
          this.#log?.({ level: "warn", event: "forecast_group_unreadable", group: id, reason: e.message });
        } else if (this.#groups.get(id) === entry) {
          // An outage of the store is retried at the next request.
          this.#groups.delete(id);
        }
      },
    );
    this.#groups.set(id, entry);
    return group;
  }

  /**
   * What forecastGroup(id) would answer right now, when that needs no waiting: the group, or the
   * error it would throw (a group whose metadata gridcast cannot use). Undefined when the answer
   * needs I/O (first read, a listing or rebuild under way): then await forecastGroup. Starts the
   * same background revalidation of the group's metadata as forecastGroup does.
   */
  forecastGroupNow(id: string): { group: ForecastGroup } | { error: unknown } | undefined {
    const path = this.#paths.get(id);
    if (path === undefined) return undefined;
    const nodes = this.#groupMeta.get(path)?.peek();
    if (!nodes) return undefined;
    const known = this.#groups.get(id);
    // Built from the metadata in hand, as forecastGroup would find it.
    return known?.nodes === nodes.value ? known.settled : undefined;
  }

  /**
   * Every readable forecast group other than `except`, when all are known without waiting (ids in
   * listing order); undefined when any answer needs I/O.
   */
  readableGroupsNow(except?: string): ForecastGroup[] | undefined {
    const ids = this.forecastGroupIdsNow();
    if (!ids) return undefined;
    const out: ForecastGroup[] = [];
    for (const id of ids) {
      if (id === except) continue;
      const s = this.forecastGroupNow(id);
      if (!s) return undefined;
      if ("group" in s) out.push(s.group);
    }
    return out;
  }

  /** The metadata a group was built from (what /data publishes beside it, never a newer read). */
  nodesOf(group: ForecastGroup): Map<string, NodeMeta> {
    const nodes = this.#nodesOf.get(group);
    if (!nodes) throw new Error(`group ${group.id} was not built by this store`);
    return nodes;
  }

  /** Readable forecast groups; the unreadable ones are left out (see groupStatus for why). */
  async forecastGroups(): Promise<ForecastGroup[]> {
    const out: ForecastGroup[] = [];
    for (const id of await this.forecastGroupIds()) {
      try {
        out.push(await this.forecastGroup(id));
      } catch (e) {
        if (!(e instanceof GridcastError)) throw e;
      }
    }
    return out;
  }

  /** Every discovered group, readable or not, with the reason for each one that is not. */
  async groupStatus(): Promise<GroupStatus[]> {
    const out: GroupStatus[] = [];
    for (const id of await this.forecastGroupIds()) {
      const path = this.#paths.get(id) ?? id;
      try {
        await this.forecastGroup(id);
        out.push({ id, path, ok: true });
      } catch (e) {
        if (!(e instanceof GridcastError)) throw e;
        out.push({ id, path, ok: false, reason: e.message });
      }
    }
    return out;
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
    this.#groupIds = undefined;
    this.#rootKind = undefined;
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
export type { ForecastGroup, Grid, GroupVariable } from "./forecast-group.ts";
export { storedLongitudes } from "./forecast-group.ts";
export type { NodeMeta } from "./metadata.ts";
