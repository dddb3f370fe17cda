// The Node-API addon in native/, when it has been built (`npm run native`; `npm ci` tries, and
// the test prerequisites build it): the system's c-blosc (Debian's libblosc1, the library
// numcodecs, zarr-python and xarray decode with) and libzstd into a caller's buffer, chunk files
// read in one job, and the loops the store and the renderer run per value (region copies,
// bilinear sampling, PNG rows). Without it, or with GRIDCAST_NATIVE_BLOSC=0, each of those runs
// in JavaScript with the same results (Blosc through the built-in decoder, blosc-decode.ts).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

interface Addon {
  /** Bytes blosc_decompress_ctx wrote into dst (negative: it refused), on libuv's thread pool. */
  decode(src: Uint8Array, dst: Uint8Array): Promise<number>;
  decodeSync(src: Uint8Array, dst: Uint8Array): number;
  version(): string;
  compressors(): string;
  /** Bytes of a Zstandard frame decoded into dst (negative: corrupt, or larger than dst); only in
   * an addon built with libzstd's headers. */
  zstdDecode?(src: Uint8Array, dst: Uint8Array): Promise<number>;
  zstdDecodeSync?(src: Uint8Array, dst: Uint8Array): number;
  /** A whole regular file into dst in one job: bytes read, -errno, -100000 (larger than dst,
   * nothing read), -100001 (ended before its stated size) or, given the store's real root (path
   * then relative to it), -100002 (the path leads out of it). Opened below the root with openat2
   * (RESOLVE_BENEATH), else, or with `walk`, one component at a time (native/beneath.h). */
  readFile(path: string, dst: Uint8Array, root?: string, walk?: boolean): Promise<number>;
  /** Runs of items from src to dst (same item size); geom as in native/blosc.c. Throws a
   * RangeError, moving nothing, when any run would fall outside either array. */
  copyRuns(src: ArrayBufferView, dst: ArrayBufferView, geom: Float64Array): void;
  /** An indexed PNG's filtered rows and the colours they use (render/png.ts's filterRows in C):
   * the number of colours, listed ascending at the start of `used`. */
  pngRows(indices: Uint8Array, width: number, height: number, raw: Uint8Array, used: Uint8Array): number;
  /** One map tile of palette indices by bilinear sampling (render/resample.ts's renderBilinear in
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
}

export const ADDON_PATH = fileURLToPath(new URL("../build/native/blosc.node", import.meta.url));

let addon: Addon | undefined;
let tried = false;
let loadError: string | undefined;

/** The addon, or undefined when it is not built, cannot load, or is switched off. */
export function nativeBlosc(): Addon | undefined {
  if (tried) return addon;
  tried = true;
  if (process.env.GRIDCAST_NATIVE_BLOSC === "0") {
    loadError = "switched off by GRIDCAST_NATIVE_BLOSC=0";
    return undefined;
  }
  if (!existsSync(ADDON_PATH)) {
    loadError = "not built (install libblosc-dev, then npm run native)";
    return undefined;
  }
  try {
    addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
  } catch (e) {
    // Built, but libblosc.so.1 is gone or the build is for another platform: say so, carry on.
    loadError = `cannot be loaded: ${(e as Error).message.split("\n")[0]}`;
  }
  return addon;
}

/** One line for the logs: which Blosc decoder this process uses. */
export function bloscDecoderInUse(): string {
  const a = nativeBlosc();
  return a ? `libblosc ${a.version()} (native)` : `built-in (libblosc ${loadError})`;
}

/** Switch the native decoder off or on again (tests compare both paths in one process). */
export function useNativeBlosc(on: boolean): void {
  if (!on) {
    tried = true;
    addon = undefined;
    loadError = "switched off";
    return;
  }
  tried = false;
  nativeBlosc();
}
