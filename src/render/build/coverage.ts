// Which tiles of a zoom level a grid touches, with the level's sampler. Both depend on the grid
// alone, so they are solved once per (group, zoom) and shared by every variable, run and lead.
import { createLevelSampler, type LatLonGrid, type LevelSampler } from "../resample.ts";

export interface LevelCoverage {
  z: number;
  sampler: LevelSampler;
  /** Covered tiles as x * 2^z + y, ordered by x then y so each x directory is made once. */
  tiles: Uint32Array;
}

function levelCoverage(grid: LatLonGrid, z: number): LevelCoverage {
  const sampler = createLevelSampler(grid, z);
  const n = 2 ** z;
  const tiles: number[] = [];
  for (let x = 0; x < n; x++) for (let y = 0; y < n; y++) if (sampler.covers(x, y)) tiles.push(x * n + y);
  return { z, sampler, tiles: Uint32Array.from(tiles) };
}

/** Coverage per grid key (the group id) and zoom, computed on first use. */
export class CoverageCache {
  #levels = new Map<string, LevelCoverage>();

  level(key: string, grid: LatLonGrid, z: number): LevelCoverage {
    const k = `${key}|${z}`;
    let c = this.#levels.get(k);
    if (!c) {
      c = levelCoverage(grid, z);
      this.#levels.set(k, c);
    }
    return c;
  }

  /** Tiles z0..maxZoom that one layer-run-lead of this grid writes. */
  pyramidCount(key: string, grid: LatLonGrid, maxZoom: number): number {
    let total = 0;
    for (let z = 0; z <= maxZoom; z++) total += this.level(key, grid, z).tiles.length;
    return total;
  }
}
