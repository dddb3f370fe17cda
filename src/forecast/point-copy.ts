// The point-optimized (time-series-major) copy of a variable as answers see it: which values one
// node holds and in what order, what identifies the store data it was made from, and the
// interface a reader of the copy gives /point. The build writes it (pipeline/point-copy.ts, in
// the format of published/point-copy.ts); the store stays the truth and the fallback.
import { createHash } from "node:crypto";
import type { Soon } from "../soon.ts";
import type { Range } from "../store/region.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";

/** Raw bytes a block of nodes aims at: small enough that a request decodes little, large enough to compress. */
export const COPY_BLOCK_BYTES = 8192;

/**
 * How a variable's values are laid out in its copy: the spatial axes (a cell axis is one row of
 * nodes), nodes grouped in blocks of `by` × `bx`, and per node every level × member × lead value
 * in that order.
 */
export interface CopyLayout {
  ny: number;
  nx: number;
  by: number;
  bx: number;
  nLevel: number;
  nMember: number;
  nLead: number;
  /** Values per node: nLevel × nMember × nLead. */
  perNode: number;
  /** Bytes of one value: 4 (float32) or 8 (float64), as the store's reads give them. */
  bytes: 4 | 8;
}

export function copyLayout(v: GroupVariable): CopyLayout {
  const size = (role: string) => {
    const d = v.roles.indexOf(role as GroupVariable["roles"][number]);
    return d < 0 ? 1 : v.array.shape[d];
  };
  const ny = size("lat");
  const nx = size("lon");
  const nLevel = size("level");
  const nMember = size("member");
  const nLead = size("lead");
  const perNode = nLevel * nMember * nLead;
  const bytes = v.array.dtype === "float64" ? 8 : 4;
  const nodes = Math.max(1, Math.floor(COPY_BLOCK_BYTES / (perNode * bytes)));
  // Square blocks on a 2-D grid; a cell axis (one row) takes them in a line.
  const side = Math.max(1, Math.floor(Math.sqrt(nodes)));
  const by = ny === 1 ? 1 : Math.min(ny, side);
  const bx = ny === 1 ? Math.min(nx, nodes) : Math.min(nx, side);
  return { ny, nx, by, bx, nLevel, nMember, nLead, perNode, bytes };
}

/** Blocks along y and x, and the block holding node (iy, ix) with the node's place in it. */
export function blockOf(l: CopyLayout, iy: number, ix: number): { block: number; node: number; nodes: number } {
  const nbx = Math.ceil(l.nx / l.bx);
  const row = Math.floor(iy / l.by);
  const col = Math.floor(ix / l.bx);
  const h = Math.min(l.by, l.ny - row * l.by);
  const w = Math.min(l.bx, l.nx - col * l.bx);
  return { block: row * nbx + col, node: (iy - row * l.by) * w + (ix - col * l.bx), nodes: h * w };
}

export const blockCount = (l: CopyLayout): number => Math.ceil(l.ny / l.by) * Math.ceil(l.nx / l.bx);

/**
 * What the values of a variable depend on in the store's metadata (the same things a tile's
 * fingerprint does, and the array's path): a copy made under another revision is not used. The
 * run and its chunks' versions are checked beside it (PointCopies).
 */
const revisions = new WeakMap<GroupVariable, string>();

export function copyRevision(group: ForecastGroup, v: GroupVariable): string {
  let r = revisions.get(v);
  if (r === undefined) {
    const a = v.array;
    r = createHash("sha256")
      .update(
        JSON.stringify({
          path: a.path,
          shape: a.shape.map((n, d) => (v.roles[d] === "time" ? 0 : n)),
          dtype: a.dtype,
          codecs: a.meta.array?.codecs,
          chunks: a.chunks,
          dims: a.dims,
          roles: v.roles,
          fixed: v.fixed ?? null,
          fill: a.meta.array?.fill_value,
          packing: a.packing,
          attrs: a.meta.attrs,
          levels: group.levels ?? null,
          members: group.members ?? null,
          leads: group.leads,
        }),
      )
      .digest("hex")
      .slice(0, 32);
    revisions.set(v, r);
  }
  return r;
}

export interface CopyQuery {
  group: ForecastGroup;
  v: GroupVariable;
  run: number;
  /** Level index, when the variable has levels. */
  level: number | undefined;
  /** Member index, or the range [0, members) for every member; undefined without a member axis. */
  member: number | [number, number] | undefined;
  iy: number;
  ix: number;
}

/** One stored region of a box and where its values go (as StoredArray.readInto places them). */
export interface CopyBoxPart {
  region: Range[];
  place: { offset: number; strides: number[] };
}

/** A small box of one run, level and member: its regions (each lead range included). */
export interface CopyBoxQuery {
  group: ForecastGroup;
  v: GroupVariable;
  run: number;
  level: number | undefined;
  member: number | undefined;
  parts: CopyBoxPart[];
}

/**
 * A reader of a build's point copies. `column` gives the values readValues would read before unit
 * conversion (the same order: storage order of the region), or undefined when the copy does not
 * hold exactly what the store holds now (no copy of this run, another revision, a chunk
 * rewritten since): then the caller reads the store.
 */
export interface PointCopies {
  /** At once when everything it needs is in hand (a warm request), else a promise; never rejects. */
  column(q: CopyQuery): Soon<Float32Array | Float64Array | undefined>;
  /**
   * A check, made once and called at each reuse of an answer read from the copy, of whether the
   * copy still holds the column as the store holds it now, known without waiting: false whenever
   * something would have to be read or asked first (then the answer is read again). Undefined
   * when no such check can be made.
   */
  heldNow?(q: CopyQuery): (() => boolean) | undefined;
  /**
   * A small box's values (before unit conversion) written into `out` as its parts place them;
   * false when the copy does not hold all of them as the store holds them now (then `out` is not
   * to be trusted and the store is read).
   */
  box?(q: CopyBoxQuery, out: Float32Array): Soon<boolean>;
}

/**
 * The column of one node from its values in a copy (level × member × lead), in the storage order
 * of the region a store read would give (member and lead in the variable's dimension order).
 */
export function columnFromNode(
  v: GroupVariable,
  l: CopyLayout,
  values: Float32Array | Float64Array,
  level: number | undefined,
  member: number | [number, number] | undefined,
): Float32Array | Float64Array {
  const base = (level ?? 0) * l.nMember * l.nLead;
  if (!Array.isArray(member)) return values.slice(base + (member ?? 0) * l.nLead, base + ((member ?? 0) + 1) * l.nLead);
  const [m0, m1] = member;
  const nm = m1 - m0;
  const mDim = v.roles.indexOf("member");
  const lDim = v.roles.indexOf("lead");
  if (!(mDim >= 0 && lDim >= 0 && mDim > lDim)) return values.slice(base + m0 * l.nLead, base + m1 * l.nLead);
  const out = new (values.constructor as Float32ArrayConstructor)(nm * l.nLead);
  for (let i = 0; i < l.nLead; i++)
    for (let k = 0; k < nm; k++) out[i * nm + k] = values[base + (m0 + k) * l.nLead + i];
  return out;
}
