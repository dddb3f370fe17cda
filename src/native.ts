// The Node-API addon in native/, built by `npm ci` wherever a C compiler is (`npm run native`
// again by hand; no -dev package is needed): a Blosc decoder in C with LZ4, Zstandard and zlib from
// the system's runtime libraries (opened when it loads; a missing one leaves its chunks to
// JavaScript), Zstandard frames into a caller's buffer, chunk files read in one job, and the loops
// the store and the renderer run per value (region copies, bilinear and projected sampling, PNG
// rows). Without
// it, or with GRIDCAST_NATIVE=0, each of those runs in JavaScript with the same results
// (Blosc through the built-in decoder, blosc-decode.ts).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

interface Addon {
  /** Bytes of a Blosc chunk decoded into dst (exactly its decoded size), on libuv's thread pool;
   * negative when refused: -103 when its compressor is not available here (decode it in
   * JavaScript), any other for a chunk that does not decode. */
  decode(src: Uint8Array, dst: Uint8Array): Promise<number>;
  decodeSync(src: Uint8Array, dst: Uint8Array): number;
  /** The decoder and the library versions it found, e.g. "gridcast C (blosclz; lz4 1.9.4; …)". */
  version(): string;
  /** The Blosc compressors it decodes here, comma-separated. */
  compressors(): string;
  /** Bytes of a Zstandard frame decoded into dst (negative: corrupt, or larger than dst); only
   * when libzstd.so.1 was found. */
  zstdDecode?(src: Uint8Array, dst: Uint8Array): Promise<number>;
  zstdDecodeSync?(src: Uint8Array, dst: Uint8Array): number;
  /** A whole regular file into dst in one job: bytes read, -errno, -100000 (larger than dst,
   * nothing read), -100001 (ended before its stated size) or, given the store's real root (path
   * then relative to it), -100002 (the path leads out of it). Opened below the root with openat2
   * (RESOLVE_BENEATH), else, or with `walk`, one component at a time (native/beneath.h). */
  readFile(path: string, dst: Uint8Array, root?: string, walk?: boolean): Promise<number>;
  /** Runs of items from src to dst (same item size); geom as in native/regions.h. Throws a
   * RangeError, moving nothing, when any run would fall outside either array. */
  copyRuns(src: ArrayBufferView, dst: ArrayBufferView, geom: Float64Array): void;
  /** A stored chunk (codec 0 Blosc, 1 a Zstandard frame, 2 raw bytes) decoded on libuv's pool into
   * a buffer of that thread's own, then its runs copied into dst as copyRuns would (geom counts
   * the chunk's items): a promise of the bytes decoded, the runs copied only when that is
   * chunkBytes, or a negative result as decode's. RangeError, nothing queued, when a run would
   * fall outside the chunk or dst. With a window [from, to) of the chunk's items, a
   * Blosc chunk has only the blocks holding them decoded and only those items placed; any other
   * chunk is placed whole by the job whose window starts at 0 and left alone by the others (see
   * native/jobs.h). Absent from addons built before it. */
  decodeRuns?(
    codec: 0 | 1 | 2,
    src: Uint8Array,
    chunkBytes: number,
    dst: ArrayBufferView,
    geom: Float64Array,
    from?: number,
    to?: number,
  ): Promise<number>;
  /** An indexed PNG's filtered rows and the colours they use (render/png.ts's filterRows in C):
   * the number of colours, listed ascending at the start of `used`. */
  pngRows(indices: Uint8Array, width: number, height: number, raw: Uint8Array, used: Uint8Array): number;
  /** A zlib stream of raw in out, tokenized as zlib's run-length strategy and coded in one dynamic
   * Huffman block (native/deflate-rle.h): its length, or 0 when it does not fit out. */
  deflateRle(raw: Uint8Array, out: Uint8Array): number;
  /** One map tile of palette indices by bilinear sampling (render/resample-paint.ts's renderBilinear in
   * C); palette is [scale, offset, below, top]. RangeError when a table points outside the field. */
  bilinearTile(
    field: Float32Array | Float64Array,
    colsA: Int32Array,
    colsB: Int32Array,
    colsW: Float32Array,
    rowsA: Int32Array,
    rowsB: Int32Array,
    rowsW: Float32Array,
    col0: number,
    row0: number,
    palette: Float64Array,
    out: Uint8Array,
  ): void;
  /** One map tile of palette indices of a projected grid by bilinear sampling over per-pixel
   * tables (render/resample-projected.ts in C); palette as for bilinearTile. RangeError when a
   * table points outside the field. */
  projectedTile(
    field: Float32Array | Float64Array,
    nx: number,
    base: Int32Array,
    wx: Uint16Array,
    wy: Uint16Array,
    palette: Float64Array,
    out: Uint8Array,
  ): void;
  /** out[k] = colours[nodes[k]], 0 where nodes[k] < 0 (nearest sampling of a projected grid). */
  gatherTile(colours: Uint8Array, nodes: Int32Array, out: Uint8Array): void;
  /** gatherTile over runs of pixels sharing a node: run r fills lengths[r] + 1 pixels of out, in
   * order, with colours[nodes[r]]. RangeError when a node lies outside colours or the runs do not
   * cover out exactly. Absent from addons built before it. */
  gatherRuns?(colours: Uint8Array, nodes: Int32Array, lengths: Uint8Array, out: Uint8Array): void;
  /** The nearest cell of every pixel of a tile on an unstructured grid, walked from cell to cell
   * through the index's neighbourhoods (render/resample-cells.ts's walk in C): out gets the cell,
   * `off` beyond `reach`, or -2 where no bound proves an answer; returns how many are -2. Absent
   * from addons built before it. */
  walkCells?(
    x: Float64Array,
    y: Float64Array,
    z: Float64Array,
    list: Int32Array,
    half: Float32Array,
    outer: Float64Array,
    cosLat: Float64Array,
    sinLat: Float64Array,
    cosLon: Float64Array,
    sinLon: Float64Array,
    start: number,
    reach: number,
    off: number,
    out: Int32Array,
  ): number;
  /** Every cell's k nearest other cells, nearest first, into list (n·k), with the bounds a tile
   * walk proves answers with into half (n·k) and outer (n): store/cell-index.ts's neighbourhood()
   * in C, searching the index's buckets (cells bucket by bucket, each bucket's start, per band its
   * bucket count and first bucket) with the same arithmetic. RangeError when the buckets do not
   * hold the cells. Absent from addons built before it. */
  cellNeighbours?(
    x: Float64Array,
    y: Float64Array,
    z: Float64Array,
    cells: Int32Array,
    start: Int32Array,
    cols: Int32Array,
    first: Int32Array,
    k: number,
    cosMargin: number,
    sinMargin: number,
    list: Int32Array,
    half: Float32Array,
    outer: Float64Array,
  ): void;
  /** nodes as runs of equal ones (at most 256 long) into runNodes and runLengths (length − 1), as
   * render/resample-projected.ts's nearestRuns makes them; returns the number of runs. Absent from
   * addons built before it. */
  runsOf?(nodes: Int32Array, runNodes: Int32Array, runLengths: Uint8Array): number;
  /** Bytes the kernel holds for a TCP socket's peer that the peer has not acknowledged (SIOCOUTQ),
   * or -errno. Absent from addons built before it. */
  sendQueue?(fd: number): number;
}

export const ADDON_PATH = fileURLToPath(new URL("../build/native/gridcast.node", import.meta.url));

let addon: Addon | undefined;
let tried = false;
let loadError: string | undefined;

/** The addon, or undefined when it is not built, cannot load, or is switched off. */
export function nativeAddon(): Addon | undefined {
  if (tried) return addon;
  tried = true;
  if (process.env.GRIDCAST_NATIVE === "0") {
    loadError = "switched off by GRIDCAST_NATIVE=0";
    return undefined;
  }
  if (!existsSync(ADDON_PATH)) {
    loadError = "not built (install a C compiler, then npm run native)";
    return undefined;
  }
  try {
    addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
  } catch (e) {
    // Built, but for another platform or a damaged file: say so, carry on.
    loadError = `cannot be loaded: ${(e as Error).message.split("\n")[0]}`;
  }
  return addon;
}

/** One line for the logs: which Blosc decoder this process uses. */
export function nativeDecoderInUse(): string {
  const a = nativeAddon();
  return a ? `native, ${a.version()}` : `JavaScript (the native addon is ${loadError})`;
}

/** Switch the native decoder off or on again (tests compare both paths in one process). */
export function useNativeAddon(on: boolean): void {
  if (!on) {
    tried = true;
    addon = undefined;
    loadError = "switched off";
    return;
  }
  tried = false;
  nativeAddon();
}
