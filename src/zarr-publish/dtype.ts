// Data type names as the two Zarr formats spell them, for the numeric types forecasts use.

const ITEM: Record<string, [code: string, size: number]> = {
  int8: ["i1", 1],
  uint8: ["u1", 1],
  int16: ["i2", 2],
  uint16: ["u2", 2],
  int32: ["i4", 4],
  uint32: ["u4", 4],
  int64: ["i8", 8],
  uint64: ["u8", 8],
  float32: ["f4", 4],
  float64: ["f8", 8],
};

export type Endian = "little" | "big";

/** True for the types published (integers, float32, float64): the ones both views and the store read alike. */
export function isPublishable(dtype: string): boolean {
  return dtype in ITEM;
}

export function itemSize(dtype: string): number {
  const e = ITEM[dtype];
  if (!e) throw new Error(`unsupported data type ${dtype}`);
  return e[1];
}

export function isFloat(dtype: string): boolean {
  return dtype.startsWith("float");
}

/** NumPy type string of a Zarr v2 .zarray: "<f4", ">i2", "|u1". */
export function v2Dtype(dtype: string, endian: Endian): string {
  const [code, size] = ITEM[dtype] ?? [];
  if (!code) throw new Error(`unsupported data type ${dtype}`);
  if (size === 1) return `|${code}`;
  return `${endian === "big" ? ">" : "<"}${code}`;
}
