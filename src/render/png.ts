// Indexed-colour PNG (colour type 3, 8-bit) encoder. One byte per pixel instead of four, a
// palette trimmed to the colours a tile actually uses, and rows sent as filter "Up" (the difference
// from the row above: a repeated row is all zeros), which deflate squeezes to almost nothing.
import { constants, crc32, deflateSync } from "node:zlib";
import { nativeAddon } from "../native.ts";

/**
 * Run-length deflate (matches at distance 1 only, as zlib's Z_RLE strategy). Up rows and flat runs
 * are exactly that, so on tile pyramids it beat levels 1..6 in speed and size alike
 * (bench/render-core.ts). The addon codes these tokens itself where it is built.
 */
export const DEFAULT_COMPRESSION: "rle" | number = "rle";

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const FILTER_NONE = 0;
const FILTER_SUB = 1;
const FILTER_UP = 2;

export interface IndexedPngOptions {
  /** "rle" (zlib's Z_RLE strategy), or a zlib level 0..9 with the default strategy. */
  compression?: "rle" | number;
  /**
   * "up" (default): every row after the first as filter Up. "none": rows that differ from the one
   * above unfiltered, repeated rows as Up (zeros). Anti-aliased overlays, mostly transparent with
   * fine edges, compress about a quarter smaller unfiltered (bench/overlays.ts).
   */
  rows?: "up" | "none";
  /**
   * Boxes written into the PNG as a tEXt chunk (keyword BOXES_KEYWORD, before the pixels): the
   * label or mark boxes drawn on the tile, which travel with its bytes through every way a tile is
   * served (route, static file, archive). See tileBoxes.
   */
  boxes?: TileBoxes;
}

/** Boxes in the tile's own 256 px frame (1x), [left, top, right, bottom], whole pixels. */
export type TileBoxes = [number, number, number, number][];

/** The tEXt keyword of a tile's boxes. */
export const BOXES_KEYWORD = "gridcast:boxes";

function boxesChunk(boxes: TileBoxes | undefined): [string, Uint8Array][] {
  if (!boxes) return [];
  return [["tEXt", Buffer.from(`${BOXES_KEYWORD}\0${JSON.stringify(boxes)}`, "latin1")]];
}

/** The boxes a tile's PNG carries (undefined when it has none): the reader's side of `boxes`. */
export function tileBoxes(png: Uint8Array): TileBoxes | undefined {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.length);
  let at = SIGNATURE.length;
  while (at + 8 <= buf.length) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    if (type === "IDAT" || type === "IEND") return undefined;
    if (type === "tEXt") {
      const text = buf.toString("latin1", at + 8, at + 8 + len);
      const nul = text.indexOf("\0");
      if (text.slice(0, nul) === BOXES_KEYWORD) return JSON.parse(text.slice(nul + 1));
    }
    at += 12 + len;
  }
  return undefined;
}

/**
 * Encode `indices` (width*height palette indices, row-major) with the colours in `rgba` (4 bytes
 * per index). Only indices that occur are written to PLTE/tRNS, renumbered in ascending order.
 */
export function encodeIndexedPng(
  indices: Uint8Array,
  width: number,
  height: number,
  rgba: Uint8Array,
  options: IndexedPngOptions = {},
): Buffer {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) {
    throw new RangeError(`PNG size must be positive integers, got ${width}x${height}`);
  }
  if (indices.length !== width * height) {
    throw new RangeError(`expected ${width * height} palette indices, got ${indices.length}`);
  }
  const raw = scratch((width + 1) * height);
  // The addon does the per-pixel passes in C when it is built; the same bytes either way.
  const addon = nativeAddon();
  const usedColors =
    options.rows === "none"
      ? unfilteredRows(indices, width, height, raw)
      : addon
        ? usedScratch.subarray(0, addon.pngRows(indices, width, height, raw, usedScratch))
        : filterRows(indices, width, height, raw);
  if (rgba.length < (usedColors[usedColors.length - 1] + 1) * 4) {
    throw new RangeError(`palette has ${rgba.length / 4} entries but index ${usedColors.at(-1)} is used`);
  }
  const compression = options.compression ?? DEFAULT_COMPRESSION;
  // Run-length deflate: the addon's own encoder where it is built (zlib's Z_RLE tokens in one
  // dynamic block, a few times faster: native/deflate-rle.h), else zlib's. The bytes differ, the
  // image they inflate to does not.
  let idat: Uint8Array | undefined;
  if (addon && compression === "rle") {
    const out = idatScratch(raw.length * 3 + 1024);
    const n = addon.deflateRle(raw, out);
    if (n > 0) idat = out.subarray(0, n);
  }
  idat ??= deflateSync(
    raw,
    compression === "rle"
      ? { strategy: constants.Z_RLE }
      : { level: compression, strategy: constants.Z_DEFAULT_STRATEGY },
  );

  const n = usedColors.length;
  const plte = Buffer.allocUnsafe(n * 3);
  let alphaCount = 0; // tRNS may stop after the last entry that is not fully opaque
  for (let k = 0; k < n; k++) {
    const at = usedColors[k] * 4;
    plte[k * 3] = rgba[at];
    plte[k * 3 + 1] = rgba[at + 1];
    plte[k * 3 + 2] = rgba[at + 2];
    if (rgba[at + 3] !== 255) alphaCount = k + 1;
  }
  const trns = Buffer.allocUnsafe(alphaCount);
  for (let k = 0; k < alphaCount; k++) trns[k] = rgba[usedColors[k] * 4 + 3];

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 3; // colour type: indexed
  // compression, filter method and interlace stay 0

  const chunks: [string, Uint8Array][] = [
    ["IHDR", ihdr],
    ["PLTE", plte],
  ];
  if (alphaCount > 0) chunks.push(["tRNS", trns]);
  chunks.push(...boxesChunk(options.boxes), ["IDAT", idat], ["IEND", Buffer.alloc(0)]);
  return assemble(chunks);
}

/**
 * Encode `rgba` (width*height*4 bytes, not premultiplied) as a truecolour-with-alpha PNG (colour
 * type 6), for overlays drawn with anti-aliased edges that four palette entries cannot carry. A row
 * equal to the one above is sent as filter Up (zeros), others as filter Sub (each byte minus the
 * pixel to its left): mostly-transparent rows are then runs of zeros for the RLE deflate.
 */
export function encodeRgbaPng(
  rgba: Uint8Array,
  width: number,
  height: number,
  options: IndexedPngOptions = {},
): Buffer {
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) {
    throw new RangeError(`PNG size must be positive integers, got ${width}x${height}`);
  }
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`expected ${width * height * 4} RGBA bytes, got ${rgba.length}`);
  }
  const rowBytes = width * 4;
  const stride = rowBytes + 1;
  const raw = scratch(stride * height);
  const src = Buffer.from(rgba.buffer, rgba.byteOffset, rgba.length);
  for (let y = 0; y < height; y++) {
    const from = y * rowBytes;
    const to = y * stride;
    if (y > 0 && src.compare(src, from - rowBytes, from, from, from + rowBytes) === 0) {
      raw[to] = FILTER_UP;
      raw.fill(0, to + 1, to + stride);
      continue;
    }
    raw[to] = FILTER_SUB;
    for (let i = 0; i < 4; i++) raw[to + 1 + i] = src[from + i];
    for (let i = 4; i < rowBytes; i++) raw[to + 1 + i] = (src[from + i] - src[from + i - 4]) & 0xff;
  }
  const compression = options.compression ?? DEFAULT_COMPRESSION;
  const idat = deflateSync(
    raw,
    compression === "rle"
      ? { strategy: constants.Z_RLE }
      : { level: compression, strategy: constants.Z_DEFAULT_STRATEGY },
  );
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type: truecolour with alpha
  return assemble([["IHDR", ihdr], ...boxesChunk(options.boxes), ["IDAT", idat], ["IEND", Buffer.alloc(0)]]);
}

/**
 * The tile's rows as bytes, which rows repeat the one above, and its colours renumbered densely:
 * `remap[index]` is the new number of a colour the tile uses, `used` the colours in order.
 */
function denseColours(indices: Uint8Array, width: number, height: number) {
  const src = Buffer.from(indices.buffer, indices.byteOffset, indices.length);
  const repeats = repeatedRows(src, width, height);
  const remap = new Uint8Array(256);
  for (let y = 0; y < height; y++) {
    if (repeats[y]) continue;
    for (let i = y * width, end = i + width; i < end; i++) remap[src[i]] = 1;
  }
  const used: number[] = [];
  for (let c = 0; c < 256; c++) if (remap[c]) remap[c] = used.push(c) - 1;
  return { src, repeats, remap, used };
}

/**
 * The filtered rows into `raw`, over the indices renumbered densely over the colours used (so
 * PLTE/tRNS carry only those): the first row as filter None, every other as filter Up (each byte
 * minus the byte above; a repeated row is all zeros). Up turns the parts of a row that match the
 * row above into runs of zeros, which the run-length deflate squeezes: half the bytes of sending
 * changed rows as None, and less deflate work (bench/projected-tiles.ts). Returns the colours,
 * ascending.
 */
function filterRows(indices: Uint8Array, width: number, height: number, raw: Buffer): Uint8Array {
  const { src, repeats, remap, used } = denseColours(indices, width, height);
  const stride = width + 1;
  raw[0] = FILTER_NONE;
  for (let i = 0; i < width; i++) raw[1 + i] = remap[src[i]];
  for (let y = 1; y < height; y++) {
    const from = y * width;
    const to = y * stride;
    raw[to] = FILTER_UP;
    if (repeats[y]) raw.fill(0, to + 1, to + stride);
    else for (let i = 0; i < width; i++) raw[to + 1 + i] = (remap[src[from + i]] - remap[src[from + i - width]]) & 255;
  }
  return Uint8Array.from(used);
}

/**
 * The rows into `raw` for `rows: "none"`: a row equal to the one above as filter Up (zeros), any
 * other as filter None, indices renumbered densely over the colours used. Returns the colours.
 */
function unfilteredRows(indices: Uint8Array, width: number, height: number, raw: Buffer): Uint8Array {
  const { src, repeats, remap, used } = denseColours(indices, width, height);
  const stride = width + 1;
  raw.fill(0);
  for (let y = 0; y < height; y++) {
    const from = y * width;
    const to = y * stride;
    if (repeats[y]) raw[to] = FILTER_UP;
    else {
      raw[to] = FILTER_NONE;
      for (let i = 0; i < width; i++) raw[to + 1 + i] = remap[src[from + i]];
    }
  }
  return Uint8Array.from(used);
}

const usedScratch = new Uint8Array(256);
let scratchBuffer = Buffer.alloc(0);

let idatBuffer = Buffer.alloc(0);

/** The compressed rows are copied into the PNG before the next call, so one buffer serves every call. */
function idatScratch(size: number): Buffer {
  if (idatBuffer.length < size) idatBuffer = Buffer.allocUnsafe(size);
  return idatBuffer;
}

/** The filtered image is handed to deflateSync and dropped, so one buffer serves every call. */
function scratch(size: number): Buffer {
  if (scratchBuffer.length < size) scratchBuffer = Buffer.allocUnsafe(size);
  return scratchBuffer.subarray(0, size);
}

/** repeats[y] = 1 when row y equals row y-1. */
function repeatedRows(src: Buffer, width: number, height: number): Uint8Array {
  const repeats = new Uint8Array(height);
  if (src.byteOffset % 4 === 0 && width % 4 === 0) {
    // Word compares: four pixels per step.
    const words = new Uint32Array(src.buffer, src.byteOffset, src.length / 4);
    const w = width / 4;
    for (let y = 1; y < height; y++) {
      let k = y * w;
      const end = k + w;
      while (k < end && words[k] === words[k - w]) k++;
      repeats[y] = k === end ? 1 : 0;
    }
  } else {
    for (let y = 1; y < height; y++)
      repeats[y] = src.compare(src, (y - 1) * width, y * width, y * width, (y + 1) * width) === 0 ? 1 : 0;
  }
  return repeats;
}

function assemble(chunks: [string, Uint8Array][]): Buffer {
  let size = SIGNATURE.length;
  for (const [, data] of chunks) size += 12 + data.length;
  const out = Buffer.allocUnsafe(size);
  let at = SIGNATURE.copy(out, 0);
  for (const [type, data] of chunks) {
    out.writeUInt32BE(data.length, at);
    const typeAt = at + 4;
    out.write(type, typeAt, "latin1");
    out.set(data, typeAt + 4);
    at = typeAt + 4 + data.length;
    // The CRC covers the chunk type and data, not the length.
    out.writeUInt32BE(crc32(out.subarray(typeAt, at)), at);
    at += 4;
  }
  return out;
}
