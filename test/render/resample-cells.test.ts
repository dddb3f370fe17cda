// The tile sampler of unstructured grids: every pixel's cell is its nearest by great-circle
// distance, solved once per tile and reused by every later field (lead, layer) drawn on the grid.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildPalette } from "../../src/render/colormap.ts";
import { createCellSampler } from "../../src/render/resample-cells.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import { CellIndex } from "../../src/store/cell-index.ts";
import { healpixCentres } from "../../src/store/healpix.ts";

const RAD = Math.PI / 180;

test("per-tile nearest-cell tables: exact per pixel, solved once, reused by every field", () => {
  const { lat, lon } = healpixCentres(32, "nested");
  const index = new CellIndex(lat, lon);
  let searches = 0;
  const spec = {
    n: lat.length,
    bbox: [-180, -90, 180, 90] as [number, number, number, number],
    global: true,
    nearest: (a: number, b: number) => {
      searches++;
      return index.nearest(a, b).cell;
    },
  };
  const z = 4;
  const sampler = createCellSampler(spec, z);
  const [x, y] = [9, 6];
  const nodes = sampler.nearestNodes(x, y)!;
  // Fewer searches than pixels: blocks whose corners share a cell are filled whole.
  assert.ok(searches < 256 * 256, `${searches} searches for ${256 * 256} pixels`);
  // Every pixel's cell is the nearest one (checked by distance against all cells).
  for (let k = 0; k < 256 * 256; k += 97) {
    const f = pixelLat(z, y, Math.floor(k / 256)) * RAD;
    const l = pixelLon(z, x, k % 256) * RAD;
    let best = -1;
    let bestDot = -2;
    for (let i = 0; i < lat.length; i++) {
      const d =
        Math.sin(f) * Math.sin(lat[i] * RAD) + Math.cos(f) * Math.cos(lat[i] * RAD) * Math.cos(l - lon[i] * RAD);
      if (d > bestDot) {
        bestDot = d;
        best = i;
      }
    }
    assert.equal(nodes[k], best, `pixel ${k}`);
  }
  // Two fields (two leads, or two layers) drawn on the tile: no search made again, one table solved.
  const palette = buildPalette({ colormap: "thermal", min: 0, max: 100 } as never);
  const before = searches;
  const a = sampler.renderTile(
    x,
    y,
    Float32Array.from(lat, (v) => 50 + v / 2),
    palette,
  );
  const b = sampler.renderTile(
    x,
    y,
    Float32Array.from(lon, (v) => 50 + v / 4),
    palette,
  );
  assert.equal(searches, before);
  assert.equal(sampler.tablesSolved, 1);
  assert.notDeepEqual(a, b);
  // Each pixel shows its cell's colour.
  for (let k = 0; k < 256 * 256; k += 101) assert.equal(a[k], palette.axisLut(50 + lat[nodes[k]] / 2));
});

test("a regional grid's tiles are transparent beyond a cell spacing from its cells, and skipped far away", () => {
  // A patch of HEALPix cells over 40..50° N, 0..20° E.
  const all = healpixCentres(64, "nested");
  const keep = Array.from(all.lat.keys()).filter(
    (i) => all.lat[i] > 40 && all.lat[i] < 50 && all.lon[i] > 0 && all.lon[i] < 20,
  );
  const lat = Float64Array.from(keep, (i) => all.lat[i]);
  const lon = Float64Array.from(keep, (i) => all.lon[i]);
  const index = new CellIndex(lat, lon);
  const reach = 1.2 * RAD;
  const sampler = createCellSampler(
    {
      n: lat.length,
      bbox: [-1, 39, 21, 51],
      global: false,
      nearest: (a, b) => index.nearest(a, b, -1, reach).cell,
    },
    3,
  );
  assert.equal(sampler.covers(0, 0), false);
  assert.equal(sampler.tablesSolved, 0, "a tile outside the bounds is never solved");
  assert.equal(sampler.covers(4, 2), true);
  const nodes = sampler.nearestNodes(4, 2)!;
  const off = nodes.filter((c) => c === lat.length).length;
  assert.ok(off > 0 && off < nodes.length, `${off} transparent pixels of ${nodes.length}`);
});
