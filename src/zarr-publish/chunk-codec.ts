// Bytes of a published chunk built from values: C order, the published endianness, then the
// published compressor. Used for re-encoded arrays, for coordinates and for the filled chunks the
// v2 view serves in place of chunks the store does not hold.
import { promisify } from "node:util";
import { constants, gzip, zstdCompress } from "node:zlib";
import type { Values, ValuesCtor } from "../store/typed-values.ts";
import type { Endian } from "./dtype.ts";
import type { Json } from "./zarr-json.ts";

export type { Values };

const zstdAsync = promisify(zstdCompress);
const gzipAsync = promisify(gzip);

function isCOrder(shape: number[], stride: number[]): boolean {
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    if (shape[d] > 1 && stride[d] !== acc) return false;
    acc *= shape[d];
  }
  return true;
}

/** The values of a decoded chunk in C order (a copy only when its strides are not C order). */
export function inCOrder(data: Values, shape: number[], stride: number[]): Values {
  if (isCOrder(shape, stride)) return data;
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new (data.constructor as ValuesCtor)(n);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let src = 0;
    for (let d = 0; d < shape.length; d++) src += idx[d] * stride[d];
    (out as Float64Array)[i] = (data as Float64Array)[src];
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** Raw bytes of C-order values in the given byte order (typed arrays are little endian here). */
export function valueBytes(values: Values, endian: Endian): Uint8Array {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  const size = values.BYTES_PER_ELEMENT;
  if (endian === "little" || size === 1) return bytes;
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i += size) {
    for (let k = 0; k < size; k++) out[i + k] = bytes[i + size - 1 - k];
  }
  return out;
}

/**
 * An uncompressed ("memcpyed") Blosc 1 frame: 16-byte header, then the bytes as they are. Any Blosc
 * decoder reads it; gridcast only writes these for filled chunks of blosc arrays.
 */
function bloscStored(bytes: Uint8Array, typesize: number): Uint8Array {
  const out = new Uint8Array(16 + bytes.length);
  const view = new DataView(out.buffer);
  out[0] = 2; // format version
  out[1] = 1; // compressor format version
  out[2] = 0x02; // flags: memcpyed, no shuffle
  out[3] = Math.min(255, typesize);
  view.setUint32(4, bytes.length, true); // nbytes
  view.setUint32(8, bytes.length, true); // blocksize
  view.setUint32(12, out.length, true); // cbytes
  out.set(bytes, 16);
  return out;
}

/** Apply a v2 compressor description (null: none) to raw chunk bytes. */
export async function compress(raw: Uint8Array, compressor: Json | null, typesize: number): Promise<Uint8Array> {
  if (!compressor) return raw;
  const level = typeof compressor.level === "number" ? compressor.level : 1;
  switch (compressor.id) {
    case "zstd":
      // The content size in the frame header is what numcodecs' Zstd needs to decode it.
      return zstdAsync(raw, {
        pledgedSrcSize: raw.byteLength,
        params: { [constants.ZSTD_c_compressionLevel]: level, [constants.ZSTD_c_checksumFlag]: 0 },
      });
    case "gzip":
      return gzipAsync(raw, { level });
    case "blosc":
      return bloscStored(raw, typesize);
    default:
      throw new Error(`cannot encode with ${String(compressor.id)}`);
  }
}
