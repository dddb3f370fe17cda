// Place names the weather gives way to. The orientation layer keeps a label when it fits among the
// labels placed before it (orientation.ts: by priority, population with capitals boosted); of the
// kept labels, the big places' names are kept against the weather too: the wind-arrow lattice
// leaves out every arrow that would touch one, and isobar labels are not placed on one. The viewer
// hides a name that meets an arrow head or a line label, so these names stay whatever overlay is
// on, and only the smaller names yield as before. H/L marks do not move: a name under one yields.
//
// The big names are the first candidates of the layer's own placement order, and that placement
// is greedy, so placing them alone keeps exactly the boxes the full layout keeps for them, at a
// fraction of the cost (about a thousand labels' text at z6 and z7 rather than every town's):
// each render thread places them once per zoom, without waiting for the orientation job.
import { candidates, type LabelBox, loadPlaces, minPopulation, placeWithMasks, priority } from "./orientation.ts";
import { TILE_SIZE } from "./tiles.ts";

/** Bump when which names are kept, or how much room they are given, changes (arrow and isobar fingerprints). */
export const LABEL_RANK_VERSION = "1";

/**
 * The smallest priority whose name the weather gives way to, per zoom: below z5 every name shown
 * is a city of a million or more; from z6 on the regional centres (Zürich, Pittsburgh) count.
 */
const KEEP_PRIORITY = [20e6, 10e6, 3e6, 2e6, 1e6, 700e3, 250e3, 250e3];

export const keepPriority = (z: number): number =>
  Math.max(minPopulation(z), KEEP_PRIORITY[Math.max(0, Math.min(KEEP_PRIORITY.length - 1, z))]);

/** Screen pixels kept clear between a kept name's box (its halo included) and an arrow or line label. */
export const KEEP_CLEARANCE = 3;

const kept = new Map<number, Promise<LabelBox[]>>();

/** The boxes (world pixels of zoom z) of the names the weather gives way to at zoom z; placed once per thread. */
export function keptLabels(z: number): Promise<LabelBox[]> {
  let got = kept.get(z);
  if (!got) {
    const min = keepPriority(z);
    const big = candidates(loadPlaces(), z).filter((p) => priority(p) >= min);
    got = placeWithMasks(big, z).then((labels) => labels.map(({ mask: _mask, ...box }) => box));
    kept.set(z, got);
  }
  return got;
}

/** Cell size of the index, in world pixels of the screen zoom. */
const CELL = 128;

/**
 * The kept names of one zoom as obstacles, in world pixels of that zoom times `scale` (2: the
 * lattice of an @2x quarter, drawn on the next zoom's world): `meets` answers whether a rectangle
 * comes within KEEP_CLEARANCE screen pixels of a name. The world wraps: a rectangle past the
 * antimeridian is compared with the nearest copy of each name.
 */
export class KeptNames {
  readonly boxes: LabelBox[];
  private readonly cells = new Map<number, number[]>();
  private readonly world: number;
  private readonly cols: number;
  private readonly cell: number;
  private readonly pad: number;
  readonly scale: number;

  constructor(boxes: LabelBox[], z: number, scale = 1) {
    this.boxes = boxes;
    this.scale = scale;
    this.world = TILE_SIZE * 2 ** z * scale;
    this.cell = CELL * scale;
    this.cols = Math.ceil(this.world / this.cell);
    this.pad = KEEP_CLEARANCE * scale;
    boxes.forEach((b, i) => {
      for (const key of this.keys(b.x * scale, b.y * scale, (b.x + b.w) * scale, (b.y + b.h) * scale)) {
        const list = this.cells.get(key);
        if (list) list.push(i);
        else this.cells.set(key, [i]);
      }
    });
  }

  static async of(z: number, scale = 1): Promise<KeptNames> {
    return new KeptNames(await keptLabels(z), z, scale);
  }

  private *keys(x0: number, y0: number, x1: number, y1: number): Generator<number> {
    const c = this.cell;
    for (let cy = Math.floor(y0 / c); cy <= Math.floor(y1 / c); cy++) {
      for (let cx = Math.floor(x0 / c); cx <= Math.floor(x1 / c); cx++) {
        yield cy * this.cols + (((cx % this.cols) + this.cols) % this.cols);
      }
    }
  }

  /** Whether the rectangle [x0, x1] × [y0, y1] (world pixels of this index) comes near a kept name. */
  meets(x0: number, y0: number, x1: number, y1: number): boolean {
    const s = this.scale;
    const p = this.pad;
    for (const key of this.keys(x0 - p, y0 - p, x1 + p, y1 + p)) {
      for (const i of this.cells.get(key) ?? []) {
        const b = this.boxes[i];
        const bx = b.x * s;
        const shift = this.world * Math.round((x0 - bx) / this.world);
        const left = bx + shift;
        if (x0 < left + b.w * s + p && left < x1 + p && y0 < (b.y + b.h) * s + p && b.y * s < y1 + p) return true;
      }
    }
    return false;
  }
}
