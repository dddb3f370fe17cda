// Regions copied out of decoded chunks: by the addon's copyRuns (one memcpy per run) when it is
// built, by JavaScript otherwise. Both give xarray's values for regions across chunk edges, whole
// arrays and placements that flip an axis; copyRuns refuses any run outside either array before
// moving a byte.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { nativeAddon, useNativeAddon } from "../../src/native.ts";
import type { Range } from "../../src/store/region.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";
import { xarrayT2m } from "../helpers/xarray-t2m.ts";

describe("copyRuns", () => {
  test("copies runs with any strides, and refuses one outside either array, moving nothing", () => {
    const addon = nativeAddon();
    assert.ok(addon, "the addon is built by the test prerequisites");
    const src = Float32Array.from({ length: 60 }, (_, i) => i);
    const dst = new Float32Array(60).fill(-1);
    // 3 × 4 runs of 5 from a 3 × 4 × 5 block, rows written in reverse order of the second axis.
    addon.copyRuns(src, dst, Float64Array.from([0, 15, 5, 2, 3, 4, 20, 5, 20, -5]));
    for (let a = 0; a < 3; a++) {
      for (let b = 0; b < 4; b++) {
        for (let c = 0; c < 5; c++) assert.equal(dst[15 + a * 20 - b * 5 + c], src[a * 20 + b * 5 + c]);
      }
    }
    const before = dst.slice();
    for (const geom of [
      [0, 0, 61, 0],
      [1, 0, 60, 0],
      [0, 0, 5, 1, 13, 5, 5],
      [0, 5, 5, 1, 3, 5, -5],
      [0, 0, 5, 1, 2, -5, 5],
    ]) {
      assert.throws(() => addon.copyRuns(src, dst, Float64Array.from(geom)), RangeError, String(geom));
    }
    assert.throws(() => addon.copyRuns(src, new Float64Array(60), Float64Array.from([0, 0, 1, 0])), TypeError);
    assert.throws(() => addon.copyRuns(src, dst, Float64Array.from([0.5, 0, 1, 0])), TypeError);
    assert.throws(() => addon.copyRuns(src, dst, Float64Array.from([0, 0, 1, 17])), TypeError);
    assert.deepEqual(dst, before);
  });
});

describe("regions of an xarray v2 Blosc-lz4 store", () => {
  let root: string;
  let storeDir: string;
  let truth: Float32Array;
  // 2.5° grid (73 × 144), 2 runs, 9 leads, chunks 1 × 9 × 16 × 16.
  before(() => {
    root = tempDir("gridcast-copy-");
    ({ storeDir, truth } = xarrayT2m(root));
  });
  after(() => {
    useNativeAddon(true);
    cleanup(root);
  });

  const at = (idx: number[]) => truth[((idx[0] * 9 + idx[1]) * 73 + idx[2]) * 144 + idx[3]];
  const REGIONS: Range[][] = [
    [
      [1, 2],
      [0, 9],
      [0, 73],
      [0, 144],
    ],
    [
      [0, 1],
      [2, 7],
      [10, 50],
      [20, 130],
    ],
    [
      [0, 2],
      [8, 9],
      [15, 17],
      [31, 97],
    ],
  ];

  for (const native of [true, false]) {
    test(`${native ? "the addon" : "JavaScript"} copies xarray's values, also into a placement with rows flipped`, async () => {
      useNativeAddon(native);
      assert.equal(Boolean(nativeAddon()), native);
      const store = new Store(storeDir);
      const array = (await store.forecastGroup("forecast/global")).variables.get("t2m")!.array;
      for (const region of REGIONS) {
        const ext = region.map(([a, b]) => b - a);
        const got = await array.read(region);
        // The same region with the latitude axis reversed in the output (rows south to north).
        const flipped = new Float32Array(got.length).fill(Number.NaN);
        const strides = [ext[1] * ext[2] * ext[3], ext[2] * ext[3], -ext[3], 1];
        await array.readInto(region, flipped, { offset: (ext[2] - 1) * ext[3], strides });
        let n = 0;
        for (let a = 0; a < ext[0]; a++) {
          for (let b = 0; b < ext[1]; b++) {
            for (let c = 0; c < ext[2]; c++) {
              for (let d = 0; d < ext[3]; d++, n++) {
                const want = at([region[0][0] + a, region[1][0] + b, region[2][0] + c, region[3][0] + d]);
                if (!Object.is(got[n], want)) assert.fail(`${region}: value ${n} is ${got[n]}, xarray ${want}`);
                const f = flipped[((a * ext[1] + b) * ext[2] + (ext[2] - 1 - c)) * ext[3] + d];
                if (!Object.is(f, want)) assert.fail(`${region} flipped: ${f}, xarray ${want}`);
              }
            }
          }
        }
      }
    });
  }
});
