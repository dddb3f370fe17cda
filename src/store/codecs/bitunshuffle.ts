// Undo the bit shuffle Blosc applies to one block. For groups of 8 elements the block holds
// typesize×8 bit rows, row (byte j, bit k) carrying bit k of byte j of every element, 8 elements
// a byte, lowest bit first. Elements past the last multiple of 8 are stored as they are.

export function bitunshuffle(src: Uint8Array, dst: Uint8Array, typesize: number, formatVersion: number): void {
  const size = src.length;
  const n = Math.floor(size / typesize);
  // Blosc format 2 writers left a block whose element count is not a multiple of 8 unshuffled.
  const nb = formatVersion === 2 && n % 8 !== 0 ? 0 : n - (n % 8);
  const rowLen = nb >> 3;
  for (let j = 0; j < typesize; j++) {
    const r0 = j * 8 * rowLen;
    for (let g = 0; g < rowLen; g++) {
      const p = r0 + g;
      let lo = src[p] | (src[p + rowLen] << 8) | (src[p + 2 * rowLen] << 16) | (src[p + 3 * rowLen] << 24);
      let hi =
        src[p + 4 * rowLen] | (src[p + 5 * rowLen] << 8) | (src[p + 6 * rowLen] << 16) | (src[p + 7 * rowLen] << 24);
      // 8×8 bit transpose of the bytes (lo, hi): byte m bit k ← byte k bit m.
      let t = (lo ^ (lo >>> 7)) & 0x00aa00aa;
      lo = lo ^ t ^ (t << 7);
      t = (hi ^ (hi >>> 7)) & 0x00aa00aa;
      hi = hi ^ t ^ (t << 7);
      t = (lo ^ (lo >>> 14)) & 0x0000cccc;
      lo = lo ^ t ^ (t << 14);
      t = (hi ^ (hi >>> 14)) & 0x0000cccc;
      hi = hi ^ t ^ (t << 14);
      t = (lo ^ (hi << 4)) & 0xf0f0f0f0;
      lo ^= t;
      hi ^= t >>> 4;
      const base = 8 * g * typesize + j;
      dst[base] = lo;
      dst[base + typesize] = lo >>> 8;
      dst[base + 2 * typesize] = lo >>> 16;
      dst[base + 3 * typesize] = lo >>> 24;
      dst[base + 4 * typesize] = hi;
      dst[base + 5 * typesize] = hi >>> 8;
      dst[base + 6 * typesize] = hi >>> 16;
      dst[base + 7 * typesize] = hi >>> 24;
    }
  }
  const done = nb * typesize;
  if (done < size) dst.set(src.subarray(done, size), done);
}
