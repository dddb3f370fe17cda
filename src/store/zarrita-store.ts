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
 * start of the shard either way, so inner chunks are read where they are. `onMissing` hears of
 * every chunk key the store does not have.
 */
export function zarritaStore(
  backend: Backend,
  known: Map<string, Uint8Array>,
  indexAtStart = false,
  onMissing?: (key: string) => void,
) {
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
      if (got === undefined) onMissing?.(k);
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

export function metaDocuments(meta: NodeMeta): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const [file, doc] of Object.entries(meta.raw)) {
    const key = meta.path === "" ? file : `${meta.path}/${file}`;
    out.set(key, encoder.encode(JSON.stringify(doc)));
  }
  return out;
}

/** Whether a sharded v3 array keeps each shard's index at the start (index_location "start"). */
export function shardIndexAtStart(meta: NodeMeta): boolean {
  const sharding = meta.array?.codecs.find((c) => c.name === "sharding_indexed");
  const where = (sharding?.configuration as { index_location?: unknown } | undefined)?.index_location;
  return where === "start";
}
