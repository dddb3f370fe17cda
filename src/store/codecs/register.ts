// The one hook into zarrita's codec registry: native decoders replace the WebAssembly ones for
// Blosc, Zstandard, gzip and zlib, in both their v3 and v2 (numcodecs) names. Importing this
// module installs them; everything else keeps zarrita's own codecs.
import { registry } from "zarrita";
import { BloscCodec } from "./blosc.ts";
import { GzipCodec, ZlibCodec, ZstdCodec } from "./whole.ts";

const NATIVE = { blosc: BloscCodec, zstd: ZstdCodec, gzip: GzipCodec, zlib: ZlibCodec };

type Entry = Awaited<ReturnType<NonNullable<ReturnType<typeof registry.get>>>>;

for (const [name, codec] of Object.entries(NATIVE)) {
  const entry = async () => codec as unknown as Entry;
  registry.set(name, entry);
  registry.set(`numcodecs.${name}`, entry);
}

export { NATIVE as nativeCodecs };
