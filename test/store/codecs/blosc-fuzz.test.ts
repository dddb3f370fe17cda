// Truncated and lying Blosc chunks, through the built-in decoder, through the addon's C decoder as
// the codec calls it, and straight into the C with no JavaScript check in front: every failure is
// a CodecInputError with a message (or, straight into C, a negative result), the output never
// exceeds the bound, and every call returns (no hang, no crash of the process). Valid chunks come
// from numcodecs; mutations are seeded, so a failure reproduces.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { nativeAddon } from "../../../src/native.ts";
import { BloscCodec } from "../../../src/store/codecs/blosc.ts";
import { decodeBlosc, UNSUPPORTED } from "../../../src/store/codecs/blosc-decode.ts";
import { CodecInputError } from "../../../src/store/codecs/bound.ts";
import { PYTHON } from "../../helpers/harness.ts";

const SCRIPT = `
import base64, json, numpy as np
from numcodecs.blosc import Blosc
rng = np.random.default_rng(3)
x = np.cumsum(rng.normal(size=3000)).astype("float32")
out = []
for cname, shuffle, blocksize in [("lz4", 1, 2048), ("zstd", 2, 4096), ("zlib", 0, 0), ("lz4", 2, 1024), ("blosclz", 1, 0)]:
    out.append(base64.b64encode(bytes(Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize).encode(x))).decode())
out.append(base64.b64encode(bytes(Blosc(cname="lz4", shuffle=1).encode(rng.integers(0, 256, 3000 * 4, dtype="uint8")))).decode())
print(json.dumps({"raw": base64.b64encode(x.tobytes()).decode(), "chunks": out}))
`;
const fixture = JSON.parse(execFileSync(PYTHON, ["-c", SCRIPT]).toString()) as { raw: string; chunks: string[] };
const raw = Buffer.from(fixture.raw, "base64");
const chunks = fixture.chunks.map((c) => new Uint8Array(Buffer.from(c, "base64")));
const BOUND = raw.length;

/** Deterministic xorshift32. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

let slowest = 0;
type Decode = (bytes: Uint8Array) => Uint8Array | typeof UNSUPPORTED | Promise<Uint8Array>;
const builtIn: Decode = (bytes) => decodeBlosc(bytes, BOUND);
// The codec as zarrita calls it, with the addon behind it (chunks this small decode inline).
const nativeCodec = BloscCodec.fromConfig({}, { dataType: "float32", shape: [BOUND / 4] });
const native: Decode = (bytes) => nativeCodec.decode(bytes);
// The C alone: given whatever output size the (lying) header states, up to the bound.
const cOnly: Decode = (bytes) => {
  const addon = nativeAddon();
  assert.ok(addon);
  const stated = bytes.length >= 8 ? new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true) : 0;
  const out = new Uint8Array(Math.min(stated, BOUND));
  const n = addon.decodeSync(bytes, out);
  if (n === -103) return UNSUPPORTED;
  if (n < 0) throw new CodecInputError(`blosc: refused (${n})`);
  assert.equal(n, out.length);
  return out;
};

/** Decode a hostile input: a clear error, a refusal to the fallback, or output within the bound. */
async function attempt(decode: Decode, bytes: Uint8Array, what: string): Promise<"error" | "ok"> {
  const t0 = performance.now();
  try {
    const out = await decode(bytes);
    if (out !== UNSUPPORTED) assert.ok(out.length <= BOUND, `${what}: ${out.length} bytes past the bound`);
    return "ok";
  } catch (e) {
    assert.ok(e instanceof CodecInputError, `${what}: ${(e as Error).name}: ${(e as Error).message}`);
    assert.ok(e.message.startsWith("blosc") || /^(lz4|zstd|zlib)/.test(e.message), e.message);
    return "error";
  } finally {
    slowest = Math.max(slowest, performance.now() - t0);
  }
}

test("the native decoder is the one under test unless switched off", () => {
  assert.ok(process.env.GRIDCAST_NATIVE === "0" || nativeAddon(), "native addon not loaded");
});

for (const [label, decode] of [
  ["built-in decoder", builtIn],
  ["the addon's C decoder through the codec", native],
  ...(nativeAddon() ? [["the addon's C decoder alone", cOnly] as const] : []),
] as const) {
  describe(`Blosc chunks under hostile input (${label})`, () => {
    test("the untouched chunks decode to numpy's bytes", async () => {
      for (const c of chunks.slice(0, 4)) {
        const out = await decode(c);
        assert.ok(out !== UNSUPPORTED && Buffer.from(out).equals(raw));
      }
      if (decode === builtIn)
        assert.equal(decodeBlosc(chunks[4], BOUND), UNSUPPORTED); // blosclz: the fallback's job
      else assert.ok(Buffer.from((await decode(chunks[4])) as Uint8Array).equals(raw)); // the C has blosclz
    });

    test("every truncation, with the header's size left as is and made to agree", async () => {
      let errors = 0;
      for (const [i, c] of chunks.entries()) {
        for (let n = 0; n < c.length; n++) {
          const cut = c.slice(0, n);
          if ((await attempt(decode, cut, `chunk ${i} cut at ${n}`)) === "error") errors++;
          if (n >= 16) {
            new DataView(cut.buffer).setUint32(12, n, true); // a header that agrees with the short buffer
            await attempt(decode, cut, `chunk ${i} cut at ${n}, cbytes patched`);
          }
        }
        assert.ok(errors >= c.length - 1, `chunk ${i}: truncations must fail`);
      }
    });

    test("lying header fields and block tables", async () => {
      const next = rng(18);
      const specials = (len: number) => [
        0,
        1,
        3,
        15,
        16,
        len - 1,
        len,
        len + 1,
        BOUND,
        BOUND + 1,
        0x7fffffff,
        0xffffffff,
      ];
      let ran = 0;
      for (const [i, c] of chunks.entries()) {
        const nblocks = Math.ceil(raw.length / new DataView(c.buffer).getUint32(8, true));
        const tableEnd = Math.min(c.length - 4, 16 + 4 * nblocks + 8);
        // Every u32 of the header and the block table (and the first stream sizes) set to edge values.
        for (let at = 4; at <= tableEnd; at += 4) {
          for (const v of specials(c.length)) {
            const m = c.slice();
            new DataView(m.buffer).setUint32(at, v >>> 0, true);
            await attempt(decode, m, `chunk ${i}: u32 at ${at} = ${v}`);
            ran++;
            if (at === 4 && v > BOUND && decode !== cOnly) {
              // A decoded size past the bound is refused from the header, before any allocation.
              await assert.rejects(async () => decode(m), /header claims \d+ bytes, the chunk holds/);
            }
          }
        }
        // Each header byte (version, flags, typesize) through all 256 values.
        for (const at of [0, 1, 2, 3]) {
          for (let v = 0; v < 256; v++) {
            const m = c.slice();
            m[at] = v;
            await attempt(decode, m, `chunk ${i}: byte ${at} = ${v}`);
            ran++;
          }
        }
        // Random byte mutations anywhere.
        for (let k = 0; k < 400; k++) {
          const m = c.slice();
          const flips = 1 + (next() % 4);
          for (let f = 0; f < flips; f++) m[next() % m.length] = next() & 255;
          await attempt(decode, m, `chunk ${i}: random mutation ${k}`);
          ran++;
        }
      }
      assert.ok(ran > 5000);
      // Not a speed claim: a hang or a runaway loop would show as many seconds here (a loaded
      // machine running two suites at once has paused a single decode for a second).
      assert.ok(slowest < 10_000, `slowest decode ${slowest} ms`);
    });
  });
}
