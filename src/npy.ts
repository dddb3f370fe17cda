// NumPy .npy format, version 1.0: magic, header length, a Python-dict header padded with spaces
// so the data starts on a 64-byte boundary, then the raw C-order little-endian data.

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00];

export type NpyDtype = "<f4" | "<f8" | "<i2" | "<i4" | "<i8" | "|u1" | "|i1" | "<u2" | "<u4";

export const DTYPE_BYTES: Record<NpyDtype, number> = {
  "<f4": 4,
  "<f8": 8,
  "<i2": 2,
  "<i4": 4,
  "<i8": 8,
  "|u1": 1,
  "|i1": 1,
  "<u2": 2,
  "<u4": 4,
};

/** The header bytes for an array of this dtype and shape. */
export function npyHeader(dtype: NpyDtype, shape: number[]): Uint8Array {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let dict = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const unpadded = MAGIC.length + 2 + dict.length + 1;
  dict += " ".repeat((64 - (unpadded % 64)) % 64);
  dict += "\n";
  if (dict.length > 0xffff) throw new Error("npy header too long");
  const out = new Uint8Array(MAGIC.length + 2 + dict.length);
  out.set(MAGIC, 0);
  out[8] = dict.length & 0xff;
  out[9] = dict.length >> 8;
  for (let i = 0; i < dict.length; i++) out[10 + i] = dict.charCodeAt(i);
  return out;
}

/** Total .npy size in bytes for a shape, computed without any data. */
export function npySize(dtype: NpyDtype, shape: number[]): number {
  return npyHeader(dtype, shape).length + shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
}

/** A whole .npy file for a float32 array (little-endian hosts, which Node supports). */
export function encodeNpy(data: Float32Array, shape: number[]): Uint8Array {
  const header = npyHeader("<f4", shape);
  const out = new Uint8Array(header.length + data.byteLength);
  out.set(header, 0);
  out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), header.length);
  return out;
}
