// Nodes without a value (NaN after CF decoding: fill values, chunks never written) are drawn as
// diagonal hatching, so a hole in the data never reads as clear sky or as a dry spot. The ramp
// leaves such pixels at index 0 together with its transparent range; which of them are missing is
// found by sampling a second field through the same sampler and method: 1 at missing nodes, NaN at
// present ones. Bilinear sampling falls back to a cell's nearest corner when a corner is NaN, so
// swapping which nodes are NaN swaps exactly which pixels come out NaN: the hatch covers the
// pixels the ramp left empty for want of a value, and never a pixel off the grid.
import type { Palette } from "./colormap.ts";

export const NO_DATA_LABEL = "no data";
/** Hatch ink: a dark slate, translucent so the land and coasts stay readable under it. */
export const HATCH_RGBA: readonly [number, number, number, number] = [55, 60, 72, 190];
/** Stripes from lower left to upper right, HATCH_WIDTH inked pixels in every HATCH_PERIOD (world pixels). */
export const HATCH_PERIOD = 8;
export const HATCH_WIDTH = 3;
/** The palette index the hatch takes in a tile that has any (the ramp's top bin moves one down). */
export const HATCH_INDEX = 255;

/** 1 at missing nodes, NaN at present ones; undefined when no node is missing (nothing to hatch). */
export function missingNodes(field: Float32Array | Float64Array): Float32Array | undefined {
  let any = false;
  for (let i = 0; i < field.length; i++) {
    if (Number.isNaN(field[i])) {
      any = true;
      break;
    }
  }
  if (!any) return undefined;
  const out = new Float32Array(field.length);
  for (let i = 0; i < field.length; i++) out[i] = Number.isNaN(field[i]) ? 1 : Number.NaN;
  return out;
}

const MASK_RGBA = new Uint8Array(256 * 4);
/** Index 1 for any value above 0 (the 1s of missingNodes), 0 for NaN and off-grid pixels. */
export const MISSING_PALETTE: Palette = {
  rgba: MASK_RGBA,
  lut: (v) => (v > 0 ? 1 : 0),
  axisLut: (v) => (v > 0 ? 1 : 0),
  scale: 0,
  offset: 1,
  below: 0,
};

/** Whether world pixel (col, row) of a level is inked. */
export const hatched = (col: number, row: number): boolean =>
  (((col + row) % HATCH_PERIOD) + HATCH_PERIOD) % HATCH_PERIOD < HATCH_WIDTH;

/**
 * Hatches the pixels of a `size`² tile whose first pixel is world pixel (col0, row0): where the
 * ramp drew nothing and `missing` (the missing field's indices under MISSING_PALETTE) is 1. Tiles
 * of a field with missing nodes are all drawn with withHatch's palette, so the ramp's own
 * HATCH_INDEX pixels move to the index below (the same class of a stepped ramp, the next bin of a
 * smooth one). Returns whether any pixel was inked.
 */
export function hatchMissing(
  indices: Uint8Array,
  missing: Uint8Array,
  col0: number,
  row0: number,
  size: number,
): boolean {
  let inked = false;
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i];
    if (v === HATCH_INDEX) indices[i] = HATCH_INDEX - 1;
    else if (v === 0 && missing[i] === 1 && hatched(col0 + (i % size), row0 + ((i / size) | 0))) {
      indices[i] = HATCH_INDEX;
      inked = true;
    }
  }
  return inked;
}

/** The ramp's palette with the hatch ink in HATCH_INDEX. */
export function withHatch(rgba: Uint8Array): Uint8Array {
  const out = rgba.slice();
  out.set(HATCH_RGBA, HATCH_INDEX * 4);
  return out;
}
