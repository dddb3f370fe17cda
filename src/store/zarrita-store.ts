// zarrita's view of a backend: the metadata documents gridcast already holds served from memory,
// shard indexes read where the array keeps them, and missing chunks told apart from a group that
// has gone.
import { StoreUnavailableError } from "../errors.ts";
import { type Backend, type RangeQuery, sliceWhole } from "./backend.ts";
import type { NodeMeta } from "./metadata.ts";

const encoder = new TextEncoder();

/**
 * zarrita's view of the backend: metadata documents we already hold are served from memory. With
 * `indexAtStart` (a sharded array whose shard index sits at the start of each shard, which zarrita
 * always reads from the end), the index is read from the start: zarrita asks for it as the last
 * bytes of the shard, the only suffix read it makes, and the offsets in the index count from the
 * start of the shard either way, so inner chunks are read where they are.
 */
export function zarritaStore(backend: Backend, known: Map<string, Uint8Array>, indexAtStart = false) {
  const rel = (key: string) => (key.startsWith("/") ? key.slice(1) : key);
  const metaKeys = [...known.keys()];
  return {
    async get(key: string) {
      const k = rel(key);
      const hit = known.get(k);
      if (hit) return hit;
      const got = await backend.get(k);
      // A missing chunk normally means "all fill value". If the array's own metadata has gone too,
      // the group was removed or replaced underneath us: that is an outage, not a field of NaN.
      if (got === undefined && metaKeys.length > 0) {
        const still = await Promise.all(metaKeys.map((m) => backend.get(m)));
        if (still.every((b) => b === undefined)) {
          throw new StoreUnavailableError("the forecast data is not available right now");
        }
      }
      return got;
    },
    // Sharded arrays read each shard's index and inner chunks by byte range.
    async getRange(key: string, asked: RangeQuery) {
      const range: RangeQuery =
        indexAtStart && "suffixLength" in asked ? { offset: 0, length: asked.suffixLength } : asked;
      if (backend.getRange) return backend.getRange(rel(key), range);
      const all = await backend.get(rel(key));
      return all && sliceWhole(backend, rel(key), all, range);
    },
  };
}

/**
 * The documents zarrita opens an array from. A v2 array without a fill value (`fill_value: null`,
 * as zarr 3 writes xarray's `_FillValue: None`) reads a chunk that is not stored as zeros, as
 * zarr-python 3 does: zarr 3 leaves out every chunk equal to that default when it writes (a
 * single-run `time` of 0, a precipitation field of 0 at lead 0), so 0 is what was written. zarr 2
 * reads whatever memory held there (numpy.empty) and always writes its chunks. The null stays in
 * NodeMeta: it means "no missing marker" to the CF decoder (cf.ts).
 */
export function metaDocuments(meta: NodeMeta): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [file, doc] of Object.entries(meta.raw)) {
    const key = meta.path === "" ? file : `${meta.path}/${file}`;
    const read = file === ".zarray" && doc.fill_value === null ? { ...doc, fill_value: 0 } : doc;
    out.set(key, encoder.encode(JSON.stringify(read)));
  }
  return out;
}

/** Whether a sharded v3 array keeps each shard's index at the start (index_location "start"). */
export function shardIndexAtStart(meta: NodeMeta): boolean {
  const sharding = meta.array?.codecs.find((c) => c.name === "sharding_indexed");
  const where = (sharding?.configuration as { index_location?: unknown } | undefined)?.index_location;
  return where === "start";
}
