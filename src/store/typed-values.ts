// The typed arrays chunk values live in, one per fixed-size numeric data type: what a direct
// decode views decoded bytes as, and what the /data views build re-encoded chunks from.

export type Values =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

export interface ValuesCtor {
  new (n: number): Values;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): Values;
  readonly BYTES_PER_ELEMENT: number;
}

/** The typed array of each normalised data type name (bool and float16 have none). */
export const TYPED_ARRAYS: Record<string, ValuesCtor> = {
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
};
