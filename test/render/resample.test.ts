import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidParameterError } from "../../src/errors.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { encodeIndexedPng } from "../../src/render/png.ts";
import { createLevelSampler } from "../../src/render/resample.ts";
import { isUniform } from "../../src/render/uniform.ts";
import { decodeRgba, pixel } from "./decode.ts";

// Palette with one bin per integer 0..254, so value k + 0.5 is index k + 1.
const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });

/** Node (row, col) gets a code whose 8 neighbours all differ from it, so a wrong neighbour changes colour. */
const code = (row: number, col: number) => ((7 * row + 13 * col) % 255) + 0.5;

/** 1° global grid, lat 90..-90 (descending), lon 0..359. */
function globalGrid() {
  const lat = Float64Array.from({ length: 181 }, (_, i) => 90 - i);
  const lon = Float64Array.from({ length: 360 }, (_, j) => j);
  const field = new Float32Array(181 * 360);
  for (let i = 0; i < 181; i++) for (let j = 0; j < 360; j++) field[i * 360 + j] = code(i, j);
  return { lat, lon, field };
}

/** Pixel centre by the textbook inverse mercator, written here independently of src/render/tiles.ts. */
function centre(z: number, x: number, y: number, col: number, row: number): [lon: number, lat: number] {
  const world = 256 * 2 ** z;
  const lon = ((x * 256 + col + 0.5) / world) * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * (y * 256 + row + 0.5)) / world))) * 180) / Math.PI;
  return [lon, lat];
}

function renderPng(
  grid: { lat: Float64Array; lon: Float64Array },
  field: Float32Array,
  z: number,
  x: number,
  y: number,
) {
  return encodeIndexedPng(createLevelSampler(grid, z).renderTile(x, y, field, palette), 256, 256, palette.rgba);
}

describe("createLevelSampler: nearest node", () => {
  const { lat, lon, field } = globalGrid();
  const tiles: [number, number, number][] = [
    [0, 0, 0],
    [2, 1, 1],
    [3, 5, 2],
    [5, 31, 9], // touches the antimeridian from the west
    [7, 64, 40],
    [7, 0, 127], // bottom-left corner of the world
  ];
  for (const [z, x, y] of tiles) {
    it(`every pixel of ${z}/${x}/${y} has the colour of its nearest node`, async () => {
      const img = await decodeRgba(renderPng({ lat, lon }, field, z, x, y));
      for (let row = 0; row < 256; row++) {
        for (let col = 0; col < 256; col++) {
          const [plon, plat] = centre(z, x, y, col, row);
          const i = Math.round(90 - plat);
          const j = Math.round((plon + 360) % 360) % 360; // 359.6° is nearest to node 0 (= 360°)
          const index = palette.lut(code(i, j));
          const want = [...palette.rgba.subarray(index * 4, index * 4 + 4)];
          assert.deepEqual(pixel(img.data, row * 256 + col), want, `${z}/${x}/${y} px ${col},${row} node ${i},${j}`);
        }
      }
    });
  }

  it("draws NaN nodes transparent", () => {
    const holes = Float32Array.from(field);
    holes.fill(Number.NaN, 40 * 360, 50 * 360); // lat 50..41
    const tile = createLevelSampler({ lat, lon }, 0).renderTile(0, 0, holes, palette);
    for (let row = 0; row < 256; row++) {
      const plat = centre(0, 0, 0, 0, row)[1];
      const inHole = Math.round(90 - plat) >= 40 && Math.round(90 - plat) < 50;
      assert.equal(tile[row * 256] === 0, inHole, `row ${row} at lat ${plat}`);
    }
  });
});

describe("createLevelSampler: storage layouts", () => {
  // The same physical field at 1°, sampled at lon -180..179 and lat -90..90.
  const value = (latDeg: number, lonDeg: number) => code(latDeg + 90, (lonDeg + 360) % 360);
  function layout(latAscending: boolean, lon0to360: boolean) {
    const lat = Float64Array.from({ length: 181 }, (_, i) => (latAscending ? -90 + i : 90 - i));
    const lon = Float64Array.from({ length: 360 }, (_, j) => (lon0to360 ? j : -180 + j));
    const field = new Float32Array(181 * 360);
    for (let i = 0; i < 181; i++) for (let j = 0; j < 360; j++) field[i * 360 + j] = value(lat[i], lon[j]);
    return { grid: { lat, lon }, field };
  }
  const layouts = [layout(false, true), layout(true, true), layout(false, false), layout(true, false)];

  it("renders byte-identical tiles whatever the lat order and lon convention", () => {
    const cases: [number, number, number][] = [[0, 0, 0]];
    for (let z = 1; z <= 3; z++)
      for (let y = 0; y < 2 ** z; y++) for (let x = 0; x < 2 ** z; x++) cases.push([z, x, y]);
    cases.push([7, 0, 60], [7, 127, 60], [7, 63, 70], [7, 64, 70]);
    const samplers = new Map<string, ReturnType<typeof createLevelSampler>>();
    for (const [z, x, y] of cases) {
      const tiles = layouts.map((l, k) => {
        const key = `${k}/${z}`;
        if (!samplers.has(key)) samplers.set(key, createLevelSampler(l.grid, z));
        return samplers.get(key)!.renderTile(x, y, l.field, palette);
      });
      for (let k = 1; k < tiles.length; k++) assert.deepEqual(tiles[k], tiles[0], `layout ${k}, tile ${z}/${x}/${y}`);
    }
  });
});

describe("createLevelSampler: exact ties", () => {
  // Nodes on the even z0 pixel columns, 2.8125° apart: every odd column centre is exactly halfway.
  const step = 360 / 128;
  const first = -180 + 360 / 512;
  const lat = Float64Array.from([60, 0, -60]);
  const lonA = Float64Array.from({ length: 128 }, (_, j) => first + j * step); // -179.3..178.6
  const lonB = Float64Array.from({ length: 128 }, (_, j) => first + 180 + j * step); // 0.7..359.3
  const valueAt = (lonDeg: number) => (Math.round(((lonDeg + 360) % 360) / step - 0.25) % 128) * 2 + 0.5;
  const fieldOf = (lon: Float64Array) => Float32Array.from({ length: 3 * 128 }, (_, k) => valueAt(lon[k % 128]));

  it("go to the western node in every lon convention, across the seam too", () => {
    const a = createLevelSampler({ lat, lon: lonA }, 0).renderTile(0, 0, fieldOf(lonA), palette);
    const b = createLevelSampler({ lat, lon: lonB }, 0).renderTile(0, 0, fieldOf(lonB), palette);
    assert.deepEqual(a, b);
    const row = 128 * 256; // any covered row
    for (let c = 1; c < 256; c += 2) assert.equal(a[row + c], a[row + c - 1], `odd column ${c} takes its western node`);
    assert.equal(a[row + 255], a[row + 254]);
  });
});

describe("createLevelSampler: regional grids", () => {
  // 0.5° patch: lat 30..50 ascending, lon 0..20.
  const lat = Float64Array.from({ length: 41 }, (_, i) => 30 + i * 0.5);
  const lon = Float64Array.from({ length: 41 }, (_, j) => j * 0.5);
  const field = new Float32Array(41 * 41).fill(100.5);
  const inside = (plon: number, plat: number) => plon >= -0.25 && plon <= 20.25 && plat >= 29.75 && plat <= 50.25;

  it("is opaque over the patch and transparent around it", async () => {
    for (const [z, x, y] of [
      [3, 4, 2],
      [3, 3, 2],
      [5, 16, 11],
    ]) {
      const img = await decodeRgba(renderPng({ lat, lon }, field, z, x, y));
      let opaque = 0;
      for (let row = 0; row < 256; row++) {
        for (let col = 0; col < 256; col++) {
          const [plon, plat] = centre(z, x, y, col, row);
          const alpha = img.data[(row * 256 + col) * 4 + 3];
          assert.equal(alpha, inside(plon, plat) ? 255 : 0, `${z}/${x}/${y} px ${col},${row} (${plon}, ${plat})`);
          if (alpha) opaque++;
        }
      }
      if (z === 3 && x === 4) assert.ok(opaque > 1000, "the patch shows up");
    }
  });

  it("knows which tiles it covers", () => {
    const s = createLevelSampler({ lat, lon }, 3);
    assert.equal(s.covers(4, 2), true);
    assert.equal(s.covers(0, 0), false);
    assert.ok(isUniform(s.renderTile(0, 0, field, palette)));
    assert.equal(s.renderTile(0, 0, field, palette)[0], 0);
  });

  it("treats a patch across the antimeridian the same in either lon convention", () => {
    const latP = Float64Array.from({ length: 21 }, (_, i) => -10 + i);
    const wrapped = Float64Array.from({ length: 21 }, (_, j) => (170 + j > 180 ? 170 + j - 360 : 170 + j));
    const continuous = Float64Array.from({ length: 21 }, (_, j) => 170 + j);
    const f = Float32Array.from({ length: 21 * 21 }, (_, k) => code(Math.floor(k / 21), k % 21));
    for (const [x, y] of [
      [3, 1],
      [0, 2],
    ]) {
      const a = createLevelSampler({ lat: latP, lon: wrapped }, 2).renderTile(x, y, f, palette);
      const b = createLevelSampler({ lat: latP, lon: continuous }, 2).renderTile(x, y, f, palette);
      assert.deepEqual(a, b);
      assert.ok(!isUniform(a), `tile ${x}/${y} shows part of the patch`);
    }
  });
});

describe("createLevelSampler: argument checks", () => {
  const { lat, lon, field } = globalGrid();
  it("rejects a field of the wrong size and tiles off the level", () => {
    const s = createLevelSampler({ lat, lon }, 2);
    assert.throws(() => s.renderTile(0, 0, field.subarray(1), palette), InvalidParameterError);
    assert.throws(() => s.renderTile(4, 0, field, palette), InvalidParameterError);
  });
  it("rejects coordinates that are not monotonic or not finite", () => {
    const bad = Float64Array.from(lat);
    bad[5] = bad[3];
    assert.throws(() => createLevelSampler({ lat: bad, lon }, 0), /not strictly monotonic/);
    const infinite = Float64Array.from(lon);
    infinite[7] = Number.NEGATIVE_INFINITY;
    assert.throws(() => createLevelSampler({ lat, lon: infinite }, 0), /lon\[7\] is not a finite number/);
  });
  it("samples one zoom past the pyramid (the top's @2x tiles), no further", () => {
    assert.equal(createLevelSampler({ lat, lon }, 8).z, 8);
    assert.throws(() => createLevelSampler({ lat, lon }, 9), /maximum zoom 8/);
  });
});

describe("isUniform", () => {
  it("is true only when every index is the same", () => {
    const t = new Uint8Array(65536).fill(7);
    assert.equal(isUniform(t), true);
    t[65535] = 8;
    assert.equal(isUniform(t), false);
    t[65535] = 7;
    t[3] = 0;
    assert.equal(isUniform(t), false);
  });
  it("works on unaligned views", () => {
    const backing = new Uint8Array(102).fill(3);
    assert.equal(isUniform(backing.subarray(1, 102)), true);
    backing[101] = 4;
    assert.equal(isUniform(backing.subarray(1, 102)), false);
  });
});
