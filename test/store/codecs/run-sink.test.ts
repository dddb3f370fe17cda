// decodeRuns with Blosc chunks: each block is unshuffled (byte shuffle), bit-unshuffled or copied
// straight into the runs of the output (native/run-sink.h) instead of into a decoded chunk copied
// out afterwards, and only the blocks the runs read are decoded. Compared with numpy's bytes of
// chunks numcodecs wrote, for every element size a typed array has, every shuffle mode, blocks
// small enough that runs straddle them, and geometries whose runs are contiguous, spread out,
// reversed in the output, or reversed in the chunk (which the direct way declines: copied whole).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { nativeAddon } from "../../../src/native.ts";
import { PYTHON } from "../../helpers/harness.ts";

const off = process.env.GRIDCAST_NATIVE === "0";
// The chunk: 12 × 20 × 7 items.
const SHAPE = [12, 20, 7];
const ITEMS = SHAPE[0] * SHAPE[1] * SHAPE[2];
const TYPES = [
  { np: "uint8", Arr: Uint8Array },
  { np: "uint16", Arr: Uint16Array },
  { np: "uint32", Arr: Uint32Array },
  { np: "uint64", Arr: BigUint64Array },
] as const;

interface Case {
  dtype: string;
  cname: string;
  shuffle: number;
  blocksize: number;
  enc: string;
}

function fixtures(): { raw: Record<string, string>; cases: Case[] } {
  const code = [
    "import json, base64, numpy as np",
    "from numcodecs.blosc import Blosc",
    "rng = np.random.default_rng(26)",
    `n = ${ITEMS}`,
    "out = {'raw': {}, 'cases': []}",
    "for dt in ['uint8', 'uint16', 'uint32', 'uint64']:",
    "    x = (np.cumsum(rng.integers(0, 5, size=n)) + (np.arange(n) % 7) * 1000).astype(dt)",
    "    out['raw'][dt] = base64.b64encode(x.tobytes()).decode()",
    "    for cname in ['lz4', 'blosclz', 'zstd']:",
    "        for shuffle in [Blosc.NOSHUFFLE, Blosc.SHUFFLE, Blosc.BITSHUFFLE]:",
    "            for blocksize in [0, 256, 1000]:",
    "                enc = Blosc(cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize).encode(x)",
    "                out['cases'].append(dict(dtype=dt, cname=cname, shuffle=shuffle, blocksize=blocksize,",
    "                                         enc=base64.b64encode(bytes(enc)).decode()))",
    "print(json.dumps(out))",
  ].join("\n");
  return JSON.parse(execFileSync(PYTHON, ["-c", code], { maxBuffer: 1 << 26 }).toString());
}

type Geom = number[];
/** The runs of a geometry copied item by item: what decodeRuns must produce. */
function expected<T extends ArrayLike<unknown> & { [i: number]: unknown }>(src: T, dst: T, g: Geom): void {
  const [s0, t0, n, k] = g;
  const cnt = g.slice(4, 4 + k);
  const ss = g.slice(4 + k, 4 + 2 * k);
  const ds = g.slice(4 + 2 * k, 4 + 3 * k);
  const idx = new Array(k).fill(0);
  for (;;) {
    let s = s0;
    let t = t0;
    for (let d = 0; d < k; d++) {
      s += idx[d] * ss[d];
      t += idx[d] * ds[d];
    }
    for (let i = 0; i < n; i++) dst[t + i] = src[s + i];
    let d = k - 1;
    while (d >= 0 && ++idx[d] === cnt[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

const [Y, X, F] = SHAPE;
const GEOMS: Record<string, { geom: Geom; out: number }> = {
  "the whole chunk as one run": { geom: [0, 0, ITEMS, 0], out: ITEMS },
  "whole rows into a wider output": { geom: [0, 3, X * F, 1, Y, X * F, X * F + 5], out: Y * (X * F + 5) + 3 },
  "a box of rows 1–4, columns 2–8, features 1–5": {
    geom: [1 * X * F + 2 * F + 1, 0, 5, 2, 4, 7, X * F, F, 7 * 5, 5],
    out: 4 * 7 * 5,
  },
  "single items, every other one": { geom: [1, 0, 1, 1, ITEMS >> 1, 2, 1], out: ITEMS >> 1 },
  "rows reversed in the output": { geom: [0, (Y - 1) * X * F, X * F, 1, Y, X * F, -X * F], out: ITEMS },
  "rows reversed in the chunk": { geom: [(Y - 1) * X * F, 0, X * F, 1, Y, -X * F, X * F], out: ITEMS },
  // Runs in part of the chunk: the blocks outside them are not decoded, and in the last block
  // they reach only the head of each byte plane is (LZ4's partial decoder).
  "the first row only": { geom: [0, 0, X * F, 0], out: X * F },
  "the first item only": { geom: [0, 0, 1, 0], out: 1 },
  "the last row only": { geom: [(Y - 1) * X * F, 0, X * F, 0], out: X * F },
  "features 2–4 of row 5": { geom: [5 * X * F + 2, 0, 3, 1, X, F, 3], out: X * 3 },
};

/** expected() for the items whose place in the chunk lies in [w0, w1) only. */
function expectedIn<T extends ArrayLike<unknown> & { [i: number]: unknown }>(
  src: T,
  dst: T,
  g: Geom,
  w0: number,
  w1: number,
): void {
  const [s0, t0, n, k] = g;
  const cnt = g.slice(4, 4 + k);
  const ss = g.slice(4 + k, 4 + 2 * k);
  const ds = g.slice(4 + 2 * k, 4 + 3 * k);
  const idx = new Array(k).fill(0);
  for (;;) {
    let s = s0;
    let t = t0;
    for (let d = 0; d < k; d++) {
      s += idx[d] * ss[d];
      t += idx[d] * ds[d];
    }
    for (let i = 0; i < n; i++) if (s + i >= w0 && s + i < w1) dst[t + i] = src[s + i];
    let d = k - 1;
    while (d >= 0 && ++idx[d] === cnt[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

describe("decodeRuns unshuffling Blosc blocks straight into the runs", { skip: off && "GRIDCAST_NATIVE=0" }, () => {
  test("matches numpy's bytes for every element size, shuffle, block size and geometry; leaves the rest alone", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns, "the addon is not built (npm run native)");
    const { raw, cases } = fixtures();
    assert.equal(cases.length, 4 * 3 * 3 * 3);
    let checked = 0;
    let direct = 0;
    for (const c of cases) {
      const { Arr } = TYPES.find((t) => t.np === c.dtype)!;
      const bytes = Buffer.from(raw[c.dtype], "base64");
      const chunk = new Arr(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      const stored = new Uint8Array(Buffer.from(c.enc, "base64"));
      // Byte-shuffled, not stored whole, more than one block: the direct way, runs straddling blocks.
      const [flags, ts] = [stored[2], stored[3]];
      if (flags & 1 && !(flags & 2) && ts > 1 && Buffer.from(stored).readUInt32LE(8) < bytes.length) direct++;
      for (const [name, { geom, out: size }] of Object.entries(GEOMS)) {
        const sentinel = c.dtype === "uint64" ? 0xdeadn : 0x5a;
        const want = new Arr(size).fill(sentinel as never);
        expected(chunk as never, want as never, geom);
        const got = new Arr(size).fill(sentinel as never);
        const what = `${c.dtype} ${c.cname} shuffle ${c.shuffle} blocksize ${c.blocksize}: ${name}`;
        const n: number = await addon.decodeRuns(0, stored, bytes.length, got as never, Float64Array.from(geom));
        assert.equal(n, bytes.length, what);
        assert.deepEqual(got, want, what);
        checked++;
      }
    }
    assert.equal(checked, cases.length * Object.keys(GEOMS).length);
    assert.ok(direct >= 10, `only ${direct} chunks took the direct way`);
  });

  test("a window of the chunk's items places only those; two windows that meet place the whole", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns);
    const { raw, cases } = fixtures();
    let windowed = 0;
    for (const c of cases.filter((k) => k.dtype === "uint32" || k.dtype === "uint16")) {
      const { Arr } = TYPES.find((t) => t.np === c.dtype)!;
      const bytes = Buffer.from(raw[c.dtype], "base64");
      const chunk = new Arr(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      const stored = new Uint8Array(Buffer.from(c.enc, "base64"));
      // Every shuffle mode, and a chunk stored whole, whose type size is the items': only the
      // window's items are placed (a chunk with a delta filter, or both shuffles, would be placed
      // whole by the window that starts at 0 and left alone by the others; numcodecs writes neither).
      const unshuffled = (stored[2] & 8) === 0 && stored[3] === chunk.BYTES_PER_ELEMENT;
      const blockItems = Math.floor(Buffer.from(stored).readUInt32LE(8) / stored[3]);
      // On a block boundary (each block decoded by one job) and inside a block (decoded by both).
      for (const cut of [blockItems, 2 * blockItems, Math.floor(ITEMS / 3), ITEMS - 1]) {
        for (const [name, { geom, out: size }] of Object.entries(GEOMS)) {
          // Runs rising through the chunk; the reversed one is declined whatever the window.
          if (name === "rows reversed in the chunk") continue;
          const what = `${c.dtype} ${c.cname} shuffle ${c.shuffle} blocksize ${c.blocksize}: ${name}, cut at ${cut}`;
          const g = Float64Array.from(geom);
          const head = new Arr(size).fill(0x5a as never);
          const wantHead = new Arr(size).fill(0x5a as never);
          expectedIn(chunk as never, wantHead as never, geom, 0, unshuffled ? cut : ITEMS);
          assert.equal(await addon.decodeRuns(0, stored, bytes.length, head as never, g, 0, cut), bytes.length, what);
          assert.deepEqual(head, wantHead, `${what}: the first window`);
          const tail = new Arr(size).fill(0x5a as never);
          const wantTail = new Arr(size).fill(0x5a as never);
          if (unshuffled) expectedIn(chunk as never, wantTail as never, geom, cut, ITEMS);
          assert.equal(await addon.decodeRuns(0, stored, bytes.length, tail as never, g, cut), bytes.length, what);
          assert.deepEqual(tail, wantTail, `${what}: the second window`);
          // Both into one output: the whole geometry, as one job places it.
          const want = new Arr(size).fill(0x5a as never);
          expected(chunk as never, want as never, geom);
          await addon.decodeRuns(0, stored, bytes.length, head as never, g, cut, Number.POSITIVE_INFINITY);
          assert.deepEqual(head, want, `${what}: both windows`);
          if (unshuffled) windowed++;
        }
      }
    }
    assert.ok(windowed > 1000, `only ${windowed} windowed reads took the direct way`);
    assert.throws(
      () => addon.decodeRuns!(0, new Uint8Array(16), 16, new Uint32Array(4), Float64Array.from([0, 0, 4, 0]), 3, 2),
      TypeError,
    );
  });

  test("a window never reads the blocks outside it: damage there goes unseen, damage inside is reported", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns);
    const { raw, cases } = fixtures();
    const c = cases.find((k) => k.dtype === "uint32" && k.cname === "lz4" && k.shuffle === 1 && k.blocksize === 256)!;
    const stored = Buffer.from(c.enc, "base64");
    const plain = Buffer.from(raw.uint32, "base64");
    const chunk = new Uint32Array(plain.buffer.slice(plain.byteOffset, plain.byteOffset + plain.length));
    const bytes = plain.length;
    const blockItems = 256 / 4;
    // The last block's first stream cut to one byte.
    const cut = Buffer.from(stored);
    const blocks = Math.ceil(bytes / 256);
    cut.writeUInt32LE(1, stored.readUInt32LE(16 + 4 * (blocks - 1)));
    const whole = Float64Array.from(GEOMS["the whole chunk as one run"].geom);
    const at = (blocks - 1) * blockItems;
    const head = new Uint32Array(ITEMS);
    assert.equal(await addon.decodeRuns(0, new Uint8Array(cut), bytes, head, whole, 0, at), bytes);
    assert.deepEqual(head.subarray(0, at), chunk.subarray(0, at));
    assert.notEqual(await addon.decodeRuns(0, new Uint8Array(cut), bytes, head, whole, at), bytes);
  });

  test("a stream that does not decode is reported, never taken for the chunk", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns);
    const { raw, cases } = fixtures();
    const c = cases.find((k) => k.dtype === "uint32" && k.cname === "zstd" && k.shuffle === 1 && k.blocksize === 256)!;
    const stored = Buffer.from(c.enc, "base64");
    const bytes = Buffer.from(raw.uint32, "base64").length;
    assert.equal(stored[2] & 3, 1, "byte-shuffled, not stored whole");
    assert.equal(stored.readUInt32LE(8), 256);
    // The last block's first stream cut to one byte: the blocks before it may be placed, but the
    // result says the chunk did not decode.
    const bad = Buffer.from(stored);
    const last = bad.readUInt32LE(16 + 4 * (Math.ceil(bytes / 256) - 1));
    bad.writeUInt32LE(1, last);
    const geom = Float64Array.from(GEOMS["the whole chunk as one run"].geom);
    assert.notEqual(await addon.decodeRuns(0, new Uint8Array(bad), bytes, new Uint32Array(ITEMS), geom), bytes);
  });

  test("only the blocks the runs read are decoded: damage there is reported, elsewhere it is never read", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns);
    const { raw, cases } = fixtures();
    const c = cases.find((k) => k.dtype === "uint32" && k.cname === "lz4" && k.shuffle === 1 && k.blocksize === 256)!;
    const stored = Buffer.from(c.enc, "base64");
    const plain = Buffer.from(raw.uint32, "base64");
    const chunk = new Uint32Array(plain.buffer.slice(plain.byteOffset, plain.byteOffset + plain.length));
    const bytes = plain.length;
    assert.equal(stored.readUInt32LE(8), 256, "blocks of 256 bytes");
    // The first block's first stream (byte plane 0) cut to one byte.
    const cut = Buffer.from(stored);
    cut.writeUInt32LE(1, stored.readUInt32LE(16));
    const run = (geom: number[], out: Uint32Array) =>
      addon.decodeRuns!(0, new Uint8Array(cut), bytes, out, Float64Array.from(geom));
    // Every run that reads the first block sees the damage: the whole chunk, and its first item.
    assert.notEqual(await run(GEOMS["the whole chunk as one run"].geom, new Uint32Array(ITEMS)), bytes);
    assert.notEqual(await run(GEOMS["the first item only"].geom, new Uint32Array(1)), bytes);
    // The last row lies in the last block: the first is never decoded, and the answer is exact.
    const got = new Uint32Array(X * F);
    assert.equal(await run(GEOMS["the last row only"].geom, got), bytes);
    assert.deepEqual(got, chunk.subarray((Y - 1) * X * F));
  });

  test("bit-shuffled, unshuffled and whole-stored chunks decode only the blocks the runs read", async () => {
    const addon = nativeAddon();
    assert.ok(addon?.decodeRuns);
    const { raw, cases } = fixtures();
    const plain = Buffer.from(raw.uint32, "base64");
    const chunk = new Uint32Array(plain.buffer.slice(plain.byteOffset, plain.byteOffset + plain.length));
    const bytes = plain.length;
    for (const [shuffle, cname] of [
      [0, "zstd"],
      [2, "lz4"],
      [2, "zstd"],
    ] as const) {
      const c = cases.find(
        (k) => k.dtype === "uint32" && k.cname === cname && k.shuffle === shuffle && k.blocksize === 256,
      )!;
      const what = `${cname} shuffle ${shuffle}`;
      const stored = Buffer.from(c.enc, "base64");
      assert.equal(stored[2] & 2, 0, `${what}: compressed, not stored whole`);
      assert.equal(stored.readUInt32LE(8), 256, `${what}: blocks of 256 bytes`);
      // The first block's first stream cut to one byte.
      const cut = Buffer.from(stored);
      cut.writeUInt32LE(1, stored.readUInt32LE(16));
      const run = (geom: number[], out: Uint32Array): Promise<number> =>
        addon.decodeRuns!(0, new Uint8Array(cut), bytes, out, Float64Array.from(geom));
      assert.notEqual(await run(GEOMS["the first item only"].geom, new Uint32Array(1)), bytes, what);
      // Runs in later blocks never decode the first one (a whole decode would fail), and are exact.
      const row = new Uint32Array(X * F);
      assert.equal(await run(GEOMS["the last row only"].geom, row), bytes, what);
      assert.deepEqual(row, chunk.subarray((Y - 1) * X * F), what);
      const features = new Uint32Array(X * 3);
      const want = new Uint32Array(X * 3);
      expected(chunk as never, want as never, GEOMS["features 2–4 of row 5"].geom);
      assert.equal(await run(GEOMS["features 2–4 of row 5"].geom, features), bytes, what);
      assert.deepEqual(features, want, what);
    }
    // A chunk stored whole (numcodecs leaves this one, lz4 without shuffle, uncompressed).
    const c = cases.find((k) => k.dtype === "uint32" && k.cname === "lz4" && k.shuffle === 0 && k.blocksize === 256)!;
    const whole = Buffer.from(c.enc, "base64");
    assert.equal(whole[2] & 2, 2, "stored whole");
    const row = new Uint32Array(X * F);
    const last = Float64Array.from(GEOMS["the last row only"].geom);
    assert.equal(await addon.decodeRuns(0, new Uint8Array(whole), bytes, row, last), bytes);
    assert.deepEqual(row, chunk.subarray((Y - 1) * X * F));
  });
});
