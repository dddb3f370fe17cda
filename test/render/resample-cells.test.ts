// The tile sampler of unstructured grids: every pixel's cell is its nearest by great-circle
// distance, solved once per tile and reused by every later field (lead, layer) drawn on the grid.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { nativeAddon } from "../../src/native.ts";
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

/** Centres of an octahedral reduced Gaussian O-n grid (rows of 4i + 16 points; rows evenly spaced stand in for Gaussian latitudes). */
function octahedral(n: number): { lat: Float64Array; lon: Float64Array } {
  const lat: number[] = [];
  const lon: number[] = [];
  for (let r = 0; r < 2 * n; r++) {
    const i = r < n ? r + 1 : 2 * n - r;
    const f = 90 - ((r + 0.5) * 180) / (2 * n);
    for (let j = 0; j < 4 * i + 16; j++) {
      lat.push(f);
      const l = (j * 360) / (4 * i + 16);
      lon.push(l >= 180 ? l - 360 : l);
    }
  }
  return { lat: Float64Array.from(lat), lon: Float64Array.from(lon) };
}

/** The nearest cell to every 13th pixel of a tile, by a search of every cell. */
function bruteTile(lat: Float64Array, lon: Float64Array, z: number, x: number, y: number): Map<number, number> {
  const v = Float64Array.from({ length: lat.length * 3 }, (_, e) => {
    const i = Math.floor(e / 3);
    const [f, l] = [lat[i] * RAD, lon[i] * RAD];
    return [Math.cos(f) * Math.cos(l), Math.cos(f) * Math.sin(l), Math.sin(f)][e % 3];
  });
  const out = new Map<number, number>();
  for (let k = 0; k < 256 * 256; k += 13) {
    const f = pixelLat(z, y, k >> 8) * RAD;
    const l = pixelLon(z, x, k & 255) * RAD;
    const [qx, qy, qz] = [Math.cos(f) * Math.cos(l), Math.cos(f) * Math.sin(l), Math.sin(f)];
    let best = -1;
    let bestDot = -2;
    for (let i = 0; i < lat.length; i++) {
      const d = v[3 * i] * qx + v[3 * i + 1] * qy + v[3 * i + 2] * qz;
      if (d > bestDot) {
        bestDot = d;
        best = i;
      }
    }
    out.set(k, best);
  }
  return out;
}

const native = nativeAddon()?.walkCells ? "C" : "JavaScript";

test(`tile tables walk from cell to cell (${native}): a search or so per tile, every pixel its nearest cell`, () => {
  for (const [name, { lat, lon }] of [
    ["O48", octahedral(48)],
    ["HEALPix 32 ring", healpixCentres(32, "ring")],
  ] as const) {
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
      index,
      reach: Number.POSITIVE_INFINITY,
    };
    // Pixels larger than cells (z2), about as large (z4), and several to a cell (z6); the seam, a
    // pole row, mid-latitudes. One sampler per zoom: tiles sharing a tile row or column (whose
    // pixel coordinates the sampler keeps) come one after another.
    const samplers = new Map<number, ReturnType<typeof createCellSampler>>();
    for (const [z, x, y] of [
      [2, 1, 1],
      [4, 0, 7],
      [4, 15, 0],
      [4, 15, 7],
      [6, 33, 20],
      [6, 63, 40],
      [6, 33, 40],
      [6, 63, 20],
    ]) {
      searches = 0;
      if (!samplers.has(z)) samplers.set(z, createCellSampler(spec, z));
      const nodes = samplers.get(z)!.nearestNodes(x, y)!;
      assert.ok(searches <= 256, `${name} ${z}/${x}/${y}: ${searches} searches`);
      for (const [k, want] of bruteTile(lat, lon, z, x, y)) {
        assert.equal(nodes[k], want, `${name} ${z}/${x}/${y} pixel ${k}`);
      }
    }
  }
});

test("tile tables walk the same in JavaScript as in C", {
  skip: native === "JavaScript" && "no walkCells in the addon",
}, () => {
  // The test above, run again without the addon.
  const r = spawnSync(
    process.execPath,
    ["--test", "--test-name-pattern=walk from cell to cell", import.meta.filename],
    { env: { ...process.env, GRIDCAST_NATIVE: "0", NODE_TEST_CONTEXT: undefined }, encoding: "utf8" },
  );
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /walk from cell to cell \(JavaScript\)/);
  assert.match(r.stdout, /pass 1\n/);
});
