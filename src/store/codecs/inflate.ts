// Native one-shot decompressors for the streams inside a Blosc block and for whole chunks. Each
// is told the exact size to expect and refuses to produce more (maxOutputLength for zlib and
// zstd; an explicit size for LZ4), then checks that it produced exactly that much.
import { inflateSync, zstdDecompressSync } from "node:zlib";
import { uncompressSync } from "lz4-napi";
import { CodecInputError } from "./bound.ts";

function exactly(out: Uint8Array, size: number, what: string): Uint8Array {
  if (out.length !== size) throw new CodecInputError(`${what}: decoded ${out.length} bytes, expected ${size}`);
  return out;
}

function limited(what: string, run: () => Uint8Array, size: number): Uint8Array {
  try {
    return exactly(run(), size, what);
  } catch (e) {
    if (e instanceof CodecInputError) throw e;
    const code = (e as { code?: string }).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw new CodecInputError(`${what}: expands past ${size} bytes`);
    throw new CodecInputError(`${what}: ${(e as Error).message}`);
  }
}

let framing = Buffer.allocUnsafeSlow(1 << 16);

/** A raw LZ4 block (no frame, no size prefix) that must decode to exactly `size` bytes. */
export function lz4Block(src: Uint8Array, size: number): Uint8Array {
  // The binding reads the decoded size from a 4-byte little-endian prefix; we supply our own.
  // One growing buffer per thread holds prefix + block: no allocation per stream.
  if (framing.length < src.length + 4) framing = Buffer.allocUnsafeSlow(Math.max(src.length + 4, 2 * framing.length));
  const framed = framing.subarray(0, src.length + 4);
  framed.writeUInt32LE(size, 0);
  framed.set(src, 4);
  return limited("lz4", () => uncompressSync(framed), size);
}

export function zstdExact(src: Uint8Array, size: number): Uint8Array {
  return limited("zstd", () => zstdDecompressSync(src, { maxOutputLength: Math.max(size, 1) }), size);
}

export function zlibExact(src: Uint8Array, size: number): Uint8Array {
  return limited("zlib", () => inflateSync(src, { maxOutputLength: Math.max(size, 1) }), size);
}
