// A chunk's part of a region cut into pieces of bounded size (chunkPieces, for copies paced by the
// event loop's turns): the pieces copied one by one write exactly what one whole copy writes, each
// output element once, and none holds more than its limit (one innermost row at least).
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Chunk, chunkPieces, copyRegion, type Range, strides } from "../../src/store/region.ts";

/** A deterministic generator (no Math.random: a failure must be reproducible). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test("pieces of a chunk's part of a region copy exactly what the whole copy does, each within its limit", () => {
  const rnd = lcg(53);
  const int = (n: number) => Math.floor(rnd() * n);
  for (let trial = 0; trial < 300; trial++) {
    const nd = 1 + int(4);
    const chunkShape = Array.from({ length: nd }, () => 1 + int(9));
    const cc = chunkShape.map(() => int(3));
    // A region that meets the chunk (or, now and then, misses it).
    const region: Range[] = chunkShape.map((c, d) => {
      const a = Math.max(0, cc[d] * c - int(4));
      return [a, a + 1 + int(2 * c + 4)];
    });
    const shape = region.map(([a, b]) => b - a);
    const total = shape.reduce((x, y) => x * y, 1);
    // Output placed with a reversed first axis, as a north-up slab is.
    const st = strides(shape);
    const outStrides = st.map((s, d) => (d === 0 ? -s : s));
    const place = { offset: (shape[0] - 1) * st[0], strides: outStrides };
    const size = chunkShape.reduce((x, y) => x * y, 1);
    const ch: Chunk = {
      data: Float32Array.from({ length: size }, (_, i) => i + 1),
      shape: chunkShape,
      stride: strides(chunkShape),
    };
    const whole = new Float32Array(total);
    copyRegion(ch, cc, chunkShape, region, place, whole, null);
    const max = 1 + int(40);
    const pieces = chunkPieces(cc, chunkShape, region, place, max);
    const cut = new Float32Array(total);
    const writes = new Uint8Array(total);
    const row = Math.min(
      ...region
        .map(([a, b], d) => Math.min(b, (cc[d] + 1) * chunkShape[d]) - Math.max(a, cc[d] * chunkShape[d]))
        .slice(-1),
    );
    for (const p of pieces) {
      assert.ok(p.values <= max || p.values <= row, `a piece of ${p.values} values against a limit of ${max}`);
      const before = cut.slice();
      copyRegion(ch, cc, chunkShape, p.region, p.place, cut, null);
      for (let i = 0; i < total; i++) if (cut[i] !== before[i]) writes[i]++;
    }
    assert.deepEqual(cut, whole, `trial ${trial}: chunk ${chunkShape} at ${cc}, region ${JSON.stringify(region)}`);
    assert.ok(
      writes.every((w) => w <= 1),
      `trial ${trial}: an element written twice`,
    );
    assert.equal(
      pieces.reduce((a, p) => a + p.values, 0),
      whole.reduce((a, v) => a + (v !== 0 ? 1 : 0), 0),
      `trial ${trial}: the pieces' sizes add up to the part copied`,
    );
  }
});
