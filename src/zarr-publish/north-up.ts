// North-up publishing: GDAL (and so QGIS) turns a dataset's first row into the top of the image,
// so a group stored south-to-north came out upside down, with a positive pixel height that
// gdal_translate -projwin and gdalwarp refuse. Such a group's latitude (or projected y) axis is
// published north-to-south and every array along it has its rows reversed; chunks keep the stored
// chunk size, so a published chunk is assembled from at most two stored chunks. xarray and every
// other client select by coordinate and read the same values at the same places.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "../store/array.ts";
import { TYPED_ARRAYS } from "../store/typed-values.ts";
import { inCOrder, type Values } from "./chunk-codec.ts";

/** Rows reversed along one dimension of a published array. */
export interface Flip {
  dim: number;
}

/** True when a latitude/y axis runs south to north (ascending), i.e. must be published reversed. */
export function ascending(values: ArrayLike<number>): boolean {
  return values.length > 1 && values[values.length - 1] > values[0];
}

/** The stored chunk indices along the flipped dimension that published chunk `j` draws from. */
export function storedChunksOf(j: number, chunk: number, length: number): number[] {
  const first = j * chunk;
  const last = Math.min(first + chunk, length) - 1;
  // Published row r is stored row length-1-r: rows first..last come from stored rows in reverse.
  const lo = Math.floor((length - 1 - last) / chunk);
  const hi = Math.floor((length - 1 - first) / chunk);
  return lo === hi ? [lo] : [lo, hi];
}

/**
 * The values of published chunk `coords` of an array flipped along `dim`, in C order, read from
 * the stored array's chunks. Rows past the array's end (an edge chunk) hold `absent`.
 */
export async function flippedChunk(
  array: StoredArray,
  chunks: number[],
  shape: number[],
  dtype: string,
  coords: number[],
  flip: Flip,
  absent: number,
): Promise<Values> {
  const d = flip.dim;
  const c = chunks[d];
  const n = shape[d];
  const total = chunks.reduce((x, y) => x * y, 1);
  const out = new TYPED_ARRAYS[dtype](total) as Values;
  if (out instanceof BigInt64Array || out instanceof BigUint64Array)
    out.fill(BigInt(Number.isFinite(absent) ? absent : 0));
  else (out as Float64Array).fill(absent);
  const outer = chunks.slice(0, d).reduce((x, y) => x * y, 1);
  const inner = chunks.slice(d + 1).reduce((x, y) => x * y, 1);
  const first = coords[d] * c;
  const rows = Math.min(c, n - first);
  for (const sc of storedChunksOf(coords[d], c, n)) {
    const at = coords.slice();
    at[d] = sc;
    const ch = await array.leaseChunk(at);
    try {
      if (ch.data.length !== total) throw new CorruptDataError("a stored chunk does not have the array's chunk shape");
      const src = inCOrder(ch.data as Values, ch.shape, ch.stride);
      for (let r = 0; r < rows; r++) {
        const s = n - 1 - (first + r);
        if (Math.floor(s / c) !== sc) continue;
        const off = s - sc * c;
        for (let o = 0; o < outer; o++) {
          const from = (o * c + off) * inner;
          (out as Float64Array).set((src as Float64Array).subarray(from, from + inner), (o * c + r) * inner);
        }
      }
    } finally {
      array.releaseChunk(ch);
    }
  }
  return out;
}
