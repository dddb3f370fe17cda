// The 5° grid a STAC search walks: which cells a footprint or a search area meets (as rows and
// column ranges), and the first cell two such spans share. Pure functions.
import { type Area, lonRanges } from "./geometry.ts";

/** Size of a grid cell in degrees (a 100 km tile meets one to four). */
export const CELL_DEG = 5;
export const COLS = 360 / CELL_DEG;
export const ROWS = 180 / CELL_DEG;

/** Rows and column ranges of cells an area meets. */
export interface CellSpan {
  r0: number;
  r1: number;
  cols: [number, number][];
}

const clampRow = (lat: number) => Math.min(ROWS - 1, Math.max(0, Math.floor((lat + 90) / CELL_DEG)));
const clampCol = (lon: number) => Math.min(COLS - 1, Math.max(0, Math.floor((lon + 180) / CELL_DEG)));

export function cellSpan(lons: readonly [number, number][], south: number, north: number): CellSpan {
  const cols = lons.map(([w, e]) => [clampCol(w), clampCol(e)] as [number, number]).sort((a, b) => a[0] - b[0]);
  // Ranges that meet merge, so a cell is never visited twice.
  const merged: [number, number][] = [];
  for (const c of cols) {
    const last = merged.at(-1);
    if (last && c[0] <= last[1] + 1) last[1] = Math.max(last[1], c[1]);
    else merged.push([...c]);
  }
  return { r0: clampRow(south), r1: clampRow(north), cols: merged };
}

export const spanOfBbox = ([w, s, e, n]: readonly number[]): CellSpan => cellSpan(lonRanges(w, e), s, n);
export const spanOfArea = (a: Area): CellSpan => cellSpan(a.lons, a.south, a.north);

/** The first cell (in id order) two spans share; undefined when they share none. */
export function firstSharedCell(a: CellSpan, b: CellSpan): number | undefined {
  const r = Math.max(a.r0, b.r0);
  if (r > Math.min(a.r1, b.r1)) return undefined;
  let col: number | undefined;
  for (const [a0, a1] of a.cols)
    for (const [b0, b1] of b.cols) {
      const c = Math.max(a0, b0);
      if (c <= Math.min(a1, b1) && (col === undefined || c < col)) col = c;
    }
  return col === undefined ? undefined : r * COLS + col;
}

/** The cell ids a span holds, ascending. */
export function cellIdsOf({ r0, r1, cols }: CellSpan): number[] {
  const out: number[] = [];
  for (let r = r0; r <= r1; r++) for (const [c0, c1] of cols) for (let c = c0; c <= c1; c++) out.push(r * COLS + c);
  return out;
}
