// The store facade: the only entry point the rest of gridcast uses to reach Zarr data. It opens a
// directory or http(s) root, discovers forecast groups and embedding items, hands out StoredArrays
// that share one decoded-chunk cache, and counts every read.
import { GridcastError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import { registry as defaultRegistry, type Registry } from "../registry/registry.ts";
import { type Chunk, StoredArray } from "./array.ts";
import { type CountingBackend, openBackend } from "./backend.ts";
import { ChunkCache } from "./chunk-cache.ts";
import { roleOf } from "./dims.ts";
import { rootGroupName } from "./discovery.ts";
import { buildForecastGroup, type ForecastGroup, GroupUnreadableError } from "./forecast-group.ts";
import { confineKey } from "./keys.ts";
import { childrenFrom, type NodeMeta, readConsolidated, readNode } from "./metadata.ts";

export interface StoreOptions {
  cacheMb?: number;
  /** Per-read timeout of http(s) stores. */
  timeoutMs?: number;
  registry?: Registry;
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
/** How long a group whose metadata gridcast cannot use is remembered as such before a retry. */
const GROUP_FAILURE_TTL_MS = 5000;
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export class Store {
  readonly root: string;
  readonly backend: CountingBackend;
  readonly cache: ChunkCache<Chunk & { byteLength: number }>;
  readonly registry: Registry;
  #consolidated: Promise<Map<string, NodeMeta>> | undefined;
  #groups = new Map<string, Promise<ForecastGroup>>();
  #groupMeta = new Map<string, Promise<Map<string, NodeMeta>>>();
  #arrays = new Map<string, StoredArray>();
  #groupIds: Promise<string[]> | undefined;
  #groupIdsAt = 0;
  /** Store path of each discovered group id. */
  #paths = new Map<string, string>();
  #rootKind: { at: number; p: Promise<boolean> } | undefined;
  readonly #rootName: string;
  readonly #log: ((entry: Record<string, unknown>) => void) | undefined;

  constructor(root: string, opts: StoreOptions = {}) {
    this.root = root;
    this.backend = openBackend(root, opts.timeoutMs);
    this.cache = new ChunkCache((opts.cacheMb ?? 256) * 1024 * 1024);
    this.registry = opts.registry ?? defaultRegistry;
    this.#rootName = rootGroupName(root, opts.rootGroupName);
    this.#log = opts.log;
  }

  /** Consolidated metadata at the store root, if any (empty map when there is none). */
  #rootConsolidated(): Promise<Map<string, NodeMeta>> {
    this.#consolidated ??= readConsolidated(this.backend, "")
      .then((m) => m ?? new Map<string, NodeMeta>())
      .catch((e) => {
        this.#consolidated = undefined;
        throw e;
      });
    return this.#consolidated;
  }

  /** Metadata of one node (group or array), or undefined. */
  async node(path: string): Promise<NodeMeta | undefined> {
    const rel = confineKey(path);
    const known = (await this.#rootConsolidated()).get(rel);
    return known ?? readNode(this.backend, rel);
  }

  /** Names of the child nodes of a group. */
  async children(path: string): Promise<string[]> {
    const rel = confineKey(path);
    const names = new Set(childrenFrom(await this.#rootConsolidated(), rel));
    const listed = await this.backend.listDirs(rel);
    if (listed === undefined && names.size === 0) {
      throw new StoreUnavailableError("this store cannot be listed and has no consolidated metadata at its root");
    }
    for (const n of listed ?? []) names.add(n);
    return [...names].sort();
  }

  /** All metadata of a group and its direct children (consolidated when the group has it). */
  groupNodes(path: string): Promise<Map<string, NodeMeta>> {
    let p = this.#groupMeta.get(path);
    if (!p) {
      p = (async () => {
        const own = await readConsolidated(this.backend, path);
        if (own) return own;
        const root = await this.#rootConsolidated();
        const self = root.get(path) ?? (await readNode(this.backend, path));
        if (self?.kind !== "group") throw new NotFoundError(`no group ${path}`);
        const out = new Map<string, NodeMeta>([[path, self]]);
        for (const child of await this.children(path)) {
          const full = path === "" ? child : `${path}/${child}`;
          const meta = root.get(full) ?? (await readNode(this.backend, full));
          if (meta) out.set(meta.path, meta);
        }
        return out;
      })();
      p.catch(() => this.#groupMeta.delete(path));
      this.#groupMeta.set(path, p);
    }
    return p;
  }

  array(meta: NodeMeta): StoredArray {
    let a = this.#arrays.get(meta.path);
    if (!a || a.meta !== meta) {
      a = new StoredArray(meta, this.backend, this.cache);
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
      this.#groupIds = this.#discover();
      this.#groupIds.catch(() => {
        this.#groupIds = undefined;
      });
    }
    return this.#groupIds;
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

  /** A forecast group by id (forecast/<name>); NotFoundError when absent, StoreUnavailableError when unreadable. */
  async forecastGroup(id: string): Promise<ForecastGroup> {
    const m = /^forecast\/(.+)$/.exec(id);
    if (!m || !GROUP_NAME.test(m[1])) throw new NotFoundError(`no forecast group "${id}"`);
    let p = this.#groups.get(id);
    if (!p) {
      if (!this.#paths.has(id)) await this.forecastGroupIds();
      const path = this.#paths.get(id) ?? id;
      p = this.#open(id, path);
      this.#groups.set(id, p);
      p.catch((e: unknown) => {
        // A group whose metadata gridcast cannot use stays refused for a while (and is logged once);
        // an outage of the store is retried at once.
        if (e instanceof GroupUnreadableError) {
          this.#log?.({ level: "warn", event: "forecast_group_unreadable", group: id, reason: e.message });
          setTimeout(() => {
            if (this.#groups.get(id) === p) this.#groups.delete(id);
          }, GROUP_FAILURE_TTL_MS).unref();
        } else if (this.#groups.get(id) === p) this.#groups.delete(id);
      });
    }
    return p;
  }

  async #open(id: string, path: string): Promise<ForecastGroup> {
    let nodes: Map<string, NodeMeta>;
    try {
      nodes = await this.groupNodes(path);
    } catch (e) {
      if (e instanceof NotFoundError) throw new NotFoundError(`no forecast group "${id}"`);
      throw e;
    }
    const self = nodes.get(path)!;
    const arrays = new Map<string, StoredArray>();
    const prefix = path === "" ? "" : `${path}/`;
    for (const [p, meta] of nodes) {
      if (meta.kind !== "array" || !p.startsWith(prefix)) continue;
      const rel = p.slice(prefix.length);
      if (rel !== "" && !rel.includes("/")) arrays.set(rel, this.array(meta));
    }
    return buildForecastGroup({ id, path, format: self.format, attrs: self.attrs, arrays }, this.registry);
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

  /** Forget discovered metadata, e.g. after the store was rewritten by a new forecast cycle. */
  refresh(): void {
    this.#consolidated = undefined;
    this.#groups.clear();
    this.#groupIds = undefined;
    this.#groupMeta.clear();
    this.#arrays.clear();
    this.#paths.clear();
    this.#rootKind = undefined;
    this.cache.invalidate();
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
export type { NodeMeta } from "./metadata.ts";
