// Undo Blosc's byte shuffle on one block: the block holds byte 0 of every element, then byte 1 of
// every element, and so on; bytes past the last whole element are stored as they are.

export function unshuffle(src: Uint8Array, dst: Uint8Array, typesize: number): void {
  const size = src.length;
  const n = Math.floor(size / typesize);
  let done = 0; // elements already written by a fast path
  if (typesize === 4 && n % 4 === 0 && src.byteOffset % 4 === 0 && dst.byteOffset % 4 === 0) {
    // float32/int32: read a word from each of the 4 byte planes (4 elements' byte j) and
    // transpose the 4×4 bytes into 4 whole elements (little-endian host).
    const q = n >> 2;
    const s = new Uint32Array(src.buffer, src.byteOffset, n);
    const out = new Uint32Array(dst.buffer, dst.byteOffset, n);
    for (let i = 0, o = 0; i < q; i++, o += 4) {
      const a = s[i];
      const b = s[q + i];
      const c = s[2 * q + i];
      const d = s[3 * q + i];
      out[o] = (a & 0xff) | ((b & 0xff) << 8) | ((c & 0xff) << 16) | (d << 24);
      out[o + 1] = ((a >>> 8) & 0xff) | (b & 0xff00) | ((c & 0xff00) << 8) | ((d & 0xff00) << 16);
      out[o + 2] = ((a >>> 16) & 0xff) | ((b >>> 8) & 0xff00) | (c & 0xff0000) | ((d & 0xff0000) << 8);
      out[o + 3] = (a >>> 24) | ((b >>> 16) & 0xff00) | ((c >>> 8) & 0xff0000) | (d & 0xff000000);
    }
    done = n;
  }
  for (let j = 0; j < typesize; j++) {
    const from = j * n;
    for (let i = done, to = done * typesize + j; i < n; i++, to += typesize) dst[to] = src[from + i];
  }
  const tail = n * typesize;
  if (tail < size) dst.set(src.subarray(tail, size), tail);
}
