// Regions of index space ([start, stop) per dimension) and how one decoded chunk's part of a
// region is copied into its place in an output buffer: strides and placements, the runs both
// sides share, and the copy loops (a bulk set, a scalar loop, the addon's memcpy runs, unpacking
// on the way when asked).
import { nativeAddon } from "../native.ts";
import { type Decoding, unpack } from "./cf.ts";
import type { Values } from "./typed-values.ts";

export type Chunk = { data: ArrayLike<number | bigint> & { byteLength: number }; shape: number[]; stride: number[] };
export type Range = [start: number, stop: number];
/** Buffers values are copied into: physical values in float arrays, stored values in their own type. */
export type OutValues = Exclude<Values, BigInt64Array | BigUint64Array>;

export function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

/** Where a region's values go in an output buffer: the element of the region's first value, and
 * the output step per dimension. */
export interface Placement {
  offset: number;
  strides: number[];
}

/** Every element a placement addresses must lie inside the buffer; a caller's mistake, not data. */
export function checkPlacement(region: Range[], length: number, place: Placement): void {
  let lo = place.offset;
  let hi = place.offset;
  for (let d = 0; d < region.length; d++) {
    const extent = region[d][1] - region[d][0];
    if (extent <= 0) return;
    const reach = (extent - 1) * place.strides[d];
    if (reach < 0) lo += reach;
    else hi += reach;
  }
  if (region.length !== place.strides.length || lo < 0 || hi >= length) {
    throw new Error(`placement [${lo}, ${hi}] outside an output of ${length} values`);
  }
}

// Runs at least this long are copied with one typed-array set (a memcpy); shorter ones by a loop,
// which is cheaper than making a subarray view for each.
const BULK_RUN = 33;

/**
 * Where one chunk's part of a region lies on both sides: the first element in the chunk and in the
 * output, and per dimension the index range and both strides, with trailing dimensions taken whole
 * from the chunk and laid out alike in the output merged into one (a (y, x, feature) slice of
 * every feature copies rows of pixels, not one pixel at a time). Undefined when they do not meet.
 */
export interface Runs {
  src: number;
  dst: number;
  lo: number[];
  hi: number[];
  cStride: number[];
  oStride: number[];
}

export function runsOf(
  cc: number[],
  chunkShape: number[],
  chunkStride: number[],
  region: Range[],
  place: Placement,
): Runs | undefined {
  let nd = region.length;
  let lo = new Array<number>(nd);
  let hi = new Array<number>(nd);
  let src = 0;
  let dst = place.offset;
  for (let d = 0; d < nd; d++) {
    const c0 = cc[d] * chunkShape[d];
    lo[d] = Math.max(region[d][0], c0);
    hi[d] = Math.min(region[d][1], c0 + chunkShape[d]);
    if (hi[d] <= lo[d]) return undefined;
    src += (lo[d] - c0) * chunkStride[d];
    dst += (lo[d] - region[d][0]) * place.strides[d];
  }
  let cStride = chunkStride;
  let oStride = place.strides;
  while (nd > 1) {
    const k = nd - 1;
    const ext = hi[k] - lo[k];
    // Both sides step from one index of the outer dimension to the next exactly a run further.
    if (cStride[k - 1] !== ext * cStride[k] || oStride[k - 1] !== ext * oStride[k]) break;
    if (cStride === chunkStride) {
      lo = lo.slice();
      hi = hi.slice();
      cStride = cStride.slice();
      oStride = oStride.slice();
    }
    hi[k - 1] = (hi[k - 1] - lo[k - 1]) * ext;
    lo[k - 1] = 0;
    cStride[k - 1] = cStride[k];
    oStride[k - 1] = oStride[k];
    nd = k;
    lo.length = hi.length = cStride.length = oStride.length = nd;
  }
  return { src, dst, lo, hi, cStride, oStride };
}

/**
 * The part of a region one chunk holds, cut into sub-regions of at most `maxValues` values each
 * (one row of the innermost dimension at least), each with its placement: a copy out of a large
 * chunk done in pieces the caller can pace (loop-turns.ts). Along the outermost dimension with
 * more than one index whose inner part fits, or deeper when it does not.
 */
export function chunkPieces(
  cc: number[],
  chunkShape: number[],
  region: Range[],
  place: Placement,
  maxValues: number,
): { region: Range[]; place: Placement; values: number }[] {
  const box = region.map(([a, b], d): Range => {
    const c0 = cc[d] * chunkShape[d];
    return [Math.max(a, c0), Math.min(b, c0 + chunkShape[d])];
  });
  if (box.some(([a, b]) => b <= a)) return [];
  let offset = place.offset;
  for (let d = 0; d < box.length; d++) offset += (box[d][0] - region[d][0]) * place.strides[d];
  const pieces: { region: Range[]; place: Placement; values: number }[] = [];
  const cut = (r: Range[], at: number, from: number) => {
    let values = 1;
    for (const [a, b] of r) values *= b - a;
    if (values <= maxValues || from >= r.length - 1) {
      pieces.push({ region: r, place: { offset: at, strides: place.strides }, values });
      return;
    }
    let inner = values;
    for (let d = from; d < r.length - 1; d++) {
      const [a, b] = r[d];
      inner /= b - a;
      if (b - a === 1) continue;
      const per = Math.max(1, Math.floor(maxValues / inner));
      for (let s = a; s < b; s += per) {
        const sub = r.slice();
        sub[d] = [s, Math.min(b, s + per)];
        cut(sub, at + (s - a) * place.strides[d], d + 1);
      }
      return;
    }
    pieces.push({ region: r, place: { offset: at, strides: place.strides }, values });
  };
  cut(box, offset, 0);
  return pieces;
}

/** Copy the intersection of one decoded chunk with a region into its place in the output. */
export function copyRegion(
  ch: Chunk,
  cc: number[],
  chunkShape: number[],
  region: Range[],
  place: Placement,
  out: { [i: number]: number; length: number },
  packing: Decoding | null,
): void {
  const runs = runsOf(cc, chunkShape, ch.stride, region, place);
  if (!runs) return;
  let { src, dst } = runs;
  const { lo, hi, cStride, oStride } = runs;
  const nd = lo.length;
  const data = ch.data;
  const last = nd - 1;
  const n = hi[last] - lo[last];
  const cs = cStride[last];
  const os = oStride[last];
  const isBig = typeof data[0] === "bigint";
  // No packing (stored values wanted) copies like a packing that changes nothing.
  const plain = packing === null || (packing.missing.length === 0 && packing.scale === 1 && packing.offset === 0);
  const isFloatData = data instanceof Float32Array || data instanceof Float64Array;
  const bulk = plain && isFloatData && ArrayBuffer.isView(out) && cs === 1 && os === 1 && n >= BULK_RUN;
  if (plain && data instanceof Float32Array && out instanceof Float32Array) {
    if (cs === 1 && os === 1 && copyNative(data, out, src, dst, n, lo, hi, cStride, oStride)) return;
    copyF32(data, out, src, dst, n, cs, os, lo, hi, cStride, oStride);
    return;
  }
  const idx = lo.slice();
  for (;;) {
    if (bulk) {
      (out as Float32Array).set((data as Float32Array).subarray(src, src + n), dst);
    } else if (plain && !isBig) {
      for (let k = 0, s = src, o = dst; k < n; k++, s += cs, o += os) out[o] = data[s] as number;
    } else if (packing && !isBig) {
      for (let k = 0, s = src, o = dst; k < n; k++, s += cs, o += os) out[o] = unpack(data[s] as number, packing);
    } else {
      for (let k = 0, s = src, o = dst; k < n; k++, s += cs, o += os) {
        const v = Number(data[s]);
        out[o] = packing ? unpack(v, packing) : v;
      }
    }
    // Odometer over the outer dimensions, moving both positions by their strides.
    let d = last - 1;
    while (d >= 0) {
      idx[d]++;
      src += cStride[d];
      dst += oStride[d];
      if (idx[d] < hi[d]) break;
      const back = hi[d] - lo[d];
      src -= back * cStride[d];
      dst -= back * oStride[d];
      idx[d] = lo[d];
      d--;
    }
    if (d < 0) break;
  }
}

// Below this many values a copy stays in JavaScript (the call into the addon costs more).
const NATIVE_MIN = 512;
// The addon's copy parameters, reused: [srcStart, dstStart, n, k, counts, src strides, dst strides].
const geom = new Float64Array(4 + 3 * 16);

/**
 * Contiguous runs copied by the addon (one memcpy each; JavaScript pays a view or a scalar loop
 * per run, most of an export's time on the main thread). False when the addon is not there or
 * the copy is small: then the caller copies.
 */
function copyNative(
  data: Float32Array,
  out: Float32Array,
  src: number,
  dst: number,
  n: number,
  lo: number[],
  hi: number[],
  cStride: number[],
  oStride: number[],
): boolean {
  const k = lo.length - 1;
  if (k > 16) return false;
  let total = n;
  for (let d = 0; d < k; d++) total *= hi[d] - lo[d];
  if (total < NATIVE_MIN) return false;
  const addon = nativeAddon();
  if (!addon) return false;
  geom[0] = src;
  geom[1] = dst;
  geom[2] = n;
  geom[3] = k;
  for (let d = 0; d < k; d++) {
    geom[4 + d] = hi[d] - lo[d];
    geom[4 + k + d] = cStride[d];
    geom[4 + 2 * k + d] = oStride[d];
  }
  addon.copyRuns(data, out, geom);
  return true;
}

/** The common case, float32 stored and answered without unpacking, kept monomorphic for the JIT:
 * the two innermost dimensions are plain loops, the rest an odometer. */
function copyF32(
  data: Float32Array,
  out: Float32Array,
  src: number,
  dst: number,
  n: number,
  cs: number,
  os: number,
  lo: number[],
  hi: number[],
  cStride: number[],
  oStride: number[],
): void {
  const nd = lo.length;
  const outer = nd - 2;
  const rows = nd >= 2 ? hi[nd - 2] - lo[nd - 2] : 1;
  const rcs = nd >= 2 ? cStride[nd - 2] : 0;
  const ros = nd >= 2 ? oStride[nd - 2] : 0;
  const unit = cs === 1 && os === 1;
  const bulk = unit && n >= BULK_RUN;
  const idx = lo.slice();
  for (;;) {
    for (let r = 0, s0 = src, d0 = dst; r < rows; r++, s0 += rcs, d0 += ros) {
      if (bulk) out.set(data.subarray(s0, s0 + n), d0);
      else if (unit) for (let k = 0; k < n; k++) out[d0 + k] = data[s0 + k];
      else for (let k = 0, s = s0, o = d0; k < n; k++, s += cs, o += os) out[o] = data[s];
    }
    let d = outer - 1;
    while (d >= 0) {
      idx[d]++;
      src += cStride[d];
      dst += oStride[d];
      if (idx[d] < hi[d]) break;
      const back = hi[d] - lo[d];
      src -= back * cStride[d];
      dst -= back * oStride[d];
      idx[d] = lo[d];
      d--;
    }
    if (d < 0) break;
  }
}
