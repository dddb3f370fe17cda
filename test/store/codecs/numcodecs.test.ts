// Byte-for-byte: chunks encoded by numcodecs (what zarr-python writes) for every Blosc compressor ×
// shuffle mode × type size, ragged last blocks and stored (memcpyed) chunks, plus Zstd, GZip and
// Zlib, decode to exactly the bytes numpy held — on the decode pool and on the calling thread.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { useNativeAddon } from "../../../src/native.ts";
import { setDecodeThreads } from "../../../src/store/codecs/decode-pool.ts";
import { nativeCodecs } from "../../../src/store/codecs/register.ts";
import { cleanup, PYTHON, tempDir } from "../../helpers/harness.ts";

type Case = { name: string; config: { id: string } & Record<string, unknown>; dtype: string; shape: number[] };

let dir: string;
let cases: Case[];

before(() => {
  dir = tempDir("gridcast-codecs-");
  execFileSync(PYTHON, [join(import.meta.dirname, "../../python/codec_chunks.py"), dir]);
  cases = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
});
after(() => {
  useNativeAddon(true);
  setDecodeThreads(2);
  cleanup(dir);
});

async function decodeCase(c: Case): Promise<Uint8Array> {
  const { id, ...config } = c.config;
  const Codec = nativeCodecs[id as keyof typeof nativeCodecs];
  assert.ok(Codec, `no native codec for ${id}`);
  const codec = Codec.fromConfig(config, { dataType: c.dtype, shape: c.shape });
  return codec.decode(new Uint8Array(readFileSync(join(dir, `${c.name}.enc`))));
}

// The addon's C decoder, then the built-in (JavaScript) decoder on the decode pool and on the calling thread.
for (const [label, native, threads] of [
  ["native addon", true, 2],
  ["built-in, 2 decode threads", false, 2],
  ["built-in, calling thread", false, 0],
] as const) {
  describe(`numcodecs chunks decode byte for byte (${label})`, () => {
    test("every case", async () => {
      useNativeAddon(native);
      setDecodeThreads(threads);
      const seen = new Set<string>();
      for (const c of cases) {
        const raw = readFileSync(join(dir, `${c.name}.raw`));
        const out = await decodeCase(c);
        assert.equal(out.length, raw.length, c.name);
        assert.ok(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(raw), `${c.name} differs`);
        seen.add(c.name.split("-").slice(0, 3).join("-"));
      }
      // The matrix really was exercised: 5 Blosc compressors × 3 shuffles, and the whole-chunk codecs.
      for (const cname of ["lz4", "lz4hc", "zstd", "zlib", "blosclz"]) {
        for (const s of ["noshuffle", "shuffle", "bitshuffle"]) assert.ok(seen.has(`blosc-${cname}-${s}`), cname + s);
      }
      for (const w of ["zstd-1-float32", "gzip-5-int16", "zlib-1-float32", "zstd-small-float64"]) {
        assert.ok(seen.has(w), w);
      }
    });
  });
}

describe("decoding in parallel", () => {
  for (const native of [true, false]) {
    test(`every case decoded at once (${native ? "libuv's pool, the addon" : "the decode pool, 2 threads"}): each result is its own chunk's bytes`, async () => {
      useNativeAddon(native);
      setDecodeThreads(2);
      const outs = await Promise.all(cases.map(decodeCase));
      for (const [i, c] of cases.entries()) {
        const raw = readFileSync(join(dir, `${c.name}.raw`));
        assert.ok(Buffer.from(outs[i].buffer, outs[i].byteOffset, outs[i].byteLength).equals(raw), c.name);
      }
    });
  }
});

describe("the size bound", () => {
  test("a chunk decoded against a smaller shape than it was written for is refused", async () => {
    const names = [
      "blosc-lz4-shuffle-float32-202500-0",
      "blosc-blosclz-bitshuffle-float32-202500-0",
      "zstd-1-float32",
      "gzip-1-float32",
      "zlib-5-int16",
      "zstd-small-float64",
      "gzip-small-float64",
      "zlib-small-float64",
    ];
    // The Blosc chunks through both decoders: the addon's, and the built-in one.
    for (const native of [true, false]) {
      useNativeAddon(native);
      for (const name of names) {
        const c = cases.find((x) => x.name === name);
        assert.ok(c, name);
        await assert.rejects(
          decodeCase({ ...c, shape: c.shape.map((s, i) => (i === c.shape.length - 1 ? s - 1 : s)) }),
          (e: Error) => e.name === "CodecInputError",
          `${name} (${native ? "native" : "built-in"})`,
        );
      }
    }
  });
});
