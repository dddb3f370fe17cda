// The Blosc codec (v3 "blosc", v2 "numcodecs.blosc"). With the native addon (src/native.ts) a
// chunk goes to its C decoder (on libuv's thread pool when large) once its header, block table and
// stream lengths have been checked against the buffer and the decoded-size bound. Without it, or
// when the chunk's compressor is not available to it (a runtime library missing, snappy), the
// JavaScript decoder runs on the decode pool, and chunks that one has no decoder for (blosclz,
// snappy) go to the WebAssembly codec, after the same header check.
import { isMainThread } from "node:worker_threads";
import { nativeAddon } from "../../native.ts";
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
    if (this.#bound === undefined) return wasmDecode(bytes, this.#config);
    const addon = nativeAddon();
    if (addon) return decodeNative(addon, bytes, this.#bound);
    return decodeInJs(bytes, this.#bound, this.#config);
  }
}

let wasm: Promise<WasmCodec> | undefined;
function wasmDecode(bytes: Uint8Array, config: Record<string, unknown> = {}): Promise<Uint8Array> {
  // The configuration only matters for encoding: one instance decodes every chunk.
  wasm ??= import("numcodecs/blosc").then((m) => m.default.fromConfig(config as never) as WasmCodec);
  return wasm.then((c) => c.decode(bytes));
}

/** A chunk through the JavaScript decoder (on the decode pool), else the WebAssembly codec. */
async function decodeInJs(bytes: Uint8Array, bound: number, config?: Record<string, unknown>): Promise<Uint8Array> {
  const out = await decodeBloscPooled(bytes, bound);
  if (out !== UNSUPPORTED) return out;
  parseBloscHeader(bytes, bound); // checked on the pool already; the fallback trusts it
  const decoded = await wasmDecode(bytes, config);
  if (decoded.length > bound) throw new CodecInputError("blosc: decoded past the chunk's size");
  return decoded;
}

/** What the addon returns for a chunk whose compressor it has no library for here. */
const UNAVAILABLE = -103;

/**
 * A Blosc chunk decoded by the addon's C decoder (or, for a compressor it lacks here, by
 * JavaScript), into `into` when given (a reused buffer of exactly the decoded
 * size; bulk reads pass one), else into a new buffer.
 */
export async function decodeNative(
  addon: NonNullable<ReturnType<typeof nativeAddon>>,
  bytes: Uint8Array,
  bound: number,
  into?: Uint8Array,
): Promise<Uint8Array> {
  const h = parseBloscHeader(bytes, bound);
  if (h.nbytes === 0) return new Uint8Array(0);
  if (into && into.length !== h.nbytes) {
    throw new CodecInputError(`blosc: the chunk holds ${h.nbytes} bytes, ${into.length} expected`);
  }
  // Prove the layout the decoder will follow stays inside the buffer (parseBloscHeader checked the
  // stored copy of a memcpyed chunk); the C checks it again itself.
  if (!h.memcpyed) walkBloscStreams(bytes, h);
  // Not zero-filled: it is returned only when the decoder reports having written every byte of it.
  const out = into ?? new Uint8Array(Buffer.allocUnsafeSlow(h.nbytes).buffer, 0, h.nbytes);
  const n = h.nbytes <= INLINE_BYTES || !isMainThread ? addon.decodeSync(bytes, out) : await addon.decode(bytes, out);
  if (n === UNAVAILABLE) {
    const decoded = await decodeInJs(bytes, bound);
    if (decoded.length !== h.nbytes) throw new CodecInputError(`blosc: decoded ${decoded.length} of ${h.nbytes} bytes`);
    if (!into) return decoded;
    into.set(decoded);
    return into;
  }
  if (n !== h.nbytes) {
    throw new CodecInputError(
      n < 0
        ? `blosc: the chunk cannot be decoded (native decoder error ${n})`
        : `blosc: decoded ${n} of ${h.nbytes} bytes`,
    );
  }
  return out;
}
