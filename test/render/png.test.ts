import assert from "node:assert/strict";
import { after, before, describe, it, test } from "node:test";
import { constants, crc32, deflateSync, inflateSync } from "node:zlib";
import sharp from "sharp";
import { nativeAddon, useNativeAddon } from "../../src/native.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { encodeIndexedPng, encodeRgbaPng, tileBoxes } from "../../src/render/png.ts";
import { decodeRgba, pixel } from "./decode.ts";

interface Chunk {
  type: string;
  data: Buffer;
}

/** Walks the chunk list, checking every CRC on the way. */
function chunks(png: Buffer): Chunk[] {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const out: Chunk[] = [];
  for (let at = 8; at < png.length; ) {
    const len = png.readUInt32BE(at);
    const type = png.toString("latin1", at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + len);
    assert.equal(png.readUInt32BE(at + 8 + len), crc32(png.subarray(at + 4, at + 8 + len)), `${type} CRC`);
    out.push({ type, data });
    at += 12 + len;
  }
  return out;
}

/** A tile with flat bands, repeated rows, transparency and sparse palette indices. */
function sampleTile(width = 256, height = 256): Uint8Array {
  const t = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const band = Math.floor(y / 8); // 8 identical rows per band
    for (let x = 0; x < width; x++) t[y * width + x] = x < 20 ? 0 : (band * 37 + Math.floor(x / 16) * 11) % 256;
  }
  return t;
}

async function assertDecodesTo(png: Buffer, indices: Uint8Array, rgba: Uint8Array, width: number): Promise<void> {
  const img = await decodeRgba(png);
  assert.equal(img.width, width);
  assert.equal(img.height, indices.length / width);
  for (let i = 0; i < indices.length; i++) {
    const want = [...rgba.subarray(indices[i] * 4, indices[i] * 4 + 4)];
    if (want[3] === 0) assert.equal(img.data[i * 4 + 3], 0, `pixel ${i} transparent`);
    else assert.deepEqual(pixel(img.data, i), want, `pixel ${i} (index ${indices[i]})`);
  }
}

// Every case with the rows prepared by the addon (C) and by JavaScript, the fallback.
for (const native of [true, false])
  describe(`encodeIndexedPng (rows by ${native ? "the addon" : "JavaScript"})`, () => {
    const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });
    before(() => {
      useNativeAddon(native);
      assert.equal(Boolean(nativeAddon()), native, "the addon is built by the test prerequisites");
    });
    after(() => useNativeAddon(true));

    it("decodes to the palette colour of every index, index 0 transparent", async () => {
      const tile = sampleTile();
      const png = encodeIndexedPng(tile, 256, 256, palette.rgba);
      await assertDecodesTo(png, tile, palette.rgba, 256);
      const img = await decodeRgba(png);
      assert.equal(img.data[3], 0, "index 0 has alpha 0");
    });

    it("keeps per-entry alpha of translucent palettes", async () => {
      const clouds = buildPalette({ colormap: "clouds", min: 0, max: 255 });
      const tile = sampleTile();
      await assertDecodesTo(encodeIndexedPng(tile, 256, 256, clouds.rgba), tile, clouds.rgba, 256);
    });

    it("handles widths that are not a multiple of 4 and unaligned views", async () => {
      const inner = sampleTile(37, 21);
      const backing = new Uint8Array(inner.length + 1);
      backing.set(inner, 1);
      const view = backing.subarray(1);
      await assertDecodesTo(encodeIndexedPng(view, 37, 21, palette.rgba), inner, palette.rgba, 37);
    });

    it("writes an 8-bit indexed image with a palette of only the colours used", () => {
      const tile = new Uint8Array(256 * 256).fill(200);
      tile.fill(0, 0, 256);
      tile.fill(17, 1000, 1100);
      const list = chunks(encodeIndexedPng(tile, 256, 256, palette.rgba));
      assert.deepEqual(
        list.map((c) => c.type),
        ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"],
      );
      const ihdr = list[0].data;
      assert.deepEqual([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9]], [256, 256, 8, 3]);
      assert.equal(list[1].data.length, 3 * 3, "three colours used");
      assert.deepEqual([...list[2].data], [0], "only the transparent entry needs tRNS");
    });

    it("omits tRNS when every colour used is opaque", () => {
      const list = chunks(encodeIndexedPng(new Uint8Array(64 * 64).fill(9), 64, 64, palette.rgba));
      assert.ok(!list.some((c) => c.type === "tRNS"));
    });

    it("sends the first row with filter None, every other with Up (a repeated row as zeros)", () => {
      const tile = sampleTile();
      const idat = chunks(encodeIndexedPng(tile, 256, 256, palette.rgba)).find((c) => c.type === "IDAT")!;
      const raw = inflateSync(idat.data);
      assert.equal(raw.length, 257 * 256);
      for (let y = 0; y < 256; y++) {
        const filter = raw[y * 257];
        assert.equal(filter, y === 0 ? 0 : 2, `row ${y}`);
        const zeros = raw.subarray(y * 257 + 1, (y + 1) * 257).every((b) => b === 0);
        if (y > 0) assert.equal(zeros, y % 8 !== 0, `row ${y} repeats the row above: all zeros`);
      }
    });

    it("accepts a zlib level in place of the run-length default", async () => {
      const tile = sampleTile();
      await assertDecodesTo(
        encodeIndexedPng(tile, 256, 256, palette.rgba, { compression: 6 }),
        tile,
        palette.rgba,
        256,
      );
    });

    it("is smaller than sharp's RGBA encoding of the same image", async () => {
      const tile = sampleTile();
      const rgba = Buffer.alloc(tile.length * 4);
      for (let i = 0; i < tile.length; i++) rgba.set(palette.rgba.subarray(tile[i] * 4, tile[i] * 4 + 4), i * 4);
      const viaSharp = await sharp(rgba, { raw: { width: 256, height: 256, channels: 4 } })
        .png()
        .toBuffer();
      const indexed = encodeIndexedPng(tile, 256, 256, palette.rgba);
      assert.ok(indexed.length < viaSharp.length, `indexed ${indexed.length} B vs rgba ${viaSharp.length} B`);
    });

    it("rejects a size that does not match the buffer", () => {
      assert.throws(() => encodeIndexedPng(new Uint8Array(10), 4, 4, palette.rgba), RangeError);
      assert.throws(() => encodeIndexedPng(new Uint8Array(0), 0, 0, palette.rgba), RangeError);
    });
  });

/** PLTE and tRNS as written, and IDAT inflated: the image a PNG holds, whatever deflate wrote it. */
function image(png: Buffer): { chunks: string[]; rows: Buffer } {
  const list = chunks(png);
  const rows = inflateSync(Buffer.concat(list.filter((c) => c.type === "IDAT").map((c) => c.data)));
  return { chunks: list.filter((c) => c.type !== "IDAT").map((c) => `${c.type}:${c.data.toString("hex")}`), rows };
}

test("the addon and JavaScript write the same image, tile for tile (the addon deflates with its own coder)", () => {
  const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });
  // Rendered-like tiles (smooth ramps), random noise, one colour, colours 0..k (the identity
  // numbering), repeated rows, odd sizes.
  const tiles: [Uint8Array, number, number][] = [
    [sampleTile(), 256, 256],
    [sampleTile(37, 21), 37, 21],
  ];
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  tiles.push([Uint8Array.from({ length: 256 * 256 }, rand), 256, 256]);
  tiles.push([new Uint8Array(256 * 256).fill(42), 256, 256]);
  tiles.push([Uint8Array.from({ length: 64 * 64 }, (_, i) => (i >> 6) % 5), 64, 64]);
  tiles.push([
    Uint8Array.from({ length: 256 * 256 }, (_, i) => 100 + Math.floor(((i % 256) + (i >> 8)) / 20)),
    256,
    256,
  ]);
  tiles.push([Uint8Array.from({ length: 3 }, (_, i) => i * 80), 3, 1]);
  try {
    for (const [i, [t, w, h]] of tiles.entries()) {
      useNativeAddon(true);
      const c = image(encodeIndexedPng(t, w, h, palette.rgba));
      useNativeAddon(false);
      const js = image(encodeIndexedPng(t, w, h, palette.rgba));
      assert.deepEqual(c.chunks, js.chunks, `tile ${i}: IHDR, PLTE, tRNS`);
      assert.ok(c.rows.equals(js.rows), `tile ${i}: the filtered rows differ`);
    }
  } finally {
    useNativeAddon(true);
  }
});

/** Nearest-sampled cells of a rotated grid: slanted staircase edges, no row equal to the one above. */
function staircaseTile(width: number, height: number, cell: number, angle: number, spread: number): Uint8Array {
  const t = new Uint8Array(width * height);
  const [c, s] = [Math.cos(angle), Math.sin(angle)];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = Math.floor((x * c + y * s) / cell);
      const v = Math.floor((y * c - x * s) / cell);
      // Off the grid (a corner) transparent, else a colour per cell: 40..40+spread*8 in steps of spread.
      t[y * width + x] = u + v < -3 ? 0 : 40 + spread * ((((u * 7919) ^ (v * 104729)) >>> 0) % 8);
    }
  }
  return t;
}

test("staircase, repeated and random rows of every width: the addon's rows are the JavaScript's", () => {
  const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });
  let seed = 3;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
  const tiles: [Uint8Array, number, number, string][] = [];
  for (const w of [1, 15, 16, 17, 63, 64, 65, 100, 255, 256, 257]) {
    const h = w === 1 ? 40 : 70;
    // Colours with gaps (spread 3: renumbered through the table) and a run of them (spread 1).
    for (const spread of [1, 3]) tiles.push([staircaseTile(w, h, 5.5, 0.2, spread), w, h, `staircase ×${spread}`]);
    tiles.push([staircaseTile(w, h, 0.7, 1.1, 5), w, h, "cells under a pixel"]);
    const repeated = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) repeated[y * w + x] = ((y >> 3) * 13 + (x >> 2) * 5) % 30;
    tiles.push([repeated, w, h, "rows repeated eight times"]);
    tiles.push([Uint8Array.from({ length: w * h }, rand), w, h, "random"]);
    tiles.push([Uint8Array.from({ length: w * h }, () => (rand() < 16 ? 200 : 7)), w, h, "two colours far apart"]);
  }
  try {
    for (const [t, w, h, kind] of tiles) {
      useNativeAddon(true);
      const c = image(encodeIndexedPng(t, w, h, palette.rgba));
      useNativeAddon(false);
      const js = image(encodeIndexedPng(t, w, h, palette.rgba));
      assert.deepEqual(c.chunks, js.chunks, `${kind} ${w}×${h}: IHDR, PLTE, tRNS`);
      assert.ok(c.rows.equals(js.rows), `${kind} ${w}×${h}: the filtered rows differ`);
    }
  } finally {
    useNativeAddon(true);
  }
});

test("a staircase tile through the addon decodes to its pixels", async () => {
  const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });
  for (const spread of [1, 3]) {
    const t = staircaseTile(256, 256, 6.5, -0.25, spread);
    await assertDecodesTo(encodeIndexedPng(t, 256, 256, palette.rgba), t, palette.rgba, 256);
  }
});

test("the addon's run-length deflate inflates back exactly, the size of zlib's Z_RLE", () => {
  const addon = nativeAddon();
  assert.ok(addon?.deflateRle, "the addon is built by the test prerequisites");
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
  const inputs: Uint8Array[] = [
    new Uint8Array(0),
    Uint8Array.of(9),
    new Uint8Array(70_000),
    new Uint8Array(300).fill(5),
    new Uint8Array(300_000), // one run: 1,162 matches of 258
  ];
  // Runs of 1..600 bytes (the 258s and their rests, 0..2 literals after), across the 64-byte
  // blocks the coder scans; and every length up to 130 of short alternating runs.
  const runs: number[] = [];
  for (let len = 1, v = 0; len <= 600; len += len < 20 || (len > 250 && len < 270) || len > 510 ? 1 : 7, v ^= 1)
    for (let i = 0; i < len; i++) runs.push(v * 9);
  inputs.push(Uint8Array.from(runs));
  for (let n = 1; n <= 130; n++) inputs.push(Uint8Array.from({ length: n }, (_, i) => (i % 7 < 4 ? 1 : i % 3)));
  for (let k = 0; k < 60; k++) {
    const n = Math.floor(rand() * 70_000);
    const u = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const kind = k % 4;
      u[i] =
        kind === 0
          ? (rand() * 256) | 0 // noise: every byte a literal, 256 symbols in use
          : kind === 1
            ? rand() < 0.9
              ? 0
              : (rand() * 256) | 0 // Up rows: zero runs between changes
            : kind === 2
              ? rand() < 0.2
                ? (rand() * 4) | 0
                : (u[i - 1] ?? 0) // runs of every length
              : Math.min(255, Math.floor(-Math.log(rand() + 1e-12) * 4)); // skewed literals
    }
    inputs.push(u);
  }
  // Frequencies in a Fibonacci progression: an unlimited Huffman code would need more than 15 bits.
  const fib: number[] = [];
  for (let s = 0, a = 1, b = 1; s < 25; s++, [a, b] = [b, a + b]) for (let i = 0; i < a; i++) fib.push(s * 7);
  for (let i = fib.length - 1; i > 0; i--) {
    const j = (rand() * (i + 1)) | 0;
    [fib[i], fib[j]] = [fib[j], fib[i]];
  }
  inputs.push(Uint8Array.from(fib));
  let ours = 0;
  let zlibs = 0;
  for (const [i, u] of inputs.entries()) {
    const out = new Uint8Array(u.length * 3 + 1024);
    const n = addon.deflateRle(u, out);
    assert.ok(n > 0, `input ${i}: fits`);
    assert.ok(Buffer.from(u).equals(inflateSync(out.subarray(0, n))), `input ${i} (${u.length} B) inflates back`);
    ours += n;
    zlibs += deflateSync(u, { strategy: constants.Z_RLE }).length;
  }
  // One block against zlib's several: within a hair of its size either way.
  assert.ok(ours <= zlibs * 1.005, `${ours} B against zlib's ${zlibs} B`);
  assert.equal(
    addon.deflateRle(
      new Uint8Array(1000).map((_, i) => i * 7),
      new Uint8Array(100),
    ),
    0,
    "too small: 0",
  );
});

test('rows: "none" (overlays) sends changed rows unfiltered and repeated rows as Up; sharp reads the same image', async () => {
  const w = 64;
  const h = 48;
  const indices = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    // Rows 10..19 repeat row 9; the others differ, with a few indices each.
    const r = y >= 10 && y < 20 ? 9 : y;
    for (let x = 0; x < w; x++) indices[y * w + x] = (x * 7 + r * 3) % 5 === 0 ? 3 + (r % 4) : 0;
  }
  const rgba = new Uint8Array(256 * 4);
  for (let k = 1; k < 8; k++) rgba.set([k * 30, 255 - k * 30, 40, k * 32], k * 4);
  const png = encodeIndexedPng(indices, w, h, rgba, { rows: "none" });
  const { data } = await decodeRgba(png);
  for (let i = 0; i < w * h; i++) {
    assert.deepEqual(
      [...data.subarray(i * 4, i * 4 + 4)],
      [...rgba.subarray(indices[i] * 4, indices[i] * 4 + 4)],
      `pixel ${i}`,
    );
  }
  // The filter byte of each row, from the inflated IDAT.
  let at = 8;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const len = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === "IDAT") idat.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const filters = Array.from({ length: h }, (_, y) => raw[y * (w + 1)]);
  assert.deepEqual(
    filters,
    filters.map((_, y) => (y >= 10 && y < 20 ? 2 : 0)),
  );
});

test("boxes ride in a tEXt chunk before the pixels: read back as written, the image unchanged", async () => {
  const indices = new Uint8Array(64 * 64).map((_, i) => (i % 7 === 0 ? 1 : 0));
  const palette = new Uint8Array([0, 0, 0, 0, 20, 30, 40, 255]);
  const boxes: [number, number, number, number][] = [
    [-12, 3, 40, 19],
    [200, 250, 262, 270],
  ];
  for (const [plain, marked] of [
    [encodeIndexedPng(indices, 64, 64, palette), encodeIndexedPng(indices, 64, 64, palette, { boxes })],
    [
      encodeRgbaPng(new Uint8Array(64 * 64 * 4).fill(90), 64, 64),
      encodeRgbaPng(new Uint8Array(64 * 64 * 4).fill(90), 64, 64, { boxes }),
    ],
  ]) {
    assert.equal(tileBoxes(plain), undefined);
    assert.deepEqual(tileBoxes(marked), boxes);
    const a = await sharp(plain).ensureAlpha().raw().toBuffer();
    const b = await sharp(marked).ensureAlpha().raw().toBuffer();
    assert.ok(a.equals(b), "the same pixels with and without the chunk");
  }
});
