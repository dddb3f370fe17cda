// The Blosc codec (v3 "blosc", v2 "numcodecs.blosc"), decoded natively on the decode pool. Chunks
// whose compressor has no native decoder here (blosclz, snappy) go to the WebAssembly codec, but
// only after their header has passed the same size bound.

import { UNSUPPORTED } from "./blosc-decode.ts";
import { parseBloscHeader } from "./blosc-header.ts";
import { type ChunkShapeMeta, CodecInputError, decodedBound } from "./bound.ts";
import { decodeBloscPooled } from "./decode-pool.ts";

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
