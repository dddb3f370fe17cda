// The 16-byte header of a Blosc (format 1/2) chunk and the block-start table after it, checked
// against the buffer and the caller's decoded-size bound before anything is read or allocated.
// Every offset the decoder later follows is validated here or at the point of use.
import { CodecInputError } from "./bound.ts";

export const HEADER_BYTES = 16;

export const FLAG_SHUFFLE = 0x1;
export const FLAG_MEMCPYED = 0x2;
export const FLAG_BITSHUFFLE = 0x4;
export const FLAG_DELTA = 0x8;
export const FLAG_DONT_SPLIT = 0x10;

/** Compressor codes of bits 5–7 of the flags byte. */
export const COMPRESSORS = ["blosclz", "lz4", "snappy", "zlib", "zstd"] as const;
export type Compressor = (typeof COMPRESSORS)[number];

export interface BloscHeader {
  version: number;
  flags: number;
  typesize: number;
  /** Decoded size. */
  nbytes: number;
  blocksize: number;
  /** Total compressed size, header included. */
  cbytes: number;
  compressor: Compressor | undefined;
  memcpyed: boolean;
  nblocks: number;
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/**
 * Parse and check a Blosc header. `bound` is the most the chunk may decode to; a header claiming
 * more is refused (a bound, not a trust in the header).
 */
export function parseBloscHeader(src: Uint8Array, bound: number): BloscHeader {
  if (src.length < HEADER_BYTES) throw new CodecInputError(`blosc: ${src.length} bytes is shorter than a header`);
  const version = src[0];
  const flags = src[2];
  const typesize = src[3];
  const nbytes = u32(src, 4);
  const blocksize = u32(src, 8);
  const cbytes = u32(src, 12);
  if (version < 1 || version > 2) throw new CodecInputError(`blosc: unsupported format version ${version}`);
  if (typesize === 0) throw new CodecInputError("blosc: type size 0");
  if (nbytes > bound) throw new CodecInputError(`blosc: header claims ${nbytes} bytes, the chunk holds ${bound}`);
  if (cbytes < HEADER_BYTES || cbytes > src.length) {
    throw new CodecInputError(`blosc: header claims ${cbytes} compressed bytes, the buffer has ${src.length}`);
  }
  const memcpyed = (flags & FLAG_MEMCPYED) !== 0;
  const compressor = COMPRESSORS[flags >> 5];
  if (nbytes === 0) {
    return { version, flags, typesize, nbytes, blocksize, cbytes, compressor, memcpyed, nblocks: 0 };
  }
  if (memcpyed) {
    if (HEADER_BYTES + nbytes > cbytes) throw new CodecInputError("blosc: stored chunk shorter than its size");
    return { version, flags, typesize, nbytes, blocksize, cbytes, compressor, memcpyed, nblocks: 0 };
  }
  if (blocksize === 0) throw new CodecInputError("blosc: block size 0");
  const nblocks = Math.ceil(nbytes / blocksize);
  if (HEADER_BYTES + 4 * nblocks > cbytes) throw new CodecInputError("blosc: block table runs past the chunk");
  return { version, flags, typesize, nbytes, blocksize, cbytes, compressor, memcpyed, nblocks };
}

/** Start offset of block `i`, checked to lie inside the compressed data after the table. */
export function blockStart(src: Uint8Array, h: BloscHeader, i: number): number {
  const at = u32(src, HEADER_BYTES + 4 * i);
  if (at < HEADER_BYTES + 4 * h.nblocks || at >= h.cbytes) {
    throw new CodecInputError(`blosc: block ${i} starts outside the chunk`);
  }
  return at;
}

/**
 * Called for each compressed stream of a block, in order: the block, its decoded size, the decoded
 * size of this stream (a block may be split into one stream per byte of the type), the stream's
 * index within the block, and where it starts and how long it is (both checked).
 */
export type StreamVisit = (
  block: number,
  bsize: number,
  neblock: number,
  split: number,
  at: number,
  csize: number,
) => void;

/**
 * Every compressed stream of a (not memcpyed) chunk in order, each start and length checked to
 * lie inside the chunk; a plain loop (a chunk has hundreds of streams). The built-in decoder
 * decodes each in `visit`; before a chunk goes to the native library, walking it once without a
 * visit proves the layout the library will follow stays inside the buffer.
 */
export function walkBloscStreams(src: Uint8Array, h: BloscHeader, visit?: StreamVisit): void {
  const leftover = h.nbytes % h.blocksize;
  for (let b = 0; b < h.nblocks; b++) {
    const last = b === h.nblocks - 1 && leftover !== 0;
    const bsize = last ? leftover : h.blocksize;
    const splits = (h.flags & FLAG_DONT_SPLIT) === 0 && !last ? h.typesize : 1;
    if (bsize % splits !== 0) throw new CodecInputError("blosc: block size is not a multiple of the type size");
    const neblock = bsize / splits;
    let at = blockStart(src, h, b);
    for (let s = 0; s < splits; s++) {
      if (at + 4 > h.cbytes) throw new CodecInputError(`blosc: block ${b} runs past the chunk`);
      const csize = u32(src, at);
      at += 4;
      if (csize > h.cbytes - at) throw new CodecInputError(`blosc: block ${b} runs past the chunk`);
      visit?.(b, bsize, neblock, s, at, csize);
      at += csize;
    }
  }
}

export { u32 as readU32 };
