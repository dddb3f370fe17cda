// The native addon (native/gridcast.c): its Blosc decoder built and used unless switched off,
// reported in the logs with the runtime libraries it found, and usable inside worker threads (a
// build decodes in its render workers); libzstd into a caller's buffer; whole files read in one job;
// a chunk decoded and its runs copied out in one job.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { zstdCompressSync } from "node:zlib";
import { nativeAddon, nativeDecoderInUse } from "../../../src/native.ts";
import { cleanup, PYTHON, tempDir } from "../../helpers/harness.ts";

const off = process.env.GRIDCAST_NATIVE === "0";

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

describe("the native Blosc decoder", { skip: off && "GRIDCAST_NATIVE=0" }, () => {
  test("is built and loaded, and the logs name it with the libraries it found", () => {
    const addon = nativeAddon();
    assert.ok(addon, "build/native/gridcast.node is not built or does not load (npm run native)");
    assert.match(addon.version(), /^gridcast C \(blosclz; lz4 1\.\d+\.\d+; zstd 1\.\d+\.\d+; zlib 1\.\d+/);
    assert.equal(addon.compressors(), "blosclz,lz4,lz4hc,zlib,zstd");
    assert.match(
      nativeDecoderInUse(),
      /^native, gridcast C \(blosclz; lz4 1\.\d+\.\d+; zstd 1\.\d+\.\d+; zlib 1\.[\d.]+\)$/,
    );
  });

  test("decodes Zstandard with the system's libzstd.so.1 where there is one (fewer instructions than Node's copy)", (t) => {
    // The library the dynamic loader finds for libzstd.so.1, by its file name (libzstd.so.1.5.4).
    const found = /libzstd\.so\.1 \(libc6,x86-64\) => (\S+)/.exec(execFileSync("/sbin/ldconfig", ["-p"]).toString());
    if (!found) {
      t.skip("no libzstd.so.1 on this machine: the addon takes Node's own Zstandard");
      return;
    }
    const version = /libzstd\.so\.(\d+\.\d+\.\d+)$/.exec(realpathSync(found[1]))?.[1];
    assert.ok(version, `cannot tell the version of ${found[1]}`);
    assert.match(nativeAddon()!.version(), new RegExp(`; zstd ${version.replaceAll(".", "\\.")};`));
  });

  test("decodes on libuv's pool and on the calling thread to numpy's bytes; refuses a wrong size", async () => {
    const addon = nativeAddon()!;
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

  test("decodes Zstandard frames into a caller's buffer, refusing a frame larger than it", async () => {
    const addon = nativeAddon()!;
    assert.ok(addon.zstdDecode && addon.zstdDecodeSync, "libzstd.so.1 was not found when the addon loaded");
    const { raw } = fixture();
    const enc = zstdCompressSync(raw);
    const out = new Uint8Array(raw.length);
    assert.equal(await addon.zstdDecode(enc, out), raw.length);
    assert.ok(Buffer.from(out).equals(raw));
    assert.equal(addon.zstdDecodeSync(enc, out.fill(0)), raw.length);
    assert.ok(Buffer.from(out).equals(raw));
    assert.ok((await addon.zstdDecode(enc, new Uint8Array(raw.length - 1))) < 0);
    assert.ok((await addon.zstdDecode(enc.subarray(0, enc.length - 9), out)) < 0);
  });

  test("decodes a chunk and copies its runs into a caller's array in one job (decodeRuns), writing nothing unless it decoded whole", async () => {
    const addon = nativeAddon()!;
    assert.ok(addon.decodeRuns, "the addon predates decodeRuns (npm run native)");
    const { enc, raw } = fixture();
    const chunk = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
    // The chunk as 450 × 450; rows 10–29, columns 5–404 into a 20 × 400 array, rows reversed.
    const geom = Float64Array.from([10 * 450 + 5, 19 * 400, 400, 1, 20, 450, -400]);
    const expect = new Float32Array(20 * 400);
    for (let r = 0; r < 20; r++) {
      for (let c = 0; c < 400; c++) expect[(19 - r) * 400 + c] = chunk[(10 + r) * 450 + 5 + c];
    }
    const frames: [0 | 1 | 2, Uint8Array][] = [
      [0, enc],
      [1, zstdCompressSync(raw)],
      [2, new Uint8Array(raw)],
    ];
    for (const [codec, stored] of frames) {
      const out = new Float32Array(20 * 400).fill(-1);
      assert.equal(await addon.decodeRuns(codec, stored, raw.length, out, geom), raw.length, `codec ${codec}`);
      assert.deepEqual(out, expect, `codec ${codec}`);
      // A chunk that does not decode to exactly its size leaves the output as it was.
      const untouched = new Float32Array(20 * 400).fill(-1);
      const cut = stored.subarray(0, stored.length - 9);
      assert.notEqual(await addon.decodeRuns(codec, cut, raw.length, untouched, geom), raw.length);
      assert.notEqual(await addon.decodeRuns(codec, stored, raw.length + 4, untouched, geom), raw.length + 4);
      assert.ok(
        untouched.every((v) => v === -1),
        `codec ${codec}: written after a failed decode`,
      );
    }
    // Runs outside the chunk or the output are refused before anything is queued.
    const out = new Float32Array(20 * 400);
    for (const bad of [
      [449 * 450, 0, 451, 0],
      [0, 0, 400, 1, 21, 450, 400],
      [0, 1, 400, 1, 20, 450, 400],
    ]) {
      assert.throws(() => addon.decodeRuns!(0, enc, raw.length, out, Float64Array.from(bad)), RangeError, String(bad));
    }
    assert.throws(() => addon.decodeRuns!(3 as never, enc, raw.length, out, geom), TypeError);
    assert.throws(() => addon.decodeRuns!(0, enc, raw.length, out, Float64Array.from([0.5, 0, 1, 0])), TypeError);
    assert.throws(() => addon.decodeRuns!(0, enc, raw.length - 2, out, geom), TypeError, "not whole items");
  });

  test("reads a whole file into a buffer in one job: missing, directory, too large, NUL in the path, outside the root", async () => {
    const addon = nativeAddon()!;
    const dir = tempDir("gridcast-readfile-");
    try {
      const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
      writeFileSync(join(dir, "f"), bytes);
      const into = new Uint8Array(8192);
      assert.equal(await addon.readFile(join(dir, "f"), into), 5000);
      assert.ok(Buffer.from(into.subarray(0, 5000)).equals(bytes));
      assert.equal(await addon.readFile(join(dir, "missing"), into), -2);
      assert.equal(await addon.readFile(dir, into), -21);
      assert.equal(await addon.readFile(join(dir, "f"), new Uint8Array(4999)), -100000);
      assert.throws(() => addon.readFile(`${join(dir, "f")}\0x`, into), TypeError);
      // Given the store's real root, the path (relative to it) is opened below it: symlinks are
      // followed only while they stay inside, by openat2 or (walk) one component at a time.
      mkdirSync(join(dir, "root"));
      mkdirSync(join(dir, "root-evil"));
      writeFileSync(join(dir, "root", "in"), bytes);
      writeFileSync(join(dir, "root-evil", "x"), bytes);
      symlinkSync(join(dir, "f"), join(dir, "root", "out"));
      symlinkSync(join(dir, "root-evil", "x"), join(dir, "root", "sibling"));
      symlinkSync(join(dir, "root", "in"), join(dir, "root", "inner"));
      mkdirSync(join(dir, "root", "sub"));
      symlinkSync("../in", join(dir, "root", "sub", "up"));
      symlinkSync("../../f", join(dir, "root", "sub", "climb"));
      symlinkSync("sub", join(dir, "root", "sublink"));
      const root = join(dir, "root");
      for (const walk of [false, true]) {
        assert.equal(await addon.readFile("in", into, root, walk), 5000);
        assert.equal(await addon.readFile("inner", into, root, walk), 5000, "an absolute link that stays inside");
        assert.equal(await addon.readFile("sub/up", into, root, walk), 5000);
        assert.equal(await addon.readFile("sublink/up", into, root, walk), 5000);
        assert.equal(await addon.readFile("out", into, root, walk), -100002);
        assert.equal(await addon.readFile("sibling", into, root, walk), -100002);
        assert.equal(await addon.readFile("sub/climb", into, root, walk), -100002);
        assert.equal(await addon.readFile("../f", into, root, walk), -100002);
        assert.equal(await addon.readFile("gone", into, root, walk), -2);
        assert.equal(await addon.readFile("sub", into, root, walk), -21);
        assert.equal(await addon.readFile(join(root, "in").slice(1), into, "/", walk), 5000);
      }
      assert.throws(() => addon.readFile("in", into, `${root}\0`), TypeError);
    } finally {
      cleanup(dir);
    }
  });

  test("loads and decodes inside a worker thread", async () => {
    const { enc, raw } = fixture();
    const url = new URL("../../../src/native.ts", import.meta.url).href;
    const worker = new Worker(
      `import { parentPort, workerData } from "node:worker_threads";
       const { nativeAddon } = await import(workerData.url);
       const out = new Uint8Array(workerData.size);
       const n = nativeAddon().decodeSync(workerData.enc, out);
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
