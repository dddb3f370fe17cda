// Variants of a sample store for the /data tests, made in code from the real sample: one array
// sharded, one with a crc32c checksum after zstd, one integer array whose v3 fill_value (0) differs
// from its CF _FillValue and that lacks a chunk. None of these codec chains has a v2 equivalent
// (or, for the fill case, the v2 view must serve the missing chunk), so they exercise re-encoding.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { zstdCompressSync, zstdDecompressSync } from "node:zlib";

interface ArrayDoc {
  shape: number[];
  fill_value: unknown;
  codecs: Record<string, unknown>[];
  chunk_grid: { configuration: { chunk_shape: number[] } };
}
interface GroupDoc {
  consolidated_metadata?: { metadata?: Record<string, ArrayDoc> };
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as Zarr v3's crc32c codec appends it (little endian). */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function withCrc(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + 4);
  out.set(bytes);
  new DataView(out.buffer).setUint32(bytes.length, crc32c(bytes), true);
  return out;
}

/** Rewrite an array's zarr.json and its entry in the group's consolidated metadata. */
function editMeta(store: string, array: string, edit: (doc: ArrayDoc) => void): ArrayDoc {
  const file = join(store, array, "zarr.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as ArrayDoc;
  edit(doc);
  writeFileSync(file, JSON.stringify(doc));
  const groupFile = join(store, dirname(array), "zarr.json");
  const group = JSON.parse(readFileSync(groupFile, "utf8")) as GroupDoc;
  const name = array.slice(array.lastIndexOf("/") + 1);
  if (group.consolidated_metadata?.metadata?.[name]) {
    group.consolidated_metadata.metadata[name] = doc;
    writeFileSync(groupFile, JSON.stringify(group));
  }
  return doc;
}

/** Every chunk file of a v3 array ("c/i/j/..." keys) → its bytes. */
function chunkFiles(store: string, array: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const walk = (rel: string) => {
    for (const name of readdirSync(join(store, array, rel))) {
      const sub = `${rel}/${name}`;
      if (statSync(join(store, array, sub)).isDirectory()) walk(sub);
      else out.set(sub, new Uint8Array(readFileSync(join(store, array, sub))));
    }
  };
  walk("c");
  return out;
}

/** Append a crc32c checksum to every chunk of a v3 array. */
export function addChecksums(store: string, array: string): void {
  for (const [key, bytes] of chunkFiles(store, array)) writeFileSync(join(store, array, key), withCrc(bytes));
  editMeta(store, array, (doc) => doc.codecs.push({ name: "crc32c" }));
}

/** Pack a v3 array's chunks into shards of `factor` chunks per dimension (index at the end, crc32c). */
export function shard(store: string, array: string, factor: number[]): void {
  const chunks = chunkFiles(store, array);
  let inner: number[] = [];
  let shape: number[] = [];
  const doc = editMeta(store, array, (d) => {
    inner = d.chunk_grid.configuration.chunk_shape;
    shape = d.shape;
    d.chunk_grid.configuration.chunk_shape = inner.map((c, i) => c * factor[i]);
    d.codecs = [
      {
        name: "sharding_indexed",
        configuration: {
          chunk_shape: inner,
          codecs: d.codecs,
          index_codecs: [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
          index_location: "end",
        },
      },
    ];
  });
  rmSync(join(store, array, "c"), { recursive: true });
  const shardShape: number[] = doc.chunk_grid.configuration.chunk_shape;
  const shardGrid = shape.map((s, i) => Math.ceil(s / shardShape[i]));
  const perShard = factor.reduce((a, b) => a * b, 1);
  const unravel = (flat: number[] | number, dims: number[]) => {
    const out: number[] = [];
    let f = flat as number;
    for (let d = dims.length - 1; d >= 0; d--) {
      out[d] = f % dims[d];
      f = Math.floor(f / dims[d]);
    }
    return out;
  };
  for (let s = 0; s < shardGrid.reduce((a, b) => a * b, 1); s++) {
    const sc = unravel(s, shardGrid);
    const parts: Uint8Array[] = [];
    const index = new DataView(new ArrayBuffer(perShard * 16));
    let offset = 0;
    for (let k = 0; k < perShard; k++) {
      const cc = unravel(k, factor).map((x, d) => sc[d] * factor[d] + x);
      const bytes = chunks.get(`c/${cc.join("/")}`);
      if (bytes) {
        index.setBigUint64(k * 16, BigInt(offset), true);
        index.setBigUint64(k * 16 + 8, BigInt(bytes.length), true);
        parts.push(bytes);
        offset += bytes.length;
      } else {
        index.setBigUint64(k * 16, 0xffffffffffffffffn, true);
        index.setBigUint64(k * 16 + 8, 0xffffffffffffffffn, true);
      }
    }
    parts.push(withCrc(new Uint8Array(index.buffer)));
    const file = join(store, array, "c", ...sc.map(String));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, Buffer.concat(parts));
  }
}

/** Set a v3 array's fill_value and delete one of its chunks (readers then see the fill value there). */
export function fillAndDrop(store: string, array: string, fill: number, chunk: number[]): void {
  editMeta(store, array, (d) => {
    d.fill_value = fill;
  });
  rmSync(join(store, array, "c", ...chunk.map(String)));
}

/** The sample store with the three variants applied to forecast/global. */
export function recodedVariants(store: string): void {
  shard(store, "forecast/global/t2m", [2, 1, 2, 2]);
  addChecksums(store, "forecast/global/u10");
  // Run 1, first spatial block: the /point node of the xarray check lies in it.
  fillAndDrop(store, "forecast/global/tcc", 0, [1, 0, 0, 0]);
}

/**
 * Store a v2 group's latitude north to south by reversing its one zstd-compressed float64 chunk
 * (the data arrays stay as stored). /data publishes a south-to-north group north-up by re-encoding
 * every array along latitude, so only a north-to-south group serves its stored chunks unchanged.
 */
export function latNorthToSouth(store: string, group: string): void {
  const file = join(store, group, "lat/0");
  const raw = zstdDecompressSync(readFileSync(file));
  const lat = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8).slice().reverse();
  if (!(lat[0] > lat[lat.length - 1])) throw new Error(`${group}/lat was not stored south to north`);
  writeFileSync(file, zstdCompressSync(new Uint8Array(lat.buffer)));
}
