// Where a chunk lives in the store: the key of the stored object under the array's chunk key
// encoding, and for sharded arrays the key of the shard that holds the (inner) chunk.
import type { NodeMeta } from "./metadata.ts";

/** Key of the stored object (chunk, or shard) holding the chunk at `coords` of an array. */
export function storageKeyOf(meta: NodeMeta): (coords: number[]) => string {
  const encode = encodingOf(meta);
  const outer = shardShape(meta);
  if (!outer) return encode;
  const inner = meta.array?.chunks ?? [];
  return (c) => encode(c.map((v, d) => Math.floor((v * inner[d]) / outer[d])));
}

/** Key of the stored object at `coords` under the array's own chunk key encoding (no sharding). */
export function encodingOf(meta: NodeMeta): (coords: number[]) => string {
  if (meta.format === 2) {
    const sep = meta.raw[".zarray"]?.dimension_separator === "/" ? "/" : ".";
    return (c) => `${meta.path}/${c.length ? c.join(sep) : "0"}`;
  }
  const enc = (meta.raw["zarr.json"]?.chunk_key_encoding ?? {}) as {
    name?: string;
    configuration?: { separator?: string };
  };
  if (enc.name === "v2") {
    const sep = enc.configuration?.separator ?? ".";
    return (c) => `${meta.path}/${c.length ? c.join(sep) : "0"}`;
  }
  const sep = enc.configuration?.separator ?? "/";
  return (c) => `${meta.path}/${["c", ...c].join(sep)}`;
}

/** The shard shape of a sharded v3 array; undefined when chunks are stored one per object. */
function shardShape(meta: NodeMeta): number[] | undefined {
  const doc = meta.raw["zarr.json"] as
    | { codecs?: { name?: string }[]; chunk_grid?: { configuration?: { chunk_shape?: number[] } } }
    | undefined;
  if (!doc?.codecs?.some((c) => c.name === "sharding_indexed")) return undefined;
  return doc.chunk_grid?.configuration?.chunk_shape;
}
