// What pyproj and xarray compute for a projected store (reference.py, run by the zarr 3 venv's
// Python): nearest nodes of points, export windows of boxes, bearings of grid north and pixel
// positions, the independent answer the projected-grid tests hold gridcast's routes to.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export interface Reference {
  points: { iy: number; ix: number; lat: number; lon: number; values: number[] }[];
  boxes: {
    rows: [number, number];
    cols: [number, number];
    inside_rows: [number, number];
    inside_cols: [number, number];
    y: number[];
    x: number[];
    field: number[];
  }[];
  bearings: number[];
  positions: [number, number][];
  bounds: [number, number, number, number];
}

/** reference.py's answer to `request` (store, var, axes and the questions), run by `python`. */
export function pyprojReference(python: string, request: Record<string, unknown>): Reference {
  const out = execFileSync(python, [join(import.meta.dirname, "reference.py")], {
    input: JSON.stringify(request),
    encoding: "utf8",
    stdio: ["pipe", "pipe", "ignore"],
  });
  return JSON.parse(out);
}

/**
 * The bilinear value (plus `offset`) of a row-major (ny, nx) field at the fractional node position
 * (fx, fy), as a tile pixel there must show it; undefined beyond half a cell off the grid.
 */
export function bilinearAt(
  field: ArrayLike<number>,
  nx: number,
  ny: number,
  fx: number,
  fy: number,
  offset = 0,
): number | undefined {
  if (fx < -0.5 || fx > nx - 0.5 || fy < -0.5 || fy > ny - 0.5) return undefined;
  const x0 = Math.min(nx - 2, Math.max(0, Math.floor(fx)));
  const y0 = Math.min(ny - 2, Math.max(0, Math.floor(fy)));
  const wx = Math.min(1, Math.max(0, fx - x0));
  const wy = Math.min(1, Math.max(0, fy - y0));
  const f = (j: number, i: number) => field[j * nx + i] + offset;
  return (
    (f(y0, x0) * (1 - wx) + f(y0, x0 + 1) * wx) * (1 - wy) + (f(y0 + 1, x0) * (1 - wx) + f(y0 + 1, x0 + 1) * wx) * wy
  );
}
