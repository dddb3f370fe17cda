// The Blosc codec (v3 "blosc", v2 "numcodecs.blosc"). With the native addon (src/native.ts) a
// chunk goes to c-blosc on libuv's thread pool once its header, block table and stream lengths
// have been checked against the buffer and the decoded-size bound. Without it, the built-in
// decoder runs on the decode pool, and chunks it has no decoder for (blosclz, snappy) go to the
// WebAssembly codec, after the same header check.
import { isMainThread } from "node:worker_threads";
import { nativeBlosc } from "../../native.ts";
import { UNSUPPORTED } from "./blosc-decode.ts";
import { parseBloscHeader, walkBloscStreams } from "./blosc-header.ts";
import { type ChunkShapeMeta, CodecInputError, decodedBound } from "./bound.ts";
import { decodeBloscPooled } from "./decode-pool.ts";

// Chunks up to this size decode on the calling thread: a trip through the thread pool would cost
// more than the decoding. So do all chunks inside worker threads (a build's render workers),
// whose siblings are the parallelism.
const INLINE_BYTES = 128 * 1024;

type WasmCodec = { decode(bytes: Uint8Array): Promise<Uint8Array> | Uint8Array };

export class BloscCodec {
  readonly kind = "bytes_to_bytes";
  readonly #config: Record<string, unknown>;
  readonly #bound: number | undefined;
  #wasm: Promise<WasmCodec> | undefined;

  constructor(config: Record<string, unknown>, meta: ChunkShapeMeta) {
    this.#config = config;
    this.#bound = decodedBound(meta);
  }

  static fromConfig(config: unknown, meta: ChunkShapeMeta): BloscCodec {
    return new BloscCodec((config ?? {}) as Record<string, unknown>, meta);
  }

  encode(): never {
    throw new Error("blosc: encoding is not supported here");
  }

  async decode(bytes: Uint8Array): Promise<Uint8Array> {
    if (this.#bound === undefined) return this.#fallback(bytes);
    const addon = nativeBlosc();
    if (addon) return decodeNative(addon, bytes, this.#bound);
    const out = await decodeBloscPooled(bytes, this.#bound);
    if (out !== UNSUPPORTED) return out;
    parseBloscHeader(bytes, this.#bound); // checked on the pool already; the fallback trusts it
    const decoded = await this.#fallback(bytes);
    if (decoded.length > this.#bound) throw new CodecInputError("blosc: decoded past the chunk's size");
    return decoded;
  }

  #fallback(bytes: Uint8Array): Promise<Uint8Array> {
    this.#wasm ??= import("numcodecs/blosc").then((m) => m.default.fromConfig(this.#config as never) as WasmCodec);
    return this.#wasm.then((c) => c.decode(bytes));
  }
}

/**
 * A Blosc chunk decoded by c-blosc, into `into` when given (a reused buffer of exactly the decoded
 * size; bulk reads pass one), else into a new buffer.
 */
export async function decodeNative(
  addon: NonNullable<ReturnType<typeof nativeBlosc>>,
  bytes: Uint8Array,
  bound: number,
  into?: Uint8Array,
): Promise<Uint8Array> {
  const h = parseBloscHeader(bytes, bound);
  if (h.nbytes === 0) return new Uint8Array(0);
  if (into && into.length !== h.nbytes) {
    throw new CodecInputError(`blosc: the chunk holds ${h.nbytes} bytes, ${into.length} expected`);
  }
  // Prove the layout c-blosc will follow stays inside the buffer (parseBloscHeader checked the
  // stored copy of a memcpyed chunk).
  if (!h.memcpyed) walkBloscStreams(bytes, h);
  // Not zero-filled: it is returned only when c-blosc reports having written every byte of it.
  const out = into ?? new Uint8Array(Buffer.allocUnsafeSlow(h.nbytes).buffer, 0, h.nbytes);
  const n = h.nbytes <= INLINE_BYTES || !isMainThread ? addon.decodeSync(bytes, out) : await addon.decode(bytes, out);
  if (n !== h.nbytes) {
    throw new CodecInputError(
      n < 0 ? `blosc: the chunk cannot be decoded (c-blosc error ${n})` : `blosc: decoded ${n} of ${h.nbytes} bytes`,
    );
  }
  return out;
}
