// Contour overlay tiles: contour geometry against an analytic field (a circle of known radius),
// lines anti-aliased (partial alpha across them), labels placed once across a tile seam, H/L marks
// on the centres.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { findExtrema } from "../../src/render/contour-extrema.ts";
import {
  contourLabelMask,
  finiteRange,
  type PlacedLabel,
  placeLabels,
  prepareContourText,
} from "../../src/render/contour-labels.ts";
import { chaikin, traceContours } from "../../src/render/contour-trace.ts";
import { renderContours } from "../../src/render/contours.ts";
import { createLevelSampler } from "../../src/render/resample.ts";

const TILE = 256;

/** A 0.25° global grid and a field from a function of world pixel (x, y) at zoom z. */
function worldField(z: number, f: (x: number, y: number) => number) {
  const lat = Float64Array.from({ length: 721 }, (_, i) => 90 - i / 4);
  const lon = Float64Array.from({ length: 1440 }, (_, j) => -180 + j / 4);
  const world = TILE * 2 ** z;
  const field = new Float64Array(lat.length * lon.length);
  for (let i = 0; i < lat.length; i++) {
    const phi = (Math.max(-85.2, Math.min(85.2, lat[i])) * Math.PI) / 180;
    const y = ((1 - Math.log(Math.tan(Math.PI / 4 + phi / 2)) / Math.PI) / 2) * world;
    for (let j = 0; j < lon.length; j++) field[i * lon.length + j] = f(((lon[j] + 180) / 360) * world, y);
  }
  return { sampler: createLevelSampler({ lat, lon }, z), field, grid: { lat, lon } };
}

const alphaAt = (tile: Uint8Array, c: number, r: number) => tile[(r * TILE + c) * 4 + 3];

describe("contour geometry", () => {
  // A cone around world pixel (cx, cy): its contour at R is the circle of radius R.
  const z = 4;
  const cx = 2200.5;
  const cy = 1500.5;
  const { sampler, field } = worldField(z, (x, y) => Math.hypot(x - cx, y - cy));

  for (const step of [3, 4, 8]) {
    it(`traces the circle of radius 100 px as one closed line within 0.35 px (lattice step ${step})`, () => {
      const lines = traceContours(sampler, field, [cx - 150, cy - 150, cx + 150, cy + 150], 100, step, 3);
      const ring = lines.filter((l) => l.level === 1);
      assert.equal(ring.length, 1, `${ring.length} lines at level 100`);
      assert.ok(ring[0].closed, "the circle is closed");
      const p = ring[0].points;
      let worst = 0;
      const sectors = new Set<number>();
      for (let k = 0; k < p.length; k += 2) {
        worst = Math.max(worst, Math.abs(Math.hypot(p[k] - cx, p[k + 1] - cy) - 100));
        sectors.add(Math.floor(((Math.atan2(p[k + 1] - cy, p[k] - cx) + Math.PI) / (2 * Math.PI)) * 36));
      }
      assert.ok(worst < 0.35, `farthest point ${worst.toFixed(3)} px off the circle`);
      assert.equal(sectors.size, 36, "the line goes all the way round");
    });
  }

  it("Chaikin smoothing keeps open ends and is the same whichever way the line runs", () => {
    const line = [0, 0, 10, 0, 10, 10, 20, 10];
    const fwd = chaikin(line, false);
    const back = chaikin([20, 10, 10, 10, 10, 0, 0, 0], false);
    assert.deepEqual(fwd.slice(0, 2), [0, 0]);
    assert.deepEqual(fwd.slice(-2), [20, 10]);
    const pairs = (p: number[]) => p.map((_, k) => (k % 2 ? "" : `${p[k]},${p[k + 1]}`)).filter(Boolean);
    assert.deepEqual(pairs(fwd).toReversed(), pairs(back));
  });

  it("draws the circle anti-aliased: partial alpha across the line, nothing 4 px away", async () => {
    const options = { interval: 100, label: (v: number) => String(v), step: 4, extremaRadius: 0 };
    await prepareContourText(...finiteRange(field), options);
    const tx = Math.floor(cx / TILE);
    const ty = Math.floor(cy / TILE);
    const tile = renderContours(sampler, tx, ty, field, options);
    let partial = 0;
    let solid = 0;
    let near = 0;
    const levels = new Set<number>();
    for (let r = 0; r < TILE; r++) {
      for (let c = 0; c < TILE; c++) {
        const d = Math.abs(Math.hypot(tx * TILE + c + 0.5 - cx, ty * TILE + r + 0.5 - cy) - 100);
        const a = alphaAt(tile, c, r);
        if (d > 4 && d < 96) assert.equal(a, 0, `pixel (${c}, ${r}) ${d.toFixed(1)} px off the line has alpha ${a}`);
        if (d < 3) {
          near++;
          if (a > 0 && a < 200) partial++;
          if (a >= 200) solid++;
          levels.add(a);
        }
      }
    }
    assert.ok(solid > 50, `${solid} pixels of the line's core`);
    assert.ok(partial > near / 4, `${partial} of ${near} pixels near the line have partial alpha`);
    // Coverage falls off smoothly across the line: many alpha levels, not a hard edge and a flat halo.
    assert.ok(levels.size > 40, `${levels.size} distinct alpha values across the line`);
  });
});

describe("labels across tile seams", () => {
  // Pressure rising east-north-east, 1 hPa per 8 world pixels at z 5: steep isobars 32 px apart,
  // labelled where they cross label rows, so labels fall anywhere along a row, seams included.
  const z = 5;
  const { sampler, field } = worldField(
    z,
    (x, y) => 101300 + (((x - 4096) * 3 - (y - 4096)) / Math.sqrt(10) / 8) * 100,
  );
  const options = { interval: 400, label: (v: number) => String(Math.round(v / 100)), step: 4 };
  before(() => prepareContourText(...finiteRange(field), options));

  it("draws a label on a seam once, half in each tile, and no second copy beside it", () => {
    // Find a seam with a label across it, by the global rule.
    const ty = 15;
    let found: { tx: number; label: PlacedLabel } | undefined;
    for (let tx = 1; tx < 30 && !found; tx++) {
      const seam = tx * TILE;
      const label = placeLabels(sampler, field, [seam - 1, ty * TILE + 20, seam + 1, ty * TILE + 236], options).find(
        (l) => Math.abs(l.x - seam) < 3,
      );
      if (label) found = { tx, label };
    }
    assert.ok(found, "some label crosses a seam of tile row 15");
    const { tx, label } = found;
    const left = renderContours(sampler, tx - 1, ty, field, options);
    const right = renderContours(sampler, tx, ty, field, options);
    // Pixels around the label in its own frame: u along the text, v across it. Lines are 2 px
    // wide and cleared under the label; digits are 9 px tall. Dark pixels 2.5..6 px off the line's
    // axis are therefore text.
    const half = (contourLabelMask(label.text)!.width - 2 * contourLabelMask(label.text)!.pad) / 2;
    const cos = Math.cos(label.angle);
    const sin = Math.sin(label.angle);
    const lx = label.x - (tx - 1) * TILE;
    const ly = label.y - ty * TILE;
    let leftInk = 0;
    let rightInk = 0;
    let beside = 0;
    for (let r = 0; r < TILE; r++) {
      for (let c = 0; c < 2 * TILE; c++) {
        const tile = c < TILE ? left : right;
        const k = (r * TILE + (c % TILE)) * 4;
        if (!(tile[k + 3] >= 160 && tile[k] < 100)) continue;
        const dx = c + 0.5 - lx;
        const dy = r + 0.5 - ly;
        const u = Math.abs(dx * cos + dy * sin);
        const v = Math.abs(-dx * sin + dy * cos);
        if (v < 2.5 || v > 6) continue;
        if (u <= half + 1) {
          if (c < TILE) leftInk++;
          else rightInk++;
        } else if (u >= half + 4 && u <= half + 70) beside++;
      }
    }
    assert.ok(
      leftInk > 5 && rightInk > 5,
      `the label is drawn across the seam: ${leftInk} ink pixels left, ${rightInk} right`,
    );
    assert.equal(beside, 0, "no second label along the line beside it");
  });

  it("places the same labels whichever tile asks", () => {
    const y0 = 15 * TILE;
    const a = placeLabels(sampler, field, [7 * TILE, y0, 8 * TILE, y0 + TILE], options);
    const b = placeLabels(sampler, field, [8 * TILE, y0, 9 * TILE, y0 + TILE], options);
    const wide = placeLabels(sampler, field, [7 * TILE, y0, 9 * TILE, y0 + TILE], options);
    const key = (l: { x: number; y: number; text: string }) => `${l.text}@${l.x.toFixed(3)},${l.y.toFixed(3)}`;
    assert.ok(wide.length >= 2, `${wide.length} labels over two tiles`);
    assert.deepEqual(new Set([...a, ...b].map(key)), new Set(wide.map(key)));
  });

  it("labels each line in display units, no two labels of one line within 400 px", () => {
    const labels = placeLabels(sampler, field, [0, 3000, 8192, 5000], options);
    assert.ok(labels.length > 10);
    for (const l of labels) assert.match(l.text, /^\d{3,4}$/);
    for (const p of labels) {
      for (const q of labels) {
        if (p !== q && p.level === q.level) assert.ok(Math.hypot(p.x - q.x, p.y - q.y) >= 400);
      }
    }
  });
});

describe("H/L marks", () => {
  const z = 5;
  const low = [3066.5, 2500.5]; // 6 px from the seam at x = 3072: its mark straddles it
  const high = [4200.5, 2700.5];
  const { sampler, field, grid } = worldField(
    z,
    (x, y) =>
      101300 -
      2500 * Math.exp(-((x - low[0]) ** 2 + (y - low[1]) ** 2) / 150 ** 2) +
      2000 * Math.exp(-((x - high[0]) ** 2 + (y - high[1]) ** 2) / 200 ** 2),
  );

  it("marks the low and the high once each, at their centres", () => {
    const found = findExtrema(sampler, field, [2000, 1500, 5500, 3500], 160, 400);
    const lows = found.filter((e) => e.kind === "L");
    const highs = found.filter((e) => e.kind === "H");
    assert.equal(lows.length, 1, JSON.stringify(found));
    assert.equal(highs.length, 1, JSON.stringify(found));
    assert.ok(Math.hypot(lows[0].x - low[0], lows[0].y - low[1]) < 8, JSON.stringify(lows[0]));
    assert.ok(Math.hypot(highs[0].x - high[0], highs[0].y - high[1]) < 8, JSON.stringify(highs[0]));
  });

  it("finds the same centre from a neighbouring tile's window", () => {
    const t = Math.floor(low[0] / TILE);
    const a = findExtrema(sampler, field, [t * TILE, 2304, (t + 1) * TILE, 2560], 160, 400);
    const b = findExtrema(sampler, field, [(t + 1) * TILE, 2304, (t + 2) * TILE, 2560], 160, 400);
    const lows = (l: typeof a) => l.filter((e) => e.kind === "L");
    assert.equal(lows(a).length, 1);
    assert.deepEqual(lows(a), lows(b));
  });

  it("an @2x tile (the next zoom at scale 2) marks the centres a 1x screen shows, at twice the world pixels", () => {
    const next = createLevelSampler(grid, z + 1);
    const one = findExtrema(sampler, field, [2000, 1500, 5500, 3500], 160, 400);
    const two = findExtrema(next, field, [4000, 3000, 11000, 7000], 320, 400, 2);
    assert.equal(two.length, one.length, JSON.stringify(two));
    for (const e of one) {
      const twin = two.find((t) => t.kind === e.kind && t.x - 0.5 === 2 * (e.x - 0.5) && t.y - 0.5 === 2 * (e.y - 0.5));
      assert.ok(twin, `${e.kind} at ${e.x},${e.y}: ${JSON.stringify(two)}`);
      assert.ok(Math.abs(twin.value - e.value) < 1, `${twin.value} against ${e.value}`);
    }
  });

  it("marks nothing on a field without centres", () => {
    const slope = worldField(z, (x) => 100000 + x);
    assert.deepEqual(findExtrema(slope.sampler, slope.field, [2000, 1500, 5500, 3500], 160, 400), []);
  });
});
