// Whole-chunk compressors decoded natively on libuv's thread pool (node:zlib's asynchronous
// calls), so many chunks decode in parallel: Zstandard, gzip and zlib. Each refuses to produce
// more than the chunk's shape and data type allow.
import { promisify } from "node:util";
import { gunzip, gunzipSync, inflate, inflateSync, zstdDecompress, zstdDecompressSync } from "node:zlib";
import { type ChunkShapeMeta, CodecInputError, decodedBound } from "./bound.ts";

type Opts = { maxOutputLength?: number; chunkSize?: number };
type Inflate = (buf: Uint8Array, opts: Opts) => Promise<Buffer>;
type InflateSync = (buf: Uint8Array, opts: Opts) => Buffer;

// Small chunks (coordinates, previews) decode on the calling thread: a trip through the thread
// pool would cost more than the decoding and keep the request in flight longer.
const INLINE_BYTES = 128 * 1024;

// Without a fixed-size data type there is no shape bound; a generous cap still stops a bomb.
const UNBOUNDED_CAP = 1 << 30;

function codecClass(name: string, run: Inflate, runSync: InflateSync) {
  return class NativeCodec {
    readonly kind = "bytes_to_bytes";
    readonly #bound: number;
    readonly #chunkSize: number | undefined;
    constructor(meta: ChunkShapeMeta) {
      const exact = decodedBound(meta);
      this.#bound = exact ?? UNBOUNDED_CAP;
      // With the decoded size known, one output buffer of that size: no 16 KiB pieces shuttled
      // between the thread pool and the main thread, no concatenation at the end.
      this.#chunkSize = exact === undefined ? undefined : Math.max(exact, 64);
    }
    static fromConfig(_config: unknown, meta: ChunkShapeMeta): NativeCodec {
      return new NativeCodec(meta);
    }
    encode(): never {
      throw new Error(`${name}: encoding is not supported here`);
    }
    async decode(bytes: Uint8Array): Promise<Uint8Array> {
      try {
        const opts = { maxOutputLength: Math.max(this.#bound, 1), chunkSize: this.#chunkSize };
        const out = this.#bound <= INLINE_BYTES ? runSync(bytes, opts) : await run(bytes, opts);
        return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      } catch (e) {
        if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
          throw new CodecInputError(`${name}: expands past the chunk's ${this.#bound} bytes`);
        }
        throw new CodecInputError(`${name}: ${(e as Error).message}`);
      }
    }
  };
}

export const ZstdCodec = codecClass("zstd", promisify(zstdDecompress) as Inflate, zstdDecompressSync);
export const GzipCodec = codecClass("gzip", promisify(gunzip) as Inflate, gunzipSync);
export const ZlibCodec = codecClass("zlib", promisify(inflate) as Inflate, inflateSync);
