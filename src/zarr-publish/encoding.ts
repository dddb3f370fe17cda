// How a stored array's chunks are published. When the stored codec chain is one both formats can
// describe — bytes (either endian) plus at most one of zstd, gzip, blosc — the stored chunk bytes
// are served unchanged under both views. Anything else (sharding, crc32c, transpose, filters,
// Fortran order, codecs numcodecs lacks) is decoded by the store layer and re-encoded as
// little-endian C-order bytes through zstd.
import type { NodeMeta } from "../store/store.ts";
import { type Endian, itemSize } from "./dtype.ts";
import type { Json } from "./zarr-json.ts";

/** zstd level of re-encoded chunks: fast to write, still a fair ratio for smooth fields. */
export const REENCODE_ZSTD_LEVEL = 3;

export interface Encoding {
  /** Stored chunk bytes are served unchanged. */
  passthrough: boolean;
  /** Why chunks are re-encoded (undefined when they pass through). */
  reason?: string;
  endian: Endian;
  /** .zarray "compressor" (null: none). */
  v2Compressor: Json | null;
  /** zarr.json "codecs". */
  v3Codecs: Json[];
}

const PASSABLE = new Set(["zstd", "gzip", "blosc"]);
const SHUFFLE_NAMES = ["noshuffle", "shuffle", "bitshuffle"];

function num(v: unknown, fallback: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/** The same compressor as a v2 compressor object and a v3 codec, minus params one side lacks. */
function compressorViews(name: string, cfg: Json, dtype: string): { v2: Json; v3: Json } {
  if (name === "zstd") {
    const level = num(cfg.level, 1);
    // A frame written with a checksum still carries it; the v2 side has no flag for it.
    return {
      v2: { id: "zstd", level },
      v3: { name: "zstd", configuration: { level, checksum: cfg.checksum === true } },
    };
  }
  if (name === "gzip") {
    const level = num(cfg.level, 1);
    return { v2: { id: "gzip", level }, v3: { name: "gzip", configuration: { level } } };
  }
  // blosc: v3 spells shuffle as a word and adds typesize; v2 uses numbers (-1 = auto by item size).
  const size = itemSize(dtype);
  let shuffle = cfg.shuffle;
  if (typeof shuffle === "number") {
    shuffle = shuffle === -1 ? (size === 1 ? "bitshuffle" : "shuffle") : (SHUFFLE_NAMES[shuffle] ?? "noshuffle");
  }
  const word = SHUFFLE_NAMES.includes(String(shuffle)) ? String(shuffle) : "noshuffle";
  const cname = typeof cfg.cname === "string" ? cfg.cname : "lz4";
  const clevel = num(cfg.clevel, 5);
  const blocksize = num(cfg.blocksize, 0);
  return {
    v2: { id: "blosc", cname, clevel, shuffle: SHUFFLE_NAMES.indexOf(word), blocksize },
    v3: { name: "blosc", configuration: { cname, clevel, shuffle: word, typesize: size, blocksize } },
  };
}

/** Chunks decoded by the store layer and re-encoded as little-endian C-order bytes through zstd. */
export function reencoded(reason: string): Encoding {
  const z = compressorViews("zstd", { level: REENCODE_ZSTD_LEVEL }, "uint8");
  return {
    passthrough: false,
    reason,
    endian: "little",
    v2Compressor: z.v2,
    v3Codecs: [{ name: "bytes", configuration: { endian: "little" } }, z.v3],
  };
}

export function planEncoding(meta: NodeMeta): Encoding {
  const a = meta.array!;
  if (meta.format === 2 && meta.raw[".zarray"]?.order === "F") return reencoded("Fortran order");
  const chain = a.codecs;
  const first = chain[0];
  if (first?.name !== "bytes") return reencoded(`codec ${String(first?.name ?? "none")}`);
  const cfg = (first.configuration ?? {}) as Json;
  const endian: Endian = cfg.endian === "big" ? "big" : "little";
  const rest = chain.slice(1);
  if (rest.length > 1) return reencoded("several bytes-to-bytes codecs");
  if (rest.length === 0) {
    return { passthrough: true, endian, v2Compressor: null, v3Codecs: [{ name: "bytes", configuration: { endian } }] };
  }
  const c = rest[0];
  const name = String(c.name);
  if (!PASSABLE.has(name)) return reencoded(`codec ${name}`);
  const views = compressorViews(name, (c.configuration ?? {}) as Json, a.dtype);
  return {
    passthrough: true,
    endian,
    v2Compressor: views.v2,
    v3Codecs: [{ name: "bytes", configuration: { endian } }, views.v3],
  };
}
