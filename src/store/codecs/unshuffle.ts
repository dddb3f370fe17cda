// Undo Blosc's byte shuffle on one block: the block holds byte 0 of every element, then byte 1 of
// every element, and so on; bytes past the last whole element are stored as they are.

export function unshuffle(src: Uint8Array, dst: Uint8Array, typesize: number): void {
  const size = src.length;
  const n = Math.floor(size / typesize);
  if (typesize === 4 && dst.byteOffset % 4 === 0) {
    // The common float32 case: assemble whole words (little-endian host) instead of single bytes.
    const out = new Uint32Array(dst.buffer, dst.byteOffset, n);
    for (let i = 0; i < n; i++) {
      out[i] = src[i] | (src[n + i] << 8) | (src[2 * n + i] << 16) | (src[3 * n + i] << 24);
    }
  } else {
    for (let j = 0; j < typesize; j++) {
      const from = j * n;
      for (let i = 0, to = j; i < n; i++, to += typesize) dst[to] = src[from + i];
    }
  }
  const done = n * typesize;
  if (done < size) dst.set(src.subarray(done, size), done);
}
