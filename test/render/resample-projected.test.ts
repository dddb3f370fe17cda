// The projected sampler's tiles by the addon's C loops (projectedTile, gatherTile) and by the
// JavaScript they stand in for: byte for byte the same, over Lambert conformal and polar
// stereographic grids, float32 and float64 fields with missing and infinite values, and palettes
// with and without a transparent cut.
import assert from "node:assert/strict";
import { test } from "node:test";
import proj4 from "proj4";
import { nativeAddon, useNativeAddon } from "../../src/native.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import type { Resample } from "../../src/render/resample.ts";
import {
  createProjectedSampler,
  nearestRuns,
  nodesOf,
  type ProjectedGridSpec,
} from "../../src/render/resample-projected.ts";

const palette = buildPalette({ colormap: "thermal", min: 0, max: 255 });
const cutPalette = buildPalette({ colormap: "thermal", min: 0, max: 255, transparent_below: 40 });

/** A grid of nx × ny nodes `step` metres apart from (x0, y0) in `crs`, its bbox from its outline. */
function grid(crs: string, nx: number, ny: number, x0: number, y0: number, step: number): ProjectedGridSpec {
  const conv = proj4("+proj=longlat +R=6371229 +no_defs", crs);
  let [west, south, east, north] = [180, 90, -180, -90];
  for (let k = 0; k <= 100; k++) {
    for (const [x, y] of [
      [x0 + (k / 100) * nx * step, y0],
      [x0 + (k / 100) * nx * step, y0 + ny * step],
      [x0, y0 + (k / 100) * ny * step],
      [x0 + nx * step, y0 + (k / 100) * ny * step],
    ]) {
      const [lon, lat] = conv.inverse([x - step / 2, y - step / 2]);
      [west, east, south, north] = [
        Math.min(west, lon),
        Math.max(east, lon),
        Math.min(south, lat),
        Math.max(north, lat),
      ];
    }
  }
  return {
    nx,
    ny,
    bbox: [west, south, east, north],
    toIndex(lon, lat, out) {
      const p = conv.forward([lon, lat]);
      out[0] = Number.isFinite(p[0]) ? (p[0] - x0) / step : Number.NaN;
      out[1] = Number.isFinite(p[1]) ? (p[1] - y0) / step : Number.NaN;
    },
  };
}

const grids: [string, ProjectedGridSpec][] = [
  [
    "Lambert conformal",
    grid(
      "+proj=lcc +lat_1=38.5 +lat_2=38.5 +lat_0=38.5 +lon_0=-97.5 +R=6371229 +units=m +no_defs",
      75,
      45,
      -2_250_000,
      -1_350_000,
      60_000,
    ),
  ],
  // A north-polar grid: its cells cover the pole, and every longitude meets it.
  [
    "polar stereographic",
    grid(
      "+proj=stere +lat_0=90 +lat_ts=70 +lon_0=-45 +R=6371229 +units=m +no_defs",
      60,
      70,
      -3_000_000,
      -3_500_000,
      100_000,
    ),
  ],
];

function fields(n: number): (Float32Array | Float64Array)[] {
  const f32 = Float32Array.from({ length: n }, (_, k) => 128 + 100 * Math.sin(k * 0.37) * Math.cos(k * 0.011));
  for (let k = 0; k < n; k += 97) f32[k] = Number.NaN;
  f32[5] = Number.POSITIVE_INFINITY;
  f32[6] = Number.POSITIVE_INFINITY;
  f32[200] = Number.NEGATIVE_INFINITY;
  const f64 = Float64Array.from(f32, (v) => v + 1e-9);
  return [f32, f64];
}

test("the addon and JavaScript sample projected tiles to the same indices, nearest and bilinear", () => {
  const addon = nativeAddon();
  assert.ok(addon?.projectedTile && addon.gatherTile, "the addon is built by the test prerequisites");
  let compared = 0;
  let varied = 0;
  try {
    for (const [name, spec] of grids) {
      for (let z = 0; z <= 5; z++) {
        const s = createProjectedSampler(spec, z);
        for (let x = 0; x < 2 ** z; x++) {
          for (let y = 0; y < 2 ** z; y++) {
            if (!s.covers(x, y)) continue;
            for (const field of fields(spec.nx * spec.ny)) {
              for (const pal of [palette, cutPalette]) {
                for (const method of ["nearest", "bilinear"] as Resample[]) {
                  useNativeAddon(true);
                  const c = s.renderTile(x, y, field, pal, undefined, method).slice();
                  useNativeAddon(false);
                  const js = s.renderTile(x, y, field, pal, undefined, method);
                  for (let i = 0; i < c.length; i++) {
                    if (c[i] !== js[i])
                      assert.fail(
                        `${name} ${method} z${z}/${x}/${y} pixel ${i}: ${c[i]} by the addon, ${js[i]} by JavaScript`,
                      );
                  }
                  if (new Set(c).size > 10) varied++;
                  compared++;
                }
              }
            }
          }
        }
      }
    }
  } finally {
    useNativeAddon(true);
  }
  assert.ok(compared > 400, `${compared} tiles compared`);
  assert.ok(varied > compared / 2, `${varied} of ${compared} tiles have more than 10 colours`);
});

test("the addon's projected loops refuse tables that point outside the field", () => {
  const addon = nativeAddon();
  assert.ok(addon);
  const pal = Float64Array.of(1, 1, 0, 254);
  const out = new Uint8Array(256 * 256);
  const base = new Int32Array(256 * 256).fill(-1);
  const w = new Uint16Array(256 * 256);
  const field = new Float32Array(10 * 10);
  addon.projectedTile(field, 10, base, w, w, pal, out);
  base[300] = 89; // its cell's upper-right corner, 89 + 10 + 1, is past the last node
  assert.throws(() => addon.projectedTile(field, 10, base, w, w, pal, out), RangeError);
  base[300] = 88;
  addon.projectedTile(field, 10, base, w, w, pal, out);
  assert.throws(() => addon.projectedTile(field, 10, base.subarray(1), w, w, pal, out), RangeError);
  const nodes = new Int32Array(256 * 256).fill(100);
  const colours = new Uint8Array(101);
  addon.gatherTile(colours, nodes, out);
  nodes[7] = 101;
  assert.throws(() => addon.gatherTile(colours, nodes, out), RangeError);
  nodes[7] = -1;
  assert.throws(() => addon.gatherTile(colours, nodes, out), RangeError);
});

test("nearest tables kept as runs name the same node for every pixel as the per-pixel table, at every zoom", () => {
  const addon = nativeAddon();
  assert.ok(addon?.gatherRuns, "the addon is built by the test prerequisites");
  let asRuns = 0;
  let perPixel = 0;
  let edge = 0;
  let runBytes = 0;
  // The test grids at every zoom, and a 3 km one, zoomed out to where each pixel steps over
  // several cells and runs do not pay.
  const dense = grid(
    "+proj=lcc +lat_1=38.5 +lat_2=38.5 +lat_0=38.5 +lon_0=-97.5 +R=6371229 +units=m +no_defs",
    2000,
    1600,
    -3_000_000,
    -2_400_000,
    3000,
  );
  const cases: [string, ProjectedGridSpec, number][] = [
    ...grids.map(([name, spec]): [string, ProjectedGridSpec, number] => [name, spec, 7]),
    ["Lambert conformal at 3 km", dense, 4],
  ];
  for (const [name, spec, maxZ] of cases) {
    const off = spec.nx * spec.ny;
    const [field] = fields(off);
    for (let z = 0; z <= maxZ; z++) {
      const kept = createProjectedSampler(spec, z);
      const full = createProjectedSampler(spec, z, undefined, false);
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          const a = kept.nearestNodes(x, y);
          const b = full.nearestNodes(x, y);
          assert.equal(a === undefined, b === undefined, `${name} z${z}/${x}/${y} covered either way`);
          if (!a || !b) continue;
          assert.equal(b.runs, false);
          if (a.runs) asRuns++;
          else perPixel++;
          const offGrid = b.nodes.indexOf(off) >= 0;
          if (offGrid) edge++;
          for (let k = 0; k < b.nodes.length; k++) {
            if (a.nodes[k] !== b.nodes[k])
              assert.fail(`${name} z${z}/${x}/${y} pixel ${k}: ${a.nodes[k]} against ${b.nodes[k]}`);
          }
          const runs = nearestRuns(b.nodes);
          assert.equal(runs !== undefined, a.runs, `${name} z${z}/${x}/${y} kept as runs where they are smaller`);
          if (runs) {
            runBytes += runs.nodes.byteLength + runs.lengths.byteLength;
            assert.ok(runs.nodes.byteLength + runs.lengths.byteLength < b.nodes.byteLength);
            assert.deepEqual(nodesOf(runs), b.nodes);
          }
          // Every third tile at z ≥ 6, every one below: rendered by the addon and JavaScript from
          // either table (the gather over runs and over a node per pixel, both ways).
          if (z >= 6 && (x + y) % 3 !== 0) continue;
          const c = kept.renderTile(x, y, field, cutPalette, undefined, "nearest").slice();
          const cFull = full.renderTile(x, y, field, cutPalette, undefined, "nearest").slice();
          try {
            useNativeAddon(false);
            const js = kept.renderTile(x, y, field, cutPalette, undefined, "nearest").slice();
            const jsFull = full.renderTile(x, y, field, cutPalette, undefined, "nearest");
            assert.deepEqual(c, cFull, `${name} z${z}/${x}/${y} by the addon`);
            assert.deepEqual(js, jsFull, `${name} z${z}/${x}/${y} by JavaScript`);
            assert.deepEqual(c, js, `${name} z${z}/${x}/${y} by the addon and JavaScript`);
          } finally {
            useNativeAddon(true);
          }
          if (offGrid) assert.equal(c[b.nodes.indexOf(off)], 0, "off-grid pixels are transparent");
        }
      }
    }
  }
  // Zoomed out a pixel spans cells and the per-pixel table is kept; zoomed in, runs.
  assert.ok(asRuns > 100 && perPixel > 0, `${asRuns} tiles kept as runs, ${perPixel} per pixel`);
  assert.ok(edge > 50, `${edge} tiles reach past the grid's edge`);
  assert.ok(runBytes / asRuns < 256 * 256, `${runBytes / asRuns} bytes per run table`);
});

test("runs cap at 256 pixels, and a table of one node is 256 runs", () => {
  const nodes = new Int32Array(256 * 256).fill(42);
  nodes[1000] = 7;
  const runs = nearestRuns(nodes);
  assert.ok(runs);
  assert.ok(runs.lengths.every((l) => l <= 255));
  assert.deepEqual(nodesOf(runs), nodes);
  assert.equal(runs.nodes.length, 256 + 2);
  // Every pixel a new node: runs would be larger than the table.
  assert.equal(nearestRuns(Int32Array.from({ length: 256 * 256 }, (_, k) => k)), undefined);
});

test("runs by the addon (runsOf) and by JavaScript are the same", {
  skip: !nativeAddon()?.runsOf && "no runsOf in the addon",
}, () => {
  // Runs of 1 to 700 pixels (past the 256 cap), a tile of one node, a node per pixel, a last run of one.
  let s = 9;
  const next = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
  const mixed = new Int32Array(256 * 256);
  for (let k = 0; k < mixed.length; ) {
    const len = 1 + (next() % 700);
    mixed.fill(next() % 50, k, k + len);
    k += len;
  }
  const lastOne = new Int32Array(256 * 256).fill(3);
  lastOne[lastOne.length - 1] = 4;
  const tables = [
    mixed,
    new Int32Array(256 * 256).fill(-1),
    Int32Array.from({ length: 256 * 256 }, (_, k) => k),
    lastOne,
  ];
  const native = tables.map((t) => nearestRuns(t));
  let js: ReturnType<typeof nearestRuns>[];
  try {
    useNativeAddon(false);
    js = tables.map((t) => nearestRuns(t));
  } finally {
    useNativeAddon(true);
  }
  assert.deepEqual(native, js);
  assert.equal(native[2], undefined);
  assert.deepEqual(nodesOf(native[0]!), mixed);
  assert.equal(native[3]!.nodes.length, 257);
});

test("the addon's gather over runs fills each run and refuses runs outside the colours or the tile", () => {
  const addon = nativeAddon();
  assert.ok(addon?.gatherRuns);
  const colours = Uint8Array.from({ length: 101 }, (_, k) => (k * 7) % 256);
  // Runs of every length 1..256 and back, so stores near the tile's end are exercised too.
  const lengths: number[] = [];
  let total = 0;
  for (let l = 1; total + l <= 256 * 256; l = (l % 256) + 1) {
    lengths.push(l - 1);
    total += l;
  }
  if (total < 256 * 256) lengths.push(256 * 256 - total - 1);
  const nodes = Int32Array.from(lengths, (_, r) => (r * 13) % 101);
  const len = Uint8Array.from(lengths);
  const out = new Uint8Array(256 * 256).fill(255);
  addon.gatherRuns(colours, nodes, len, out);
  const want = new Uint8Array(256 * 256);
  for (let r = 0, k = 0; r < nodes.length; r++) {
    want.fill(colours[nodes[r]], k, k + len[r] + 1);
    k += len[r] + 1;
  }
  assert.deepEqual(out, want);
  nodes[5] = 101;
  assert.throws(() => addon.gatherRuns?.(colours, nodes, len, out), RangeError);
  nodes[5] = -1;
  assert.throws(() => addon.gatherRuns?.(colours, nodes, len, out), RangeError);
  nodes[5] = 0;
  // Short of the tile, past it, and lengths not matching nodes.
  assert.throws(() => addon.gatherRuns?.(colours, nodes.subarray(1), len.subarray(1), out), RangeError);
  const more = Uint8Array.from([...len, 0]);
  assert.throws(() => addon.gatherRuns?.(colours, Int32Array.from([...nodes, 0]), more, out), RangeError);
  assert.throws(() => addon.gatherRuns?.(colours, nodes, more, out), RangeError);
});
