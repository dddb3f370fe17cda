// Storage encodings of the synthetic fields: bit rounding of float32 (as numcodecs BitRound and
// operational archives do, so chunks compress like real ones) and CF int16 packing of cloud cover.

/** Round float32 values to `keep` mantissa bits, half to even; NaN and infinities stay as they are. */
export function bitRound(a: Float32Array, keep: number): void {
  const drop = 23 - keep;
  if (drop <= 0) return;
  const u = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const mask = (0xffffffff << drop) >>> 0;
  const half = (1 << (drop - 1)) - 1;
  for (let i = 0; i < u.length; i++) {
    const b = u[i];
    if ((b & 0x7f800000) === 0x7f800000) continue;
    u[i] = ((b + half + ((b >>> drop) & 1)) & mask) >>> 0;
  }
}

/** CF packing of a 0..1 fraction into int16: physical = raw · scale_factor + add_offset. */
export const CLOUD_PACKING = { scale_factor: 1 / 65536, add_offset: 0.5, _FillValue: -32767 } as const;

export function packFraction(v: number): number {
  if (Number.isNaN(v)) return CLOUD_PACKING._FillValue;
  const raw = Math.round((v - CLOUD_PACKING.add_offset) / CLOUD_PACKING.scale_factor);
  // ±32766 keeps clear of the fill value and of values above 1 after unpacking.
  return Math.max(-32766, Math.min(32766, raw));
}
