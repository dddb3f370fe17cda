// Decode a Blosc (format 1/2) chunk natively: LZ4, Zstandard and zlib streams through native
// code, byte and bit shuffle in place. Other compressors (blosclz, snappy) and Blosc's delta
// filter are reported as unsupported so the caller can hand the chunk to the WebAssembly codec
// — after this module has checked the header against the bound.
import { bitunshuffle } from "./bitunshuffle.ts";
import {
  FLAG_BITSHUFFLE,
  FLAG_DELTA,
  FLAG_SHUFFLE,
  HEADER_BYTES,
  parseBloscHeader,
  walkBloscStreams,
} from "./blosc-header.ts";
import { lz4Block, zlibExact, zstdExact } from "./inflate.ts";
import { unshuffle } from "./unshuffle.ts";

/** Returned (not thrown) when the chunk is well-formed but needs the fallback codec. */
export const UNSUPPORTED = Symbol("blosc-unsupported");

const STREAM = {
  lz4: lz4Block,
  zstd: zstdExact,
  zlib: zlibExact,
} as const;

// Shuffled blocks decompress here first; one buffer per thread, grown to the largest block seen.
let scratchBuf = new Uint8Array(0);
function scratchOf(n: number): Uint8Array {
  if (scratchBuf.length < n) scratchBuf = new Uint8Array(n);
  return scratchBuf;
}

export function decodeBlosc(src: Uint8Array, bound: number): Uint8Array | typeof UNSUPPORTED {
  const h = parseBloscHeader(src, bound);
  if (h.nbytes === 0) return new Uint8Array(0);
  // Not zero-filled: every path below writes each byte or throws (exact-size checks per stream).
  const out = new Uint8Array(Buffer.allocUnsafeSlow(h.nbytes).buffer, 0, h.nbytes);
  if (h.memcpyed) {
    out.set(src.subarray(HEADER_BYTES, HEADER_BYTES + h.nbytes));
    return out;
  }
  if ((h.flags & FLAG_DELTA) !== 0 || h.compressor === undefined) return UNSUPPORTED;
  if (h.compressor !== "lz4" && h.compressor !== "zstd" && h.compressor !== "zlib") return UNSUPPORTED;
  const inflate = STREAM[h.compressor];
  const shuffled = (h.flags & (FLAG_SHUFFLE | FLAG_BITSHUFFLE)) !== 0;
  const scratch = shuffled ? scratchOf(Math.min(h.blocksize, h.nbytes)) : undefined;
  // Streams come block by block; a shuffled block is unshuffled once its last stream is in.
  walkBloscStreams(src, h, (block, bsize, neblock, split, at, csize) => {
    const dest = out.subarray(block * h.blocksize, block * h.blocksize + bsize);
    const target = scratch ? scratch.subarray(0, bsize) : dest;
    const stream = src.subarray(at, at + csize);
    const piece = target.subarray(split * neblock, (split + 1) * neblock);
    // A stream exactly as long as its decoded size was stored uncompressed.
    if (csize === neblock) piece.set(stream);
    else piece.set(inflate(stream, neblock));
    if (scratch && (split + 1) * neblock === bsize) {
      if ((h.flags & FLAG_SHUFFLE) !== 0) unshuffle(target, dest, h.typesize);
      else bitunshuffle(target, dest, h.typesize, h.version);
    }
  });
  return out;
}
