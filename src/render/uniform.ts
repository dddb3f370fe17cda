// Uniform tiles: a tile of palette indices (or RGBA bytes) that is one value throughout; a build
// encodes one PNG per such value and hard-links it wherever the tile recurs.

/** True when every pixel has the same index, so one encoded PNG can stand for all such tiles. */
export function isUniform(indices: Uint8Array): boolean {
  const first = indices[0];
  // Compare four pixels at a time when the buffer is aligned for it.
  if (indices.byteOffset % 4 === 0 && indices.length % 4 === 0) {
    const words = new Uint32Array(indices.buffer, indices.byteOffset, indices.length / 4);
    const w = (first * 0x01010101) >>> 0;
    for (let i = 0; i < words.length; i++) if (words[i] !== w) return false;
    return true;
  }
  for (let i = 1; i < indices.length; i++) if (indices[i] !== first) return false;
  return true;
}
