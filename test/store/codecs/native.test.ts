// The native Blosc decoder (libblosc through native/blosc.c): built and used unless switched off,
// reported in the logs, and usable inside worker threads (a build decodes in its render workers).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { bloscDecoderInUse, nativeBlosc } from "../../../src/store/codecs/native-blosc.ts";
import { PYTHON } from "../../helpers/harness.ts";

const off = process.env.GRIDCAST_NATIVE_BLOSC === "0";

/** A float32 Blosc-lz4 chunk written by numcodecs, and the bytes numpy held. */
function fixture(): { enc: Buffer; raw: Buffer } {
  const code = [
    "import sys, json, base64, numpy as np",
    "from numcodecs.blosc import Blosc",
    "x = np.cumsum(np.random.default_rng(5).normal(size=202500)).astype('float32')",
    "enc = Blosc(cname='lz4', clevel=5, shuffle=Blosc.SHUFFLE).encode(x)",
    "print(json.dumps([base64.b64encode(bytes(enc)).decode(), base64.b64encode(x.tobytes()).decode()]))",
  ].join("\n");
  const [enc, raw] = JSON.parse(execFileSync(PYTHON, ["-c", code], { maxBuffer: 1 << 24 }).toString()) as [
    string,
    string,
  ];
  return { enc: Buffer.from(enc, "base64"), raw: Buffer.from(raw, "base64") };
}

describe("the native Blosc decoder", { skip: off && "GRIDCAST_NATIVE_BLOSC=0" }, () => {
  test("is built and loaded, and the logs name it with libblosc's version", () => {
    const addon = nativeBlosc();
    assert.ok(addon, "build/native/blosc.node is not built or does not load (npm run native)");
    assert.match(addon.version(), /^1\.\d+\.\d+/);
    assert.match(addon.compressors(), /lz4/);
    assert.match(bloscDecoderInUse(), /^libblosc 1\.\d+\.\d+ \(native\)$/);
  });

  test("decodes on libuv's pool and on the calling thread to numpy's bytes; refuses a wrong size", async () => {
    const addon = nativeBlosc()!;
    const { enc, raw } = fixture();
    const out = new Uint8Array(raw.length);
    assert.equal(await addon.decode(enc, out), raw.length);
    assert.ok(Buffer.from(out).equals(raw));
    const again = new Uint8Array(raw.length);
    assert.equal(addon.decodeSync(enc, again), raw.length);
    assert.ok(Buffer.from(again).equals(raw));
    // An output that is not exactly the stated size is never written.
    assert.ok((await addon.decode(enc, new Uint8Array(raw.length - 4))) < 0);
    // Only byte arrays are taken.
    assert.throws(() => addon.decodeSync(new Float32Array(4) as never, out), TypeError);
  });

  test("loads and decodes inside a worker thread", async () => {
    const { enc, raw } = fixture();
    const url = new URL("../../../src/store/codecs/native-blosc.ts", import.meta.url).href;
    const worker = new Worker(
      `import { parentPort, workerData } from "node:worker_threads";
       const { nativeBlosc } = await import(workerData.url);
       const out = new Uint8Array(workerData.size);
       const n = nativeBlosc().decodeSync(workerData.enc, out);
       parentPort.postMessage({ n, out }, [out.buffer]);`,
      { eval: true, workerData: { url, enc: new Uint8Array(enc), size: raw.length } },
    );
    const got = await new Promise<{ n: number; out: Uint8Array }>((ok, fail) => {
      worker.once("message", ok);
      worker.once("error", fail);
    });
    await worker.terminate();
    assert.equal(got.n, raw.length);
    assert.ok(Buffer.from(got.out).equals(raw));
  });
});
