import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { encodeRgbaPng } from "../../src/render/png.ts";
import { cachedLabelMask, compositeLabel, labelMask, labelMasks } from "../../src/render/text.ts";
import { decodeRgba } from "./decode.ts";

describe("vector label text", () => {
  it("is anti-aliased: partial coverage along the glyph edges, full coverage inside", async () => {
    const m = await labelMask("Hamburg 1012", 14);
    assert.equal(m.alpha.length, m.width * m.height);
    const partial = m.alpha.filter((v) => v > 0 && v < 255).length;
    const full = m.alpha.filter((v) => v === 255).length;
    assert.ok(partial > 40, `partial-coverage pixels: ${partial}`);
    assert.ok(full > 20, `fully covered pixels: ${full}`);
    // A proportional vector font: "W" is wider than "i" at the same size.
    const wide = await labelMask("WWWW", 14);
    const narrow = await labelMask("iiii", 14);
    assert.ok(wide.width > narrow.width + 20, `WWWW ${wide.width} px vs iiii ${narrow.width} px`);
    // Larger size, larger ink.
    const big = await labelMask("Hamburg 1012", 28);
    assert.ok(big.width > m.width * 1.7 && big.height > m.height * 1.5);
  });

  it("has a halo that surrounds every inked pixel and reaches past the ink", async () => {
    const m = await labelMask("Łódź", 16, { halo: 2 });
    let haloOnly = 0;
    for (let i = 0; i < m.alpha.length; i++) {
      if (m.alpha[i] > 0) assert.ok(m.halo[i] >= m.alpha[i], "halo under the ink");
      if (m.alpha[i] === 0 && m.halo[i] > 0) haloOnly++;
    }
    assert.ok(haloOnly > 50, `halo pixels outside the ink: ${haloOnly}`);
    const bare = await labelMask("Łódź", 16, { halo: 0 });
    assert.equal(
      bare.halo.some((v) => v > 0),
      false,
    );
    assert.ok(m.pad > bare.pad);
  });

  it("is cached per text, size and options", async () => {
    const a = await labelMask("Paris", 12);
    assert.equal(await labelMask("Paris", 12), a);
    assert.equal(cachedLabelMask("Paris", 12), a);
    assert.notEqual(await labelMask("Paris", 13), a);
    assert.equal(cachedLabelMask("Paris", 12, { weight: 400 }), undefined);
    const many = await labelMasks(["996", "1000", "996"], 11);
    assert.equal(many.size, 2);
  });

  it("escapes markup characters instead of interpreting them", async () => {
    const m = await labelMask("A & <b>B</b>", 12);
    const plain = await labelMask("A & B", 12);
    assert.ok(m.width > plain.width + 15, "the tags are drawn as text");
  });

  it("composites identically into two tiles that share a seam", async () => {
    const m = await labelMask("Seamless", 14);
    const size = 64;
    // The label straddles x = 64 in a 128-pixel-wide strip; drawn once whole and once per tile.
    const whole = new Uint8Array(2 * size * size * 4);
    const left = new Uint8Array(size * size * 4);
    const right = new Uint8Array(size * size * 4);
    const x0 = size - Math.floor(m.width / 2);
    compositeLabel(whole, 2 * size, size, m, x0, 20);
    compositeLabel(left, size, size, m, x0, 20);
    compositeLabel(right, size, size, m, x0 - size, 20);
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < 2 * size; x++) {
        const src = x < size ? left : right;
        const sx = x < size ? x : x - size;
        for (let c = 0; c < 4; c++) {
          assert.equal(src[(y * size + sx) * 4 + c], whole[(y * 2 * size + x) * 4 + c]);
        }
      }
    }
    assert.ok(left.some((v, i) => i % 4 === 3 && v > 0) && right.some((v, i) => i % 4 === 3 && v > 0));
  });

  it("round-trips through the RGBA PNG encoder (checked by an independent decoder)", async () => {
    const m = await labelMask("Noto Sans", 20);
    const w = 96;
    const h = 40;
    const rgba = new Uint8Array(w * h * 4);
    compositeLabel(rgba, w, h, m, 4, 6);
    const png = encodeRgbaPng(rgba, w, h);
    const back = await decodeRgba(png);
    assert.equal(back.width, w);
    assert.deepEqual(new Uint8Array(back.data), rgba);
    // Partial alpha survives (the indexed overlays cannot carry it).
    const alphas = new Set<number>();
    for (let i = 3; i < rgba.length; i += 4) alphas.add(rgba[i]);
    assert.ok(alphas.size > 20, `distinct alpha values: ${alphas.size}`);
  });
});
