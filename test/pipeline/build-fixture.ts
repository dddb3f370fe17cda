// Helpers of the build tests: quiet builds into temp dirs, file listings, and the colour a pixel
// must have, worked out from the store and the palette without the tile renderer.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { covers, nearestNode } from "../../src/forecast/grid-select.ts";
import { type BuildOptions, type BuildReport, runBuild } from "../../src/pipeline/run.ts";
import { buildPalette, onAxis } from "../../src/render/colormap.ts";
import { pixelLat, pixelLon } from "../../src/render/tiles.ts";
import type { ForecastGroup, Store } from "../../src/store/store.ts";

export function build(opts: BuildOptions): Promise<BuildReport> {
  return runBuild({ progress: false, webDir: null, concurrency: 2, ...opts });
}

/** Every file below `dir`, as sorted relative paths. */
export function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}

export interface LayerField {
  group: ForecastGroup;
  field: Float32Array | Float64Array;
  rgba: Uint8Array;
  lut: (v: number) => number;
  /**
   * A stepped ramp's tiles sample the field on its class axis (colormap.ts onAxis): the field
   * there and the index of an axis value. Absent: the field and lut themselves.
   */
  axisField?: Float32Array | Float64Array;
  axisLut?: (t: number) => number;
}

/** What the pixel expectations below sample: the axis field and its lut when the ramp has one. */
export function withAxis(f: LayerField, palette: ReturnType<typeof buildPalette>): LayerField {
  return palette.toAxis ? { ...f, axisField: onAxis(palette, f.field), axisLut: palette.axisLut } : f;
}

/** The whole (lat, lon) field of one run/lead/level, read through the store. */
export async function layerField(
  store: Store,
  groupId: string,
  variable: string,
  run: number,
  lead: number,
  level: number | null = null,
): Promise<LayerField> {
  const group = await store.forecastGroup(groupId);
  const v = group.variables.get(variable)!;
  const region = v.roles.map((role, d): [number, number] => {
    if (role === "time") return [run, run + 1];
    if (role === "lead") return [lead, lead + 1];
    if (role === "level") return [level!, level! + 1];
    return [0, v.array.shape[d]];
  });
  const field = await v.array.read(region);
  const palette = buildPalette(v.entry.style!);
  return withAxis({ group, field, rgba: palette.rgba, lut: palette.lut }, palette);
}

/** Nodes bracketing `v` on an ascending axis (clamped at the ends) and the weight of the upper one. */
function bracketOf(axis: number[], v: number): [number, number, number] {
  const n = axis.length;
  if (v <= axis[0]) return [0, 0, 0];
  if (v >= axis[n - 1]) return [n - 1, n - 1, 0];
  let k = 0;
  while (axis[k + 1] <= v) k++;
  return [k, k + 1, (v - axis[k]) / (axis[k + 1] - axis[k])];
}

/**
 * The value a smooth tile shows at a place: bilinear between the four surrounding nodes, across the
 * seam of a global grid, clamped to the edge nodes of a patch; a missing corner gives the nearest
 * corner's value. Written from the grid coordinates alone, not from the renderer's tables.
 */
export function bilinearValue(f: LayerField, lat: number, lon: number): number {
  const { grid } = f.group;
  const nlon = grid.lon.length;
  const latIdx = [...grid.lat.keys()].sort((a, b) => grid.lat[a] - grid.lat[b]);
  const [a0, a1, wy] = bracketOf(
    latIdx.map((i) => grid.lat[i]),
    lat,
  );
  const rows = [latIdx[a0], latIdx[a1]];
  let cols: number[];
  let wx: number;
  const lons = [...grid.lon];
  if (grid.global) {
    const order = [...lons.keys()].sort((a, b) => (((lons[a] % 360) + 360) % 360) - (((lons[b] % 360) + 360) % 360));
    const sorted = order.map((i) => ((lons[i] % 360) + 360) % 360);
    const v = ((lon % 360) + 360) % 360;
    if (v < sorted[0] || v >= sorted[nlon - 1]) {
      // Between the last node and the first one, across the seam.
      const span = sorted[0] + 360 - sorted[nlon - 1];
      cols = [order[nlon - 1], order[0]];
      wx = ((((v - sorted[nlon - 1]) % 360) + 360) % 360) / span;
    } else {
      const [c0, c1, w] = bracketOf(sorted, v);
      cols = [order[c0], order[c1]];
      wx = w;
    }
  } else {
    const west = grid.bbox[0];
    const v = west + ((((lon - west) % 360) + 360) % 360);
    const [c0, c1, w] = bracketOf(lons, v);
    cols = [c0, c1];
    wx = w;
  }
  const field = f.axisField ?? f.field;
  const at = (r: number, c: number) => field[rows[r] * nlon + cols[c]];
  const value = (at(0, 0) * (1 - wx) + at(0, 1) * wx) * (1 - wy) + (at(1, 0) * (1 - wx) + at(1, 1) * wx) * wy;
  if (!Number.isNaN(value)) return value;
  return at(wy <= 0.5 ? 0 : 1, wx <= 0.5 ? 0 : 1);
}

/**
 * RGBA colours a smooth tile may show at pixel (col, row): the palette colour of the bilinear
 * value, or of a value a hair either side (a bin edge may tip either way); transparent off the grid.
 */
export function expectedPixels(f: LayerField, z: number, x: number, y: number, col: number, row: number): number[][] {
  const lat = pixelLat(z, y, row);
  const lon = pixelLon(z, x, col);
  if (!covers(f.group.grid, lat, lon)) return [[0, 0, 0, 0]];
  const v = bilinearValue(f, lat, lon);
  const eps = 1e-4 * Math.max(1, Math.abs(v));
  return [v - eps, v, v + eps].map((w) => {
    const at = (f.axisLut ?? f.lut)(w) * 4;
    return [f.rgba[at], f.rgba[at + 1], f.rgba[at + 2], f.rgba[at + 3]];
  });
}

/** RGBA a nearest-node tile must show at pixel (col, row): the palette colour of the nearest node, or transparent. */
export function expectedPixel(f: LayerField, z: number, x: number, y: number, col: number, row: number): number[] {
  const lat = pixelLat(z, y, row);
  const lon = pixelLon(z, x, col);
  if (!covers(f.group.grid, lat, lon)) return [0, 0, 0, 0];
  const node = nearestNode(f.group.grid, lat, lon);
  const index = (f.axisLut ?? f.lut)((f.axisField ?? f.field)[node.iy * f.group.grid.lon.length + node.ix]);
  const at = index * 4;
  return [f.rgba[at], f.rgba[at + 1], f.rgba[at + 2], f.rgba[at + 3]];
}
