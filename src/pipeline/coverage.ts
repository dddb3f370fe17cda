// Which tiles of a zoom level a grid touches, with the level's sampler. Both depend on the grid
// alone, so they are solved once per (group, zoom) and shared by every variable, run and lead.
// A projected grid's sampler keeps per-tile lookup tables, reused the same way.

import { createLevelSampler, type LatLonGrid, type LevelSampler } from "../render/resample.ts";
import { type CellGridSpec, createCellSampler } from "../render/resample-cells.ts";
import { createProjectedSampler, type ProjectedGridSpec } from "../render/resample-projected.ts";
import { tablesTooLarge } from "../store/cell-grid.ts";
import type { ForecastGroup, Grid, GroupVariable } from "../store/store.ts";

export interface LevelCoverage {
  z: number;
  sampler: LevelSampler;
  /** Covered tiles as x * 2^z + y, ordered by x then y so each x directory is made once. */
  tiles: Uint32Array;
}

type AnyGrid = LatLonGrid & Partial<Pick<Grid, "projection" | "bbox" | "cells" | "global">>;

/** What the cell sampler needs of an unstructured grid: its cells, bounds and nearest cell within reach. */
export function cellSpec(grid: Grid): CellGridSpec {
  const cells = grid.cells!;
  const reach = grid.global ? Number.POSITIVE_INFINITY : cells.spacing;
  // Tiles walk the index and read whole fields: a grid whose tables pass its budget (a whole
  // HEALPix grid served without them) is not drawn, and says so by name.
  if (!cells.tablesFit)
    throw tablesTooLarge(`the ${cells.layout} grid on ${cells.dim} (tiles)`, cells.n, cells.budgetMb);
  const index = cells.index();
  return {
    n: cells.n,
    bbox: grid.bbox,
    global: grid.global,
    nearest: (lat, lon) => index.nearest(lat, lon, -1, reach).cell,
    index,
    reach,
  };
}

/** What the projected sampler needs of a projected grid: its size, bounds and the map into index space. */
export function projectedSpec(grid: Grid): ProjectedGridSpec {
  const p = grid.projection!;
  const pair = [0, 0];
  return {
    nx: p.nx,
    ny: p.ny,
    bbox: grid.bbox,
    toIndex(lon, lat, out) {
      pair[0] = lon;
      pair[1] = lat;
      let r: number[];
      try {
        r = p.converter.forward(pair);
      } catch {
        out[0] = out[1] = Number.NaN;
        return;
      }
      out[0] = (r[0] - p.x0) / p.dx;
      out[1] = (r[1] - p.y0) / p.dy;
    },
  };
}

function levelSampler(grid: AnyGrid, z: number): LevelSampler {
  return grid.cells
    ? createCellSampler(cellSpec(grid as Grid), z)
    : grid.projection
      ? createProjectedSampler(projectedSpec(grid as Grid), z)
      : createLevelSampler(grid, z);
}

function levelCoverage(sampler: LevelSampler, z: number): LevelCoverage {
  const n = 2 ** z;
  const tiles: number[] = [];
  for (let x = 0; x < n; x++) for (let y = 0; y < n; y++) if (sampler.covers(x, y)) tiles.push(x * n + y);
  return { z, sampler, tiles: Uint32Array.from(tiles) };
}

/** Coverage per grid key (the group id) and zoom, computed on first use. */
export class CoverageCache {
  #levels = new Map<string, LevelCoverage>();
  #samplers = new Map<string, LevelSampler>();

  level(key: string, grid: AnyGrid, z: number): LevelCoverage {
    const k = `${key}|${z}`;
    let c = this.#levels.get(k);
    if (!c) {
      c = levelCoverage(this.sampler(key, grid, z), z);
      this.#levels.set(k, c);
    }
    return c;
  }

  /** The zoom's sampler alone, without walking its tiles (the zoom above the top, for @2x tiles). */
  sampler(key: string, grid: AnyGrid, z: number): LevelSampler {
    const k = `${key}|${z}`;
    let s = this.#samplers.get(k);
    if (!s) {
      s = levelSampler(grid, z);
      this.#samplers.set(k, s);
    }
    return s;
  }

  /** Tiles z0..maxZoom that one layer-run-lead of this grid writes. */
  pyramidCount(key: string, grid: AnyGrid, maxZoom: number): number {
    let total = 0;
    for (let z = 0; z <= maxZoom; z++) total += this.level(key, grid, z).tiles.length;
    return total;
  }
}

/** The coverage cache's key of a variable's grid: the group id, and the grid's coordinates when not the first. */
export function coverageKey(group: ForecastGroup, v: GroupVariable): string {
  return v.grid === group.grid ? group.id : `${group.id}|${v.gridCoords.lat},${v.gridCoords.lon}`;
}
