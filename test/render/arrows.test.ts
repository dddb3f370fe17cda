// Wind arrow overlay tiles: arrows pointing where the wind goes and growing with its speed,
// anti-aliased, continued across tile edges, absent where the wind is missing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arrowSites, renderArrows } from "../../src/render/arrows.ts";
import type { TileBoxes } from "../../src/render/png.ts";
import { createLevelSampler } from "../../src/render/resample.ts";
import { isUniform } from "../../src/render/uniform.ts";

const TILE = 256;

const alphaAt = (tile: Uint8Array, c: number, r: number) => tile[(r * TILE + c) * 4 + 3];

describe("wind arrows", () => {
  const z = 4;
  const world = TILE * 2 ** z;
  const s = createLevelSampler(
    {
      lat: Float64Array.from({ length: 181 }, (_, i) => 90 - i),
      lon: Float64Array.from({ length: 360 }, (_, j) => j),
    },
    z,
  );
  const constant = (v: number) => new Float32Array(181 * 360).fill(v);
  const opaque = (tile: Uint8Array, c: number, r: number) =>
    alphaAt(tile, c, r) > 128 && tile[(r * TILE + c) * 4] < 100;

  for (const [u, v, dir] of [
    [10, 0, "east"],
    [-10, 0, "west"],
    [0, 10, "north"],
    [0, -10, "south"],
  ] as const) {
    it(`points ${dir} for u=${u}, v=${v} (the head makes that end heavier)`, () => {
      const tile = renderArrows(s, 8, 5, constant(u), constant(v), { spacing: 40 });
      let along = 0;
      let ahead = 0;
      for (const site of arrowSites(40, [8 * TILE, 5 * TILE, 9 * TILE, 6 * TILE])) {
        const cx = site.x - 8 * TILE + 0.5;
        const cy = site.y - 5 * TILE + 0.5;
        for (let r = Math.max(0, Math.floor(cy - 15)); r < Math.min(TILE, cy + 15); r++) {
          for (let c = Math.max(0, Math.floor(cx - 15)); c < Math.min(TILE, cx + 15); c++) {
            if (!opaque(tile, c, r)) continue;
            const d = (c + 0.5 - cx) * Math.sign(u) - (r + 0.5 - cy) * Math.sign(v);
            along++;
            ahead += Math.sign(d);
          }
        }
      }
      assert.ok(along > 100 && ahead > along / 10, `${ahead} of ${along} pixels ahead of the centres`);
    });
  }

  it("grows with the speed: longer arrows where the wind is stronger", () => {
    // Eastward wind growing from 1 m/s at 180° W to 25 m/s at 180° E.
    const u = new Float32Array(181 * 360);
    for (let i = 0; i < 181; i++) for (let j = 0; j < 360; j++) u[i * 360 + j] = 1 + (24 * ((j + 180) % 360)) / 359;
    const v = constant(0);
    const row = 5 * TILE;
    const lengths: [number, number][] = [];
    for (let tx = 0; tx < 16; tx += 3) {
      const tile = renderArrows(s, tx, 5, u, v, { spacing: 40 });
      for (const site of arrowSites(40, [tx * TILE + 20, row + 20, tx * TILE + 236, row + 236])) {
        const cr = site.y - row;
        const cc = site.x - tx * TILE;
        // The arrow's extent along its row.
        let w = cc;
        while (w > 0 && opaque(tile, w - 1, cr)) w--;
        let e = cc;
        while (e < TILE - 1 && opaque(tile, e + 1, cr)) e++;
        const speed = s.valueAt(site.x % world, site.y, u);
        lengths.push([speed, e - w + 1]);
      }
    }
    lengths.sort((a, b) => a[0] - b[0]);
    for (let k = 1; k < lengths.length; k++) {
      assert.ok(lengths[k][1] >= lengths[k - 1][1] - 1, `length falls with speed: ${JSON.stringify(lengths)}`);
    }
    const slow = lengths.find(([sp]) => sp < 5)!;
    const fast = lengths.findLast(([sp]) => sp > 20)!;
    assert.ok(
      fast[1] >= 2.5 * slow[1],
      `at ${slow[0].toFixed(1)} m/s ${slow[1]} px, at ${fast[0].toFixed(1)} m/s ${fast[1]} px`,
    );
  });

  it("is anti-aliased: partial alpha along the shafts", () => {
    const tile = renderArrows(s, 8, 5, constant(7), constant(5), { spacing: 40 });
    let partial = 0;
    let any = 0;
    const levels = new Set<number>();
    for (let k = 3; k < tile.length; k += 4) {
      if (tile[k] > 0) any++;
      if (tile[k] > 0 && tile[k] < 200) partial++;
      levels.add(tile[k]);
    }
    assert.ok(any > 500 && partial > any / 4, `${partial} of ${any}`);
    assert.ok(levels.size > 40, `${levels.size} distinct alpha values`);
  });

  it("continues an arrow across the edge between two tiles", () => {
    const left = renderArrows(s, 7, 5, constant(20), constant(0), { spacing: 40 });
    const right = renderArrows(s, 8, 5, constant(20), constant(0), { spacing: 40 });
    let shared = 0;
    for (let r = 0; r < TILE; r++) {
      const a = alphaAt(left, 255, r) > 150;
      const b = alphaAt(right, 0, r) > 150;
      if (a && b) shared++;
      if (a !== b) assert.ok(Math.abs(alphaAt(left, 255, r) - alphaAt(right, 0, r)) < 120, `row ${r}`);
    }
    assert.ok(shared > 0, "some arrow crosses x = 8 × 256 world pixels");
  });

  it("draws nothing where the wind is missing", () => {
    const tile = renderArrows(s, 8, 5, constant(Number.NaN), constant(3), { spacing: 40 });
    assert.ok(isUniform(tile) && tile[0] === 0);
  });

  it("answers a box for each arrow head: around the head's ink, the shaft outside it, seams in both tiles", () => {
    const heads: TileBoxes = [];
    const tile = renderArrows(s, 8, 5, constant(20), constant(0), { spacing: 40 }, undefined, heads);
    const inside = arrowSites(40, [8 * TILE, 5 * TILE, 9 * TILE, 6 * TILE]).length;
    assert.ok(heads.length >= inside, `${heads.length} heads for ${inside} arrows centred in the tile`);
    for (const [x0, y0, x1, y1] of heads) {
      // Eastward wind: the head is the east end, small beside the spacing, and holds ink.
      assert.ok(x1 - x0 <= 16 && y1 - y0 <= 16, `head box ${[x0, y0, x1, y1]}`);
      let ink = 0;
      for (let r = Math.max(0, y0); r < Math.min(TILE, y1); r++)
        for (let c = Math.max(0, x0); c < Math.min(TILE, x1); c++) if (alphaAt(tile, c, r) > 0) ink++;
      assert.ok(ink > 0, `head box ${[x0, y0, x1, y1]} holds ink`);
    }
    // The shaft's middle (the lattice site) is in no head box.
    for (const site of arrowSites(40, [8 * TILE, 5 * TILE, 9 * TILE, 6 * TILE])) {
      const [cx, cy] = [site.x - 8 * TILE, site.y - 5 * TILE];
      assert.ok(!heads.some(([x0, y0, x1, y1]) => cx >= x0 && cx < x1 && cy >= y0 && cy < y1), `site ${cx},${cy}`);
    }
    // Boxes stay in the tile; a head whose ink runs across a seam has a box in each tile, at the
    // edge, covering the rows where both tiles hold its ink (at x = 11 × 256 the lattice puts
    // heads on the seam).
    assert.ok(heads.every(([x0, y0, x1, y1]) => x0 >= 0 && y0 >= 0 && x1 <= TILE && y1 <= TILE));
    const left: TileBoxes = [];
    const leftTile = renderArrows(s, 10, 5, constant(20), constant(0), { spacing: 40 }, undefined, left);
    const right: TileBoxes = [];
    const rightTile = renderArrows(s, 11, 5, constant(20), constant(0), { spacing: 40 }, undefined, right);
    let across = 0;
    for (const l of left.filter((b) => b[2] === TILE)) {
      for (let r = l[1]; r < l[3]; r++) {
        if (!(alphaAt(leftTile, TILE - 1, r) > 0 && alphaAt(rightTile, 0, r) > 0)) continue;
        across++;
        assert.ok(
          right.some((b) => b[0] === 0 && b[1] <= r && r < b[3]),
          `row ${r}: a head's ink on both sides of the seam is in the right tile's boxes too`,
        );
      }
    }
    assert.ok(across > 0, "some head's ink crosses the seam");
  });
});
