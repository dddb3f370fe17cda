// The most bytes a chunk may decode to, from its shape and data type. Decoders get this bound
// before they allocate: a compressed frame that claims (or expands to) more is refused, so a
// hostile chunk cannot make the process allocate beyond what the array's metadata allows.

const BYTES: Record<string, number> = {
  bool: 1,
  int8: 1,
  uint8: 1,
  int16: 2,
  uint16: 2,
  float16: 2,
  int32: 4,
  uint32: 4,
  float32: 4,
  int64: 8,
  uint64: 8,
  float64: 8,
  complex64: 8,
  complex128: 16,
};

export interface ChunkShapeMeta {
  dataType: string;
  shape: number[];
}

/** Exact decoded byte size of a fixed-size chunk, or undefined (variable-size types, odd shapes). */
export function decodedBound(meta: ChunkShapeMeta): number | undefined {
  const per = BYTES[meta.dataType];
  if (per === undefined) return undefined;
  let n = per;
  for (const s of meta.shape) {
    if (!Number.isSafeInteger(s) || s <= 0) return undefined;
    n *= s;
  }
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Raised by a decoder whose input is malformed or would decode past its bound. */
export class CodecInputError extends Error {
  override name = "CodecInputError";
}
