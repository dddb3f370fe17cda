// The store facade: the only entry point the rest of gridcast uses to reach Zarr data. It opens a
// directory or http(s) root, discovers forecast groups and embedding items, hands out StoredArrays
// that share one decoded-chunk cache, and counts every read.
import { GridcastError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import { registry as defaultRegistry, type Registry } from "../registry/registry.ts";
import { type Chunk, StoredArray } from "./array.ts";
import { type CountingBackend, openBackend } from "./backend.ts";
import { ChunkCache } from "./chunk-cache.ts";
import { buildForecastGroup, type ForecastGroup } from "./forecast-group.ts";
import { confineKey } from "./keys.ts";
import { childrenFrom, type NodeMeta, readConsolidated, readNode } from "./metadata.ts";

export interface StoreOptions {
  cacheMb?: number;
  /** Per-read timeout of http(s) stores. */
  timeoutMs?: number;
  registry?: Registry;
}

const GROUP_LIST_TTL_MS = 2000;
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

  constructor(root: string, opts: StoreOptions = {}) {
    this.root = root;
    this.backend = openBackend(root, opts.timeoutMs);
    this.cache = new ChunkCache((opts.cacheMb ?? 256) * 1024 * 1024);
    this.registry = opts.registry ?? defaultRegistry;
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
          const meta = root.get(`${path}/${child}`) ?? (await readNode(this.backend, `${path}/${child}`));
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
   * Forecast group ids. Every /point asks (to look for patches), so the listing is kept for
   * GROUP_LIST_TTL_MS: a group added by a new cycle shows up within that time, without a restart.
   */
  forecastGroupIds(): Promise<string[]> {
    const now = Date.now();
    if (!this.#groupIds || now - this.#groupIdsAt > GROUP_LIST_TTL_MS) {
      this.#groupIdsAt = now;
      this.#groupIds = this.children("forecast").then((names) =>
        names.filter((n) => GROUP_NAME.test(n)).map((n) => `forecast/${n}`),
      );
      this.#groupIds.catch(() => {
        this.#groupIds = undefined;
      });
    }
    return this.#groupIds;
  }

  /** A forecast group by id (forecast/<name>); NotFoundError when absent. */
  forecastGroup(id: string): Promise<ForecastGroup> {
    const m = /^forecast\/(.+)$/.exec(id);
    if (!m || !GROUP_NAME.test(m[1])) return Promise.reject(new NotFoundError(`no forecast group "${id}"`));
    let p = this.#groups.get(id);
    if (!p) {
      p = (async () => {
        let nodes: Map<string, NodeMeta>;
        try {
          nodes = await this.groupNodes(id);
        } catch (e) {
          if (e instanceof NotFoundError) throw new NotFoundError(`no forecast group "${id}"`);
          throw e;
        }
        const self = nodes.get(id)!;
        const arrays = new Map<string, StoredArray>();
        for (const [path, meta] of nodes) {
          if (meta.kind === "array" && path.lastIndexOf("/") === id.length) {
            arrays.set(path.slice(id.length + 1), this.array(meta));
          }
        }
        return buildForecastGroup({ id, format: self.format, attrs: self.attrs, arrays }, this.registry);
      })();
      p.catch(() => this.#groups.delete(id));
      this.#groups.set(id, p);
    }
    return p;
  }

  async forecastGroups(): Promise<ForecastGroup[]> {
    const ids = await this.forecastGroupIds();
    const out: ForecastGroup[] = [];
    for (const id of ids) {
      try {
        out.push(await this.forecastGroup(id));
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
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
