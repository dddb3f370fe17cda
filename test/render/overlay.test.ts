// Overlay tiles: arrows point where the wind goes and continue across tile edges; isobars lie at
// multiples of the interval, carry labels, and nothing is drawn where the field is missing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { drawLabel, OVERLAY_LINE, OVERLAY_TEXT, renderArrows, renderContours } from "../../src/render/overlay.ts";
import { createLevelSampler, isUniform } from "../../src/render/resample.ts";

const lat = Float64Array.from({ length: 181 }, (_, i) => 90 - i);
const lon = Float64Array.from({ length: 360 }, (_, j) => j);
const constant = (v: number) => new Float32Array(181 * 360).fill(v);

/** Line pixels east minus west, and north minus south, of the lattice points inside a tile. */
function balance(tile: Uint8Array, x: number, y: number, spacing: number): { east: number; north: number } {
  let east = 0;
  let north = 0;
  for (let r = 0; r < 256; r++) {
    for (let c = 0; c < 256; c++) {
      if (tile[r * 256 + c] !== OVERLAY_LINE) continue;
      // Offset from the nearest lattice point (world pixels spacing/2 + k·spacing).
      const dx = ((x * 256 + c - spacing / 2 + spacing / 2) % spacing) - spacing / 2;
      const dy = ((y * 256 + r - spacing / 2 + spacing / 2) % spacing) - spacing / 2;
      east += Math.sign(dx);
      north -= Math.sign(dy);
    }
  }
  return { east, north };
}

describe("renderArrows", () => {
  const s = createLevelSampler({ lat, lon }, 4);
  const out = new Uint8Array(65536);
  for (const [u, v, dir] of [
    [10, 0, "east"],
    [-10, 0, "west"],
    [0, 10, "north"],
    [0, -10, "south"],
  ] as const) {
    it(`points ${dir} for u=${u}, v=${v} (the head makes that side heavier)`, () => {
      const tile = renderArrows(s, 8, 5, constant(u), constant(v), { spacing: 40 }, out);
      const b = balance(tile, 8, 5, 40);
      const want = { east: Math.sign(u), north: Math.sign(v) };
      if (want.east) assert.equal(Math.sign(b.east), want.east, JSON.stringify(b));
      if (want.north) assert.equal(Math.sign(b.north), want.north, JSON.stringify(b));
      const main = want.east ? Math.abs(b.east) : Math.abs(b.north);
      const cross = want.east ? Math.abs(b.north) : Math.abs(b.east);
      assert.ok(main > 5 * cross + 50, `along ${main}, across ${cross}`);
    });
  }

  it("continues an arrow across the edge between two tiles", () => {
    // Spacing 32 puts lattice points 16 px from each tile edge; spacing 40 straddles some edges.
    const left = Uint8Array.from(renderArrows(s, 7, 5, constant(20), constant(0), { spacing: 40 }, out));
    const right = Uint8Array.from(renderArrows(s, 8, 5, constant(20), constant(0), { spacing: 40 }, out));
    let shared = 0;
    for (let r = 0; r < 256; r++) {
      const a = left[r * 256 + 255] === OVERLAY_LINE;
      const b = right[r * 256] === OVERLAY_LINE;
      if (a || b) assert.equal(a, b, `row ${r}: line on one side of the edge only`);
      if (a && b) shared++;
    }
    assert.ok(shared > 0, "some arrow crosses x = 8 × 256 world pixels");
  });

  it("draws nothing where the wind is missing", () => {
    const tile = renderArrows(s, 8, 5, constant(Number.NaN), constant(3), { spacing: 40 }, out);
    assert.ok(isUniform(tile) && tile[0] === 0);
  });
});

describe("renderContours", () => {
  // 1000 hPa at the equator rising 1 hPa per degree north: isobars every 4 hPa lie on every 4th parallel.
  const field = new Float32Array(181 * 360);
  for (let i = 0; i < 181; i++) field.fill(100000 + 100 * lat[i], i * 360, (i + 1) * 360);
  const options = { interval: 400, label: (v: number) => String(Math.round(v / 100)) };
  const z = 5;
  const s = createLevelSampler({ lat, lon }, z);
  const rowLat = (y: number, r: number) =>
    (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y * 256 + r + 0.5)) / (256 * 2 ** z)))) * 180) / Math.PI;

  it("draws lines on the parallels that are multiples of the interval, and only there", () => {
    const y = 11; // about 41..48°N
    const tile = renderContours(s, 16, y, field, options, new Uint8Array(65536));
    const rowsWithLines = new Set<number>();
    for (let r = 0; r < 256; r++) {
      for (let c = 0; c < 256; c++) if (tile[r * 256 + c] === OVERLAY_LINE) rowsWithLines.add(r);
    }
    const step = rowLat(y, 0) - rowLat(y, 1);
    for (const r of rowsWithLines) {
      const l = rowLat(y, r);
      const off = Math.abs(l / 4 - Math.round(l / 4)) * 4;
      assert.ok(off <= 1.5 * step, `line at row ${r}, lat ${l.toFixed(3)}, ${off.toFixed(3)}° from a multiple of 4`);
    }
    const crossings = [];
    for (let k = Math.ceil(rowLat(y, 255) / 4); k * 4 <= rowLat(y, 0); k++) crossings.push(k * 4);
    assert.ok(crossings.length >= 1);
    for (const c of crossings) {
      assert.ok(
        [...rowsWithLines].some((r) => Math.abs(rowLat(y, r) - c) <= 1.5 * step),
        `a line at ${c}°N`,
      );
    }
  });

  it("labels lines with their value in display units", () => {
    let text = 0;
    for (let x = 14; x < 18; x++) {
      const tile = renderContours(s, x, 11, field, options, new Uint8Array(65536));
      for (const p of tile) if (p === OVERLAY_TEXT) text++;
    }
    assert.ok(text > 20, `${text} label pixels`);
  });

  it("keeps labels whole: none is started where it would be cut at the tile edge", () => {
    const out = new Uint8Array(65536);
    assert.equal(drawLabel(out, "1012", 3, 100), false);
    assert.ok(isUniform(out));
    assert.equal(drawLabel(out, "1012", 128, 100), true);
    assert.throws(() => drawLabel(out, "1012 hPa", 128, 60), /no glyph/);
  });

  it("draws nothing where the field is missing", () => {
    const tile = renderContours(s, 16, 11, constant(Number.NaN), options, new Uint8Array(65536));
    assert.ok(isUniform(tile) && tile[0] === 0);
  });
});
