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
import { createProjectedSampler, type ProjectedGridSpec } from "../../src/render/resample-projected.ts";

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
