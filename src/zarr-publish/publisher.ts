// Every forecast group of a store published as a Zarr dataset (see dataset.ts), looked up by its
// id in the ~ form. Ids are checked against the store's group list before anything else is read;
// datasets are built once per decoded group, so a store refresh (new forecast cycle) rebuilds them.
import { GridcastError, NotFoundError } from "../errors.ts";
import { slashId, tildeId } from "../forecast/listing.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, Store } from "../store/store.ts";
import { ChunkBytes } from "./chunk-bytes.ts";
import { buildDataset, type PublishedDataset } from "./dataset.ts";
import { metadataDocuments } from "./documents.ts";
import { decodeKey, resolveKey } from "./keys.ts";

export interface StoreObject {
  kind: "metadata" | "chunk";
  bytes: Uint8Array;
}

interface Built {
  dataset: PublishedDataset;
  documents: Map<string, Uint8Array>;
}

export class Publisher {
  readonly store: Store;
  readonly chunks: ChunkBytes;
  #built = new WeakMap<ForecastGroup, Promise<Built>>();

  constructor(store: Store) {
    this.store = store;
    this.chunks = new ChunkBytes(store);
  }

  /**
   * Dataset ids (forecast~<name>) of every forecast group in the store: the store's own group
   * listing (refreshed every 2 s), so /data lists exactly the groups /point and exports see.
   */
  async datasetIds(): Promise<string[]> {
    return (await this.store.forecastGroupIds()).map(tildeId);
  }

  async dataset(id: string): Promise<Built> {
    if (!(await this.datasetIds()).includes(id)) throw new NotFoundError(`no dataset "${id}"`);
    const group = await this.store.forecastGroup(slashId(id));
    let built = this.#built.get(group);
    if (!built) {
      // The nodes the group was built from: a revalidation in between must not mix two cycles.
      built = Promise.resolve(this.store.nodesOf(group)).then(async (nodes) => {
        // A whole HEALPix grid's centres (the latitude/longitude arrays) computed without holding
        // the event loop, before the dataset, which takes them as they are, is built.
        await group.grid.cells?.centresReady();
        const dataset = buildDataset(id, group, nodes);
        return { dataset, documents: metadataDocuments(dataset) };
      });
      built.catch(() => this.#built.delete(group));
      this.#built.set(group, built);
    }
    return built;
  }

  /** One key of a dataset's store, as sent in the URL (still percent-encoded). */
  async get(id: string, rawKey: string): Promise<StoreObject> {
    const { dataset, documents } = await this.dataset(id);
    const key = decodeKey(rawKey);
    const target = key === undefined ? undefined : resolveKey(key, documents, dataset.arrays);
    if (!target) throw new NotFoundError("no such key in this Zarr store");
    if (target.kind === "metadata") return { kind: "metadata", bytes: target.bytes };
    return { kind: "chunk", bytes: await this.chunks.get(target.array, target.coords, target.view) };
  }

  /** What the dataset listing says about one dataset. */
  async summary(id: string) {
    const { dataset: ds } = await this.dataset(id);
    const g = ds.group;
    const vars = [...ds.arrays.values()].filter((a) => a.source.kind === "stored" && !a.auxiliary);
    // Only real dimensions: a 1-D coordinate on its own name (not latitude(cell)/longitude(cell) of
    // an unstructured grid), then any dimension an array has without such a coordinate.
    const dims: Record<string, number> = {};
    for (const a of ds.arrays.values())
      if (a.source.kind === "coordinate" && a.dims.length === 1 && a.dims[0] === a.name) dims[a.name] = a.shape[0];
    for (const a of ds.arrays.values()) for (const [i, d] of a.dims.entries()) dims[d] ??= a.shape[i];
    return {
      id,
      group: g.id,
      kind: g.grid.global ? "global" : "regional",
      title: typeof g.attrs.title === "string" ? g.attrs.title : null,
      dims,
      runs: g.runs.map(isoNoZone),
      lead_hours: g.leads,
      members: g.members ?? null,
      variables: vars.map((a) => ({
        name: a.name,
        stored: a.source.kind === "stored" ? a.source.array.path.split("/").pop() : a.name,
        dims: a.dims,
        shape: a.shape,
        chunks: a.chunks,
        dtype: a.dtype,
        chunk_bytes: a.encoding.passthrough ? "stored" : "re-encoded",
      })),
      skipped: ds.skipped,
      /** Arrays left out, with their CF description, so they are listed rather than lost. */
      unregistered: g.unregistered,
    };
  }

  /** Every readable dataset's summary, and the datasets that cannot be read, each with the reason. */
  async summaries() {
    const datasets = [];
    const unavailable: { id: string; reason: string }[] = [];
    for (const id of await this.datasetIds()) {
      try {
        datasets.push(await this.summary(id));
      } catch (e) {
        if (!(e instanceof GridcastError)) throw e;
        unavailable.push({ id, reason: e.message });
      }
    }
    return { datasets, unavailable };
  }
}

const publishers = new WeakMap<Store, Publisher>();

/** The publisher of a store (one per store, so caches are shared by all requests). */
export function publisherFor(store: Store): Publisher {
  let p = publishers.get(store);
  if (!p) {
    p = new Publisher(store);
    publishers.set(store, p);
  }
  return p;
}
