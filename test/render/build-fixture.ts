// Helpers of the build tests: quiet builds into temp dirs, file listings, and the colour a pixel
// must have, worked out from the store and the palette without the tile renderer.
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { covers, nearestNode } from "../../src/forecast/grid-select.ts";
import { type BuildOptions, type BuildReport, runBuild } from "../../src/render/build/run.ts";
import { buildPalette } from "../../src/render/colormap.ts";
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
  const { rgba, lut } = buildPalette(v.entry.style!);
  return { group, field, rgba, lut };
}

/** RGBA a tile must show at pixel (col, row): the palette colour of the nearest node, or transparent. */
export function expectedPixel(f: LayerField, z: number, x: number, y: number, col: number, row: number): number[] {
  const lat = pixelLat(z, y, row);
  const lon = pixelLon(z, x, col);
  if (!covers(f.group.grid, lat, lon)) return [0, 0, 0, 0];
  const node = nearestNode(f.group.grid, lat, lon);
  const index = f.lut(f.field[node.iy * f.group.grid.lon.length + node.ix]);
  const at = index * 4;
  return [f.rgba[at], f.rgba[at + 1], f.rgba[at + 2], f.rgba[at + 3]];
}
