// The forecast groups of a store: which there are (every group below forecast/, and the dataset at
// the root when the root is one), each built from its metadata and kept until that metadata
// changes, and which of them can be read. The Store façade (store.ts) answers through this; every
// answer in hand is given at once, so a warm /point finds its groups without a promise.
import { GridcastError, NotFoundError, StoreUnavailableError } from "../errors.ts";
import type { Registry } from "../registry/registry.ts";
import { isPending, type Soon, then } from "../soon.ts";
import type { StoredArray } from "./array.ts";
import { roleOf } from "./dims.ts";
import { disambiguatedName, urlSafeName } from "./discovery.ts";
import { buildForecastGroup, type ForecastGroup, GroupUnreadableError } from "./forecast-group.ts";
import type { NodeMeta } from "./metadata.ts";
import { type NotServed, surveyNotServed } from "./not-served.ts";

/** One group as discovery found it: readable, or skipped with the reason. */
export interface GroupStatus {
  id: string;
  /** Path in the store ("" for the root). */
  path: string;
  ok: boolean;
  reason?: string;
}

/** What the groups are read through: the Store's metadata and arrays. */
export interface GroupSource {
  readonly registry: Registry;
  /** Budget of one cell grid's tables, MiB (the cell_grid_mb setting). */
  readonly cellGridMb?: number;
  node(path: string): Promise<NodeMeta | undefined>;
  children(path: string): Promise<string[]>;
  groupNodes(path: string): Soon<Map<string, NodeMeta>>;
  array(meta: NodeMeta): StoredArray;
}

const GROUP_LIST_TTL_MS = 2000;
/** How long the answer to "is the root itself a dataset?" is kept. */
const ROOT_KIND_TTL_MS = 30_000;
/** x/y axis names that make a root a projected dataset without latitude/longitude arrays (UKV's). */
const PROJECTED_AXES: [string, string][] = [
  ["projection_x_coordinate", "projection_y_coordinate"],
  ["x", "y"],
];
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** At most this many root entries are looked at for a HEALPix grid mapping (a root of many arrays is no cell dataset). */
const ROOT_MAPPING_PROBE_MAX = 64;

interface GroupEntry {
  nodes: Map<string, NodeMeta>;
  group: Promise<ForecastGroup>;
  /** How `group` ended, once it has. */
  settled?: { group: ForecastGroup } | { error: unknown };
}

export class ForecastGroups {
  readonly #source: GroupSource;
  readonly #rootName: string;
  readonly #rootStored: string;
  readonly #log: ((entry: Record<string, unknown>) => void) | undefined;
  #groups = new Map<string, GroupEntry>();
  #nodesOf = new WeakMap<ForecastGroup, Map<string, NodeMeta>>();
  #ids: Promise<string[]> | undefined;
  /** What #ids resolved to, once it has. */
  #idsSettled: { of: Promise<string[]>; ids: string[] } | undefined;
  #idsAt = 0;
  /** Store path of each discovered group id. */
  #paths = new Map<string, string>();
  #rootKind: { at: number; p: Promise<boolean> } | undefined;
  #notServed: { at: number; p: Promise<NotServed[]> } | undefined;

  /**
   * `rootName` names the group found at the store root (`rootStored`: the root's own name as
   * stored, which may not be URL-safe); `log` hears of each unreadable group once.
   */
  constructor(
    source: GroupSource,
    rootName: string,
    log?: (entry: Record<string, unknown>) => void,
    rootStored = rootName,
  ) {
    this.#source = source;
    this.#rootName = rootName;
    this.#rootStored = rootStored;
    this.#log = log;
  }

  /**
   * Forecast group ids: every group below forecast/, plus the dataset at the store root when the
   * root itself is one (as xarray's to_zarr(path) and dynamical.org/ARCO stores are, or a store
   * opened at one group's own directory). Every /point asks (to look for patches), so the listing
   * is kept for GROUP_LIST_TTL_MS: a group added by a new cycle shows up within that time. The
   * listing in hand is answered at once; a first or expired one is read.
   */
  ids(): Soon<string[]> {
    const now = Date.now();
    if (!this.#ids || now - this.#idsAt > GROUP_LIST_TTL_MS) {
      this.#idsAt = now;
      const p = this.#discover();
      this.#ids = p;
      p.then(
        (ids) => {
          if (this.#ids === p) this.#idsSettled = { of: p, ids };
        },
        () => {
          if (this.#ids === p) this.#ids = undefined;
        },
      );
    }
    const s = this.#idsSettled;
    return s !== undefined && s.of === this.#ids ? s.ids : this.#ids;
  }

  async #discover(): Promise<string[]> {
    const paths = new Map<string, string>();
    const forecast = await this.#source.node("forecast");
    if (forecast?.kind === "group") {
      const children = await this.#source.children("forecast");
      // URL-safe names first, so a stored name that already is one keeps it as its id.
      for (const n of children) if (GROUP_NAME.test(n)) paths.set(`forecast/${n}`, `forecast/${n}`);
      for (const n of children) {
        if (GROUP_NAME.test(n)) continue;
        let id = `forecast/${urlSafeName(n)}`;
        if (paths.has(id)) id = `forecast/${disambiguatedName(n)}`;
        paths.set(id, `forecast/${n}`);
      }
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
      names = await this.#source.children("");
    } catch (e) {
      if (!(e instanceof StoreUnavailableError)) throw e;
      // Unlistable and not consolidated: probe the usual spellings.
      names = [];
      for (const n of ["latitude", "lat", "longitude", "lon"]) if (await this.#source.node(n)) names.push(n);
    }
    const roles = new Set(names.map((n) => roleOf(n)));
    const projected = PROJECTED_AXES.some(([x, y]) => names.includes(x) && names.includes(y));
    // Per-cell coordinates of an unstructured grid count too (ICON's clat/clon, anemoi-datasets'
    // latitudes/longitudes), and raw WRF output's 2-D XLAT/XLONG; HEALPix stores hold none, only a
    // grid mapping saying so (EERIE's crs).
    const cellCoords = (a: string, b: string) => names.includes(a) && names.includes(b);
    const cells =
      cellCoords("clat", "clon") ||
      cellCoords("latitudes", "longitudes") ||
      cellCoords("XLAT", "XLONG") ||
      (await this.#healpixMapping(names));
    if (!projected && !cells && (!roles.has("lat") || !roles.has("lon"))) return false;
    const root = await this.#source.node("");
    return root?.kind === "group";
  }

  /** Whether a root entry is a scalar HEALPix grid mapping (grid_mapping_name "healpix"). */
  async #healpixMapping(names: string[]): Promise<boolean> {
    if (names.length > ROOT_MAPPING_PROBE_MAX) return false;
    for (const n of names) {
      if (roleOf(n)) continue;
      const meta = await this.#source.node(n);
      if (meta?.kind === "array" && meta.array?.shape.length === 0 && meta.attrs.grid_mapping_name === "healpix") {
        return true;
      }
    }
    return false;
  }

  /**
   * A forecast group by id (forecast/<name>); NotFoundError when absent, StoreUnavailableError when
   * unreadable. Rebuilt when its metadata changes; a group whose metadata gridcast cannot use stays
   * refused (and is logged once) until its metadata changes. Answered at once (the group, or its
   * refusal thrown) when the group was built from the metadata in hand.
   */
  group(id: string): Soon<ForecastGroup> {
    const path = this.#paths.get(id);
    return path === undefined ? this.#unlisted(id) : this.#at(id, path);
  }

  /** A group not (yet) in the listing: listed first, else tried at the path its id names. */
  async #unlisted(id: string): Promise<ForecastGroup> {
    const m = /^forecast\/(.+)$/.exec(id);
    if (!m || !GROUP_NAME.test(m[1])) throw new NotFoundError(`no forecast group "${id}"`);
    await this.ids();
    // Not listed (an unlistable HTTP store without it in the root's consolidated metadata): try the id.
    return this.#at(id, this.#paths.get(id) ?? id);
  }

  #at(id: string, path: string): Soon<ForecastGroup> {
    const nodes = this.#source.groupNodes(path);
    if (!isPending(nodes)) return this.#built(id, path, nodes);
    return nodes.then(
      (n) => this.#built(id, path, n),
      (e: unknown) => {
        throw e instanceof NotFoundError ? new NotFoundError(`no forecast group "${id}"`) : e;
      },
    );
  }

  /** The group built from these nodes: the one in hand, else built now. */
  #built(id: string, path: string, nodes: Map<string, NodeMeta>): Soon<ForecastGroup> {
    const known = this.#groups.get(id);
    if (known?.nodes === nodes) {
      const s = known.settled;
      if (s === undefined) return known.group;
      if ("group" in s) return s.group;
      throw s.error;
    }
    const self = nodes.get(path)!;
    const arrays = new Map<string, StoredArray>();
    const prefix = path === "" ? "" : `${path}/`;
    for (const [p, meta] of nodes) {
      if (meta.kind !== "array" || !p.startsWith(prefix)) continue;
      const rel = p.slice(prefix.length);
      if (rel !== "" && !rel.includes("/")) arrays.set(rel, this.#source.array(meta));
    }
    const group = (async () => {
      const storedName = path === "" ? this.#rootStored : path.slice(path.lastIndexOf("/") + 1);
      const input = {
        id,
        path,
        storedName,
        format: self.format,
        attrs: self.attrs,
        arrays,
        cellGridMb: this.#source.cellGridMb,
      };
      const g = await buildForecastGroup(input, this.#source.registry);
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
   * Every readable forecast group other than `except`, in listing order; an unreadable one is left
   * out (it must not break an answer another group gives). Answered at once when every group is.
   */
  readable(except?: string): Soon<ForecastGroup[]> {
    return then(this.ids(), (ids) => this.#readable(ids, except, 0, []));
  }

  /** The readable groups of ids[from..] appended to `out`, one after the other. */
  #readable(ids: string[], except: string | undefined, from: number, out: ForecastGroup[]): Soon<ForecastGroup[]> {
    for (let i = from; i < ids.length; i++) {
      if (ids[i] === except) continue;
      let g: Soon<ForecastGroup>;
      try {
        g = this.group(ids[i]);
      } catch {
        continue;
      }
      if (isPending(g)) {
        const rest = () => this.#readable(ids, except, i + 1, out);
        return g.then((got) => {
          out.push(got);
          return rest();
        }, rest);
      }
      out.push(g);
    }
    return out;
  }

  /** The metadata a group was built from (what /data publishes beside it, never a newer read). */
  nodesOf(group: ForecastGroup): Map<string, NodeMeta> {
    const nodes = this.#nodesOf.get(group);
    if (!nodes) throw new Error(`group ${group.id} was not built by this store`);
    return nodes;
  }

  /** Readable forecast groups; the unreadable ones are left out (see status for why). */
  async all(): Promise<ForecastGroup[]> {
    const out: ForecastGroup[] = [];
    for (const id of await this.ids()) {
      try {
        out.push(await this.group(id));
      } catch (e) {
        if (!(e instanceof GridcastError)) throw e;
      }
    }
    return out;
  }

  /** Every discovered group, readable or not, with the reason for each one that is not. */
  async status(): Promise<GroupStatus[]> {
    const out: GroupStatus[] = [];
    for (const id of await this.ids()) {
      const path = this.#paths.get(id) ?? id;
      try {
        await this.group(id);
        out.push({ id, path, ok: true });
      } catch (e) {
        if (!(e instanceof GridcastError)) throw e;
        out.push({ id, path, ok: false, reason: e.message });
      }
    }
    return out;
  }

  /**
   * Nodes that look like data and are not served, each with the reason and the remedy
   * (not-served.ts: a bounded walk); kept as long as the root's kind.
   */
  notServed(): Promise<NotServed[]> {
    const now = Date.now();
    if (!this.#notServed || now - this.#notServed.at > ROOT_KIND_TTL_MS) {
      const p = (async () => {
        const ids = await this.ids();
        const groups = ids.map((id) => ({ id, path: this.#paths.get(id) ?? id }));
        return surveyNotServed(this.#source, groups, await this.#rootIsDataset());
      })();
      p.catch(() => {
        if (this.#notServed?.p === p) this.#notServed = undefined;
      });
      this.#notServed = { at: now, p };
    }
    return this.#notServed.p;
  }

  /** Read the listing and the root's kind again at the next ask. */
  expire(): void {
    this.#ids = undefined;
    this.#rootKind = undefined;
    this.#notServed = undefined;
  }
}
