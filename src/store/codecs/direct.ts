// Decoding a stored chunk straight into a buffer the caller owns, for the codec chains producers
// write most (xarray/zarr-python's Blosc, Zstandard, or nothing after little-endian bytes; v2 in C
// order or v3 without sharding or transposition). Bulk reads use it with reused buffers; every
// other chain, and every other reader, goes through zarrita's pipeline with the codecs in
// register.ts. Either way a chunk must decode to exactly its shape's bytes, or it is refused.

import { nativeAddon } from "../../native.ts";
import type { NodeMeta } from "../metadata.ts";
import { TYPED_ARRAYS, type Values } from "../typed-values.ts";
import { decodeNative } from "./blosc.ts";
import { CodecInputError, decodedBound } from "./bound.ts";

// Chunks up to this size decode on the calling thread (as in blosc.ts and whole.ts).
const INLINE_BYTES = 128 * 1024;

export interface DirectDecoder {
  /** Bytes of one decoded chunk. */
  readonly bytes: number;
  /**
   * The chunk's bytes decoded into `into` (exactly `bytes` long), or, with no compressor, the
   * stored bytes themselves when they are aligned for the data type. Throws CodecInputError.
   */
  decode(stored: Uint8Array, into: () => Uint8Array): Promise<Uint8Array>;
  /** The chunk's values over decoded bytes. */
  values(decoded: Uint8Array): Values;
  /** How the addon's decodeRuns takes these chunks: 0 Blosc, 1 Zstandard, 2 stored as they are. */
  readonly runs: 0 | 1 | 2;
}

type Json = Record<string, unknown>;

/** A direct decoder for an array's chunks, or undefined when its chain needs zarrita's pipeline. */
export function directDecoder(meta: NodeMeta): DirectDecoder | undefined {
  const a = meta.array;
  if (!a || a.problem) return undefined;
  const Typed = TYPED_ARRAYS[a.dtype];
  const bytes = decodedBound({ dataType: a.dtype, shape: a.chunks });
  if (!Typed || bytes === undefined) return undefined;
  if (meta.format === 2 && (meta.raw[".zarray"] as Json | undefined)?.order !== "C") return undefined;
  const chain = a.codecs as Json[];
  const first = chain[0];
  const endian = (first?.configuration as Json | undefined)?.endian;
  if (first?.name !== "bytes" || (endian !== "little" && !(Typed.BYTES_PER_ELEMENT === 1 && endian === undefined))) {
    return undefined;
  }
  const width = Typed.BYTES_PER_ELEMENT;
  const values = (d: Uint8Array) => new Typed(d.buffer as ArrayBuffer, d.byteOffset, d.byteLength / width);
  if (chain.length === 1) {
    return {
      bytes,
      values,
      runs: 2,
      async decode(stored, into) {
        if (stored.length !== bytes)
          throw new CodecInputError(`stored chunk of ${stored.length} bytes, ${bytes} expected`);
        if (stored.byteOffset % width === 0) return stored;
        const out = into();
        out.set(stored);
        return out;
      },
    };
  }
  if (chain.length !== 2) return undefined;
  const name = String(chain[1].name).replace(/^numcodecs\./, "");
  const addon = nativeAddon();
  if (!addon) return undefined;
  if (name === "blosc") {
    return { bytes, values, runs: 0, decode: (stored, into) => decodeNative(addon, stored, bytes, into()) };
  }
  const zstd = addon.zstdDecode;
  const zstdSync = addon.zstdDecodeSync;
  if (name === "zstd" && zstd && zstdSync) {
    return {
      bytes,
      values,
      runs: 1,
      async decode(stored, into) {
        const out = into();
        const n = bytes <= INLINE_BYTES ? zstdSync(stored, out) : await zstd(stored, out);
        if (n !== bytes) {
          throw new CodecInputError(
            n < 0
              ? "zstd: the chunk cannot be decoded (corrupt, or larger than its shape)"
              : `zstd: decoded ${n} bytes (${n / width} values), the chunk shape holds ${bytes / width}`,
          );
        }
        return out;
      },
    };
  }
  return undefined;
}
