// Bilinear tiles checked against values computed here from the pixel centres (textbook inverse
// mercator) and the grid, independently of the sampler's tables.
import assert from "node:assert/strict";
import { after, before, describe, it, test } from "node:test";
import { nativeAddon, useNativeAddon } from "../../src/native.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { createLevelSampler } from "../../src/render/resample.ts";

// One palette bin per unit 0..255: value v has index floor(v) + 1.
const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });

function centre(z: number, x: number, y: number, col: number, row: number): [lon: number, lat: number] {
  const world = 256 * 2 ** z;
  const lon = ((x * 256 + col + 0.5) / world) * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y * 256 + row + 0.5)) / world))) * 180) / Math.PI;
  return [lon, lat];
}

/** Index within one bin of the expected value (float rounding at a bin edge may tip either way). */
function near(got: number, value: number, what: string): void {
  const want = palette.lut(value);
  assert.ok(Math.abs(got - want) <= 1, `${what}: index ${got}, want ${want} (value ${value})`);
}

// Every case with the tile sampled by the addon (C) and by JavaScript, the fallback.
for (const native of [true, false])
  describe(`bilinear sampling (by ${native ? "the addon" : "JavaScript"})`, () => {
    before(() => {
      useNativeAddon(native);
      assert.equal(Boolean(nativeAddon()), native, "the addon is built by the test prerequisites");
    });
    after(() => useNativeAddon(true));
    it("reproduces a field linear in lat and lon exactly (not in steps)", () => {
      // 1° patch lat 40..60 (descending storage), lon 0..30.
      const lat = Float64Array.from({ length: 21 }, (_, i) => 60 - i);
      const lon = Float64Array.from({ length: 31 }, (_, j) => j);
      const f = (la: number, lo: number) => 20 + 5 * (la - 40) + 3 * lo;
      const field = new Float32Array(21 * 31);
      for (let i = 0; i < 21; i++) for (let j = 0; j < 31; j++) field[i * 31 + j] = f(lat[i], lon[j]);
      const z = 6;
      const [x, y] = [33, 21]; // lon 5.6..11.25, lat ~48.9..52.5
      const tile = createLevelSampler({ lat, lon }, z).renderTile(x, y, field, palette, undefined, "bilinear");
      const nearest = createLevelSampler({ lat, lon }, z).renderTile(x, y, field, palette);
      let distinct = 0;
      for (let row = 0; row < 256; row += 3) {
        for (let col = 0; col < 256; col += 3) {
          const [plon, plat] = centre(z, x, y, col, row);
          near(tile[row * 256 + col], f(plat, plon), `px ${col},${row}`);
        }
      }
      for (let c = 1; c < 256; c++) if (tile[128 * 256 + c] !== tile[128 * 256 + c - 1]) distinct++;
      let steps = 0;
      for (let c = 1; c < 256; c++) if (nearest[128 * 256 + c] !== nearest[128 * 256 + c - 1]) steps++;
      assert.ok(distinct > 3 * steps, `smooth row changes ${distinct} times, nearest ${steps}`);
    });

    it("interpolates across the antimeridian seam of a global grid in either lon convention", () => {
      const lat = Float64Array.from({ length: 181 }, (_, i) => 90 - i);
      for (const first of [0, -180]) {
        const lon = Float64Array.from({ length: 360 }, (_, j) => first + j);
        // Value by longitude only: 10 at 179°, 110 at -180° (= 180°), linear between.
        const byLon = (lo: number) =>
          ((lo % 360) + 360) % 360 === 179 ? 10 : ((lo % 360) + 360) % 360 === 180 ? 110 : 50;
        const field = new Float32Array(181 * 360);
        for (let i = 0; i < 181; i++) for (let j = 0; j < 360; j++) field[i * 360 + j] = byLon(lon[j]);
        const z = 7;
        const s = createLevelSampler({ lat, lon }, z);
        // The last column of the world lies between 179° and 180°.
        const tile = s.renderTile(127, 60, field, palette, undefined, "bilinear");
        for (const col of [200, 230, 255]) {
          const [plon] = centre(z, 127, 60, col, 100);
          near(tile[100 * 256 + col], 10 + 100 * (plon - 179), `lon ${plon}, grid from ${first}`);
        }
        // And the first column of the world continues it: between 180° and 181° (-179°).
        const west = s.renderTile(0, 60, field, palette, undefined, "bilinear");
        const [plon0] = centre(z, 0, 60, 0, 100);
        near(west[100 * 256], 110 + (50 - 110) * (plon0 + 180), `lon ${plon0}`);
      }
    });

    it("keeps missing nodes local: the nearest-corner rule inside a cell, no NaN smear", () => {
      const lat = Float64Array.from({ length: 11 }, (_, i) => 40 + i);
      const lon = Float64Array.from({ length: 11 }, (_, j) => j);
      const field = new Float32Array(121).fill(100.5);
      field[5 * 11 + 5] = Number.NaN; // node (45°N, 5°E)
      const z = 7;
      const s = createLevelSampler({ lat, lon }, z);
      let transparent = 0;
      let drawn = 0;
      for (let x = 64; x <= 66; x++) {
        for (let y = 44; y <= 47; y++) {
          const tile = s.renderTile(x, y, field, palette, undefined, "bilinear");
          for (let row = 0; row < 256; row += 2) {
            for (let col = 0; col < 256; col += 2) {
              const [plon, plat] = centre(z, x, y, col, row);
              if (plon < 0 || plon > 10 || plat < 40 || plat > 50) continue;
              const nearHole = Math.abs(plon - 5) < 0.5 && Math.abs(plat - 45) < 0.5;
              const got = tile[row * 256 + col];
              if (nearHole) {
                assert.equal(got, 0, `pixel (${plon}, ${plat}) nearest the missing node is transparent`);
                transparent++;
              } else {
                assert.equal(got, palette.lut(100.5), `pixel (${plon}, ${plat})`);
                drawn++;
              }
            }
          }
        }
      }
      assert.ok(transparent > 100 && drawn > 1000, `${transparent} transparent, ${drawn} drawn`);
    });

    it("holds a patch's edge value half a cell beyond its edge nodes, and nothing past that", () => {
      const lat = Float64Array.from({ length: 5 }, (_, i) => 40 + i);
      const lon = Float64Array.from({ length: 5 }, (_, j) => 10 + j);
      const field = Float32Array.from({ length: 25 }, (_, k) => 10 + 10 * (k % 5)); // 10 at 10°E .. 50 at 14°E
      const s = createLevelSampler({ lat, lon }, 7);
      // Tile with lon 9.84..12.66, lat ~40.98..43.07.
      const x = 67;
      const y = 47;
      const tile = s.renderTile(x, y, field, palette, undefined, "bilinear");
      for (let col = 0; col < 256; col++) {
        const [plon] = centre(7, x, y, col, 128);
        const got = tile[128 * 256 + col];
        if (plon < 9.5) assert.equal(got, 0, `lon ${plon}`);
        else if (plon <= 10) assert.equal(got, palette.lut(10), `lon ${plon} holds the edge value`);
        else near(got, 10 + 10 * (plon - 10), `lon ${plon}`);
      }
    });

    it("valueAt gives the interpolated value at a world pixel and NaN off the grid", () => {
      const lat = Float64Array.from([0, 10]);
      const lon = Float64Array.from([0, 10]);
      const field = Float32Array.from([0, 100, 200, 300]); // (0,0) (0,10) (10,0) (10,10)
      const s = createLevelSampler({ lat, lon }, 3);
      const world = 256 * 8;
      const col = Math.floor(((5 + 180) / 360) * world);
      const [plon] = centre(3, 0, 0, col, 0);
      const row = Math.floor(((1 - Math.log(Math.tan(Math.PI / 4 + (5 * Math.PI) / 360)) / Math.PI) / 2) * world);
      const plat = centre(3, 0, 0, 0, row)[1];
      const want = 100 * (plon / 10) + 200 * (plat / 10);
      assert.ok(Math.abs(s.valueAt(col, row, field) - want) < 1e-3, `${s.valueAt(col, row, field)} vs ${want}`);
      assert.ok(Number.isNaN(s.valueAt(0, 0, field)));
    });
  });

test("the addon and JavaScript sample the same indices, tile for tile", () => {
  // A global 1° grid (lat descending, lon 0..359) and a south-to-north patch, float32 and float64
  // fields with fine structure, missing nodes and values under a transparency threshold.
  const cutPalette = buildPalette({ colormap: "thermal", min: 0, max: 255, transparent_below: 40 });
  const grids = [
    {
      lat: Float64Array.from({ length: 181 }, (_, i) => 90 - i),
      lon: Float64Array.from({ length: 360 }, (_, j) => j),
    },
    {
      lat: Float64Array.from({ length: 41 }, (_, i) => 30 + i * 0.5),
      lon: Float64Array.from({ length: 61 }, (_, j) => -20 + j * 0.5),
    },
  ];
  let compared = 0;
  try {
    for (const grid of grids) {
      const n = grid.lat.length * grid.lon.length;
      const f32 = Float32Array.from({ length: n }, (_, k) => 128 + 100 * Math.sin(k * 0.37) * Math.cos(k * 0.011));
      for (let k = 0; k < n; k += 97) f32[k] = Number.NaN;
      const f64 = Float64Array.from(f32, (v) => v + 1e-9);
      for (let z = 0; z <= 4; z++) {
        const s = createLevelSampler(grid, z);
        for (let x = 0; x < 2 ** z; x++) {
          for (let y = 0; y < 2 ** z; y++) {
            if (!s.covers(x, y)) continue;
            for (const field of [f32, f64]) {
              for (const pal of [palette, cutPalette]) {
                useNativeAddon(true);
                const c = s.renderTile(x, y, field, pal, undefined, "bilinear").slice();
                useNativeAddon(false);
                const js = s.renderTile(x, y, field, pal, undefined, "bilinear");
                for (let i = 0; i < c.length; i++) {
                  if (c[i] !== js[i])
                    assert.fail(`z${z}/${x}/${y} pixel ${i}: ${c[i]} by the addon, ${js[i]} by JavaScript`);
                }
                compared++;
              }
            }
          }
        }
      }
    }
  } finally {
    useNativeAddon(true);
  }
  assert.ok(compared > 300, `${compared} tiles compared`);
});

test("the addon refuses tables that point outside the field, writing nothing", () => {
  const addon = nativeAddon();
  assert.ok(addon);
  const a = new Int32Array(256).fill(0);
  const b = new Int32Array(256).fill(1);
  const w = new Float32Array(256).fill(0.5);
  const rowsA = new Int32Array(256).fill(0);
  const rowsB = new Int32Array(256).fill(2); // row offsets: rows of 2 values
  const out = new Uint8Array(256 * 256).fill(7);
  const args = Float64Array.from([1, 1, Number.NEGATIVE_INFINITY, 255]);
  addon.bilinearTile(new Float32Array(4), a, b, w, rowsA, rowsB, w, 0, 0, args, out);
  assert.ok(
    out.every((v) => v === 1),
    "inside: one value everywhere",
  );
  out.fill(7);
  for (const field of [new Float32Array(3), new Float64Array(2)]) {
    assert.throws(() => addon.bilinearTile(field, a, b, w, rowsA, rowsB, w, 0, 0, args, out), RangeError);
  }
  const badB = new Int32Array(256).fill(-1);
  assert.throws(
    () => addon.bilinearTile(new Float32Array(4), a, badB, w, rowsA, rowsB, w, 0, 0, args, out),
    RangeError,
  );
  assert.throws(() => addon.bilinearTile(new Float32Array(4), a, b, w, rowsA, rowsB, w, 1, 0, args, out), RangeError);
  assert.ok(
    out.every((v) => v === 7),
    "nothing written",
  );
});
