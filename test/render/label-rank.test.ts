// Big places' names are kept against the weather: the wind-arrow lattice leaves out arrows that
// would touch them and isobar labels are not placed on them, so the viewer (which hides a name
// whose box meets an arrow head or a line label, test/web/place-labels.test.ts) keeps them.
// Named lists per zoom: the US east coast at z7, the Alps at z6 (1x and an @2x quarter).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderArrows } from "../../src/render/arrows.ts";
import { prepareContourText } from "../../src/render/contour-labels.ts";
import { renderContours } from "../../src/render/contours.ts";
import { KeptNames, keepPriority, keptLabels } from "../../src/render/label-rank.ts";
import { type LabelBox, zoomLayout } from "../../src/render/orientation.ts";
import type { TileBoxes } from "../../src/render/png.ts";
import { createLevelSampler } from "../../src/render/resample.ts";

const TILE = 256;
/** The viewer's clearance (web/tile-source.js CLEARANCE): a name meets a mark this close. */
const VIEWER_CLEARANCE = 1;

const EAST_COAST_Z7 = ["Philadelphia", "Baltimore", "Washington, D.C.", "Pittsburgh"];
const SMALL_EAST_COAST = ["Wilmington", "Reading", "Waldorf"];
const ALPS_Z6 = ["Munich", "Stuttgart", "Frankfurt am Main", "Zürich"];
const SMALL_ALPS = ["Neuss", "Enschede"];

// A global half-degree grid: arrows one a data cell at z7 (45 px), the default 40 px lattice at z6.
const NLAT = 361;
const NLON = 720;
const grid = {
  lat: Float64Array.from({ length: NLAT }, (_, i) => 90 - i / 2),
  lon: Float64Array.from({ length: NLON }, (_, j) => -180 + j / 2),
};
const constant = (v: number) => new Float32Array(NLAT * NLON).fill(v);
/** Strong south-westerly wind: long arrows with heads pointing north-east. */
const U = constant(14);
const V = constant(10);

function named(boxes: LabelBox[], names: string[]): LabelBox[] {
  return names.map((n) => {
    const b = boxes.find((l) => l.place.name === n && l.place.population > 200e3);
    assert.ok(b, `${n} is among the names kept against the weather`);
    return b;
  });
}

/** Tiles (at zoom z × scale) covering the labels' boxes. */
function tilesUnder(boxes: LabelBox[], scale: number): [number, number][] {
  const x0 = Math.floor((Math.min(...boxes.map((b) => b.x)) * scale) / TILE);
  const x1 = Math.floor((Math.max(...boxes.map((b) => b.x + b.w)) * scale) / TILE);
  const y0 = Math.floor((Math.min(...boxes.map((b) => b.y)) * scale) / TILE);
  const y1 = Math.floor((Math.max(...boxes.map((b) => b.y + b.h)) * scale) / TILE);
  const out: [number, number][] = [];
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) out.push([x, y]);
  return out;
}

/** Marks (arrow heads or line labels) of the tiles, in world pixels of the screen zoom. */
function marksOf(
  tiles: [number, number][],
  scale: number,
  draw: (x: number, y: number, marks: TileBoxes) => void,
): TileBoxes {
  const out: TileBoxes = [];
  for (const [x, y] of tiles) {
    const marks: TileBoxes = [];
    draw(x, y, marks);
    for (const m of marks) {
      out.push([
        (x * TILE + m[0]) / scale,
        (y * TILE + m[1]) / scale,
        (x * TILE + m[2]) / scale,
        (y * TILE + m[3]) / scale,
      ]);
    }
  }
  return out;
}

const meets = (b: LabelBox, m: TileBoxes[number]) =>
  b.x - VIEWER_CLEARANCE < m[2] &&
  m[0] < b.x + b.w + VIEWER_CLEARANCE &&
  b.y - VIEWER_CLEARANCE < m[3] &&
  m[1] < b.y + b.h + VIEWER_CLEARANCE;

describe("names the weather gives way to", () => {
  it("are the big places: named cities per zoom, not the towns beside them", async () => {
    const z7 = await keptLabels(7);
    named(z7, EAST_COAST_Z7);
    const near = (b: LabelBox, lon0: number, lon1: number) => b.place.lon > lon0 && b.place.lon < lon1;
    for (const n of SMALL_EAST_COAST) {
      assert.ok(!z7.some((b) => b.place.name === n && near(b, -80, -70)), `${n} yields at z7`);
    }
    const z6 = await keptLabels(6);
    named(z6, ALPS_Z6);
    for (const n of SMALL_ALPS) assert.ok(!z6.some((b) => b.place.name === n && near(b, 0, 15)), `${n} yields at z6`);
    assert.equal(keepPriority(6), 250e3);
    assert.equal(keepPriority(2), 3e6);
  });

  it("are placed where the orientation layer draws them (its own boxes, not a second placement)", async () => {
    const z = 5;
    const [kept, layout] = await Promise.all([keptLabels(z), zoomLayout(z)]);
    const full = new Map(layout.labels.map((l) => [l.place.id, l]));
    assert.ok(kept.length > 100, `${kept.length} names kept at z5`);
    for (const b of kept) {
      const l = full.get(b.place.id);
      assert.ok(l, `${b.place.name} is drawn by the orientation layer at z5`);
      assert.deepEqual([b.x, b.y, b.w, b.h], [l.x, l.y, l.w, l.h], b.place.name);
    }
    // Every drawn label of that rank is kept: none missing from the list.
    const ranked = layout.labels.filter((l) => l.place.population * (l.place.capital ? 1.5 : 1) >= keepPriority(z));
    assert.equal(ranked.length, kept.length);
  });

  for (const { where, z, scale, names } of [
    { where: "US east coast", z: 7, scale: 1, names: EAST_COAST_Z7 },
    { where: "Alps", z: 6, scale: 1, names: ALPS_Z6 },
    { where: "Alps, @2x quarters", z: 6, scale: 2, names: ALPS_Z6 },
  ]) {
    it(`arrows leave them free (${where}, z${z}), and would not without`, async () => {
      const boxes = named(await keptLabels(z), names);
      const keep = await KeptNames.of(z, scale);
      const sampler = createLevelSampler(grid, z + Math.log2(scale));
      const spacing = scale * 40;
      const tiles = tilesUnder(boxes, scale);
      const draw = (withKeep: boolean) =>
        marksOf(tiles, scale, (x, y, marks) =>
          renderArrows(sampler, x, y, U, V, { spacing, scale, ...(withKeep ? { keep } : {}) }, undefined, marks),
        );
      const kept = draw(true);
      const plain = draw(false);
      // The lattice is thinned, not emptied.
      assert.ok(kept.length > plain.length / 2, `${kept.length} heads of ${plain.length} kept`);
      for (const b of boxes) {
        const hit = kept.find((m) => meets(b, m));
        assert.equal(hit, undefined, `${b.place.name} is free of arrow heads`);
      }
      // Without the names, arrow heads land on some of them: the test can see the difference.
      assert.ok(
        boxes.some((b) => plain.some((m) => meets(b, m))),
        "some named city meets an arrow head when arrows do not give way",
      );
    });
  }

  it("isobar labels are not placed on them (US east coast, z7)", async () => {
    const z = 7;
    const boxes = named(await keptLabels(z), EAST_COAST_Z7);
    const keep = await KeptNames.of(z, 1);
    const sampler = createLevelSampler(grid, z);
    // Tight isobars (a line every 0.15° or so) running north-east across the coast.
    const field = new Float32Array(NLAT * NLON);
    for (let i = 0; i < NLAT; i++) {
      for (let j = 0; j < NLON; j++)
        field[i * NLON + j] = 101000 + 1600 * ((grid.lon[j] + 77) * 1.5 - (grid.lat[i] - 39) * 2);
    }
    const options = { interval: 400, label: (v: number) => String(Math.round(v / 100)), step: 12, extremaRadius: 0 };
    await prepareContourText(80000, 120000, options);
    const tiles = tilesUnder(boxes, 1);
    const draw = (withKeep: boolean) =>
      marksOf(tiles, 1, (x, y, marks) =>
        renderContours(sampler, x, y, field, { ...options, ...(withKeep ? { keep } : {}) }, undefined, marks),
      );
    const kept = draw(true);
    const plain = draw(false);
    assert.ok(kept.length > 0, "line labels are still drawn");
    for (const b of boxes)
      assert.equal(
        kept.find((m) => meets(b, m)),
        undefined,
        `${b.place.name} is free of line labels`,
      );
    assert.ok(
      boxes.some((b) => plain.some((m) => meets(b, m))),
      "some named city meets a line label when labels do not give way",
    );
  });
});
