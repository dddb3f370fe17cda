// A small forecast store written by xarray + zarr-python 2 (test/python/xarray_forecast.py: 2.5°
// grid of 73 × 144, 2 runs, 9 leads, Blosc-lz4 chunks 1 × 9 × 16 × 16), and its t2m as xarray
// reads it back (float32, C order, shape [2, 9, 73, 144]): the truth the store layer is held to.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PYTHON } from "./harness.ts";

export const T2M_SHAPE = [2, 9, 73, 144];

export function xarrayT2m(root: string): { storeDir: string; truth: Float32Array } {
  const storeDir = join(root, "store");
  execFileSync(PYTHON, [join(import.meta.dirname, "../python/xarray_forecast.py"), storeDir, "2.5", "2", "9", "16"]);
  const raw = join(root, "t2m.f32");
  execFileSync(PYTHON, [
    "-c",
    "import sys, xarray as xr; xr.open_zarr(sys.argv[1], group='forecast/global').t2m.values.astype('<f4').tofile(sys.argv[2])",
    storeDir,
    raw,
  ]);
  const b = readFileSync(raw);
  const truth = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  assert.equal(
    truth.length,
    T2M_SHAPE.reduce((x, y) => x * y, 1),
    "xarray's t2m has the store's shape",
  );
  return { storeDir, truth };
}
