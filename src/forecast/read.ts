// Reading a variable the way every answer reads it: a region named by role (whatever order the
// store keeps its dimensions in, whichever of them it has), and values in the variable's answer
// units (converted from the stored unit when they differ).
import { InvalidParameterError } from "../errors.ts";
import { type Soon, then } from "../soon.ts";
import { type Range, strides } from "../store/region.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import { rotateOne } from "./grid-projected.ts";

export interface Pick {
  /** Run index (the time axis). */
  run: number;
  /** Lead index, or a range of them; default every lead. */
  lead?: number | Range;
  /** Level index. */
  level?: number;
  /** Member index, or a range of them; default the group's control member. */
  member?: number | Range;
  /** Latitude row(s) and longitude column(s); default the whole axis. */
  lat?: number | Range;
  lon?: number | Range;
}

const span = (x: number | Range | undefined, n: number): Range =>
  x === undefined ? [0, n] : typeof x === "number" ? [x, x + 1] : x;

/** The storage region of a pick. A dimension the variable does not have is simply not there. */
export function regionOf(group: ForecastGroup, v: GroupVariable, p: Pick): Range[] {
  return v.roles.map((role, d): Range => {
    const n = v.array.shape[d];
    switch (role) {
      case "time":
        return [p.run, p.run + 1];
      case "lead":
        return span(p.lead, n);
      case "level":
        if (p.level === undefined) throw new InvalidParameterError("level", `${v.name} needs a level`);
        return [p.level, p.level + 1];
      case "member":
        return span(p.member ?? group.controlMember ?? 0, n);
      case "lat":
        return span(p.lat, n);
      case "lon":
        return span(p.lon, n);
      case "fixed": {
        const at = v.fixed?.[d] ?? 0;
        return [at, at + 1];
      }
    }
    return [0, n];
  });
}

/**
 * Values of a region in the variable's answer units (see GroupVariable.units): stored values
 * converted in place. At once when the array answers at once (a warm point column).
 */
export function readValues(v: GroupVariable, region: Range[]): Soon<Float32Array | Float64Array> {
  if (v.turn) return turned(v, region);
  if (v.plus) return summed(v, v.plus, region);
  return then(v.array.read(region), (values) => inAnswerUnits(v, values));
}

/**
 * A grid-relative wind component turned to true north (GroupVariable.turn): both components of
 * the region read, and each node's pair turned by the bearing of the grid's +y axis there.
 */
async function turned(v: GroupVariable, region: Range[]): Promise<Float32Array | Float64Array> {
  const { partner, along } = v.turn!;
  const [a, b] = await Promise.all([v.array.read(region), partner.array.read(region)]);
  const mine = inAnswerUnits(v, a);
  const other = inAnswerUnits(partner, b);
  const [u, w] = along === "x" ? [mine, other] : [other, mine];
  turnInPlace(v, region, u, w, along === "x" ? u : w);
  return mine;
}

/**
 * A variable stored in two parts (GroupVariable.plus: WRF's RAINC + RAINNC): both parts of the
 * region read and added, each in answer units; a node missing in either part is missing (NaN).
 */
async function summed(v: GroupVariable, part: GroupVariable, region: Range[]): Promise<Float32Array | Float64Array> {
  const [a, b] = await Promise.all([v.array.read(region), part.array.read(region)]);
  const total = inAnswerUnits(v, a);
  const other = inAnswerUnits(part, b);
  for (let i = 0; i < total.length; i++) total[i] += other[i];
  return total;
}

/**
 * Writes into `out` (u or w) the east (along "x") or north component of the grid-relative pair
 * (u along the grid's +x, w along its +y) of a region, values in the region's C order.
 */
export function turnInPlace(
  v: GroupVariable,
  region: Range[],
  u: Float32Array | Float64Array,
  w: Float32Array | Float64Array,
  out: Float32Array | Float64Array,
): void {
  const p = v.grid.projection!;
  const shape = region.map(([a, b]) => b - a);
  const st = strides(shape);
  const latDim = v.roles.indexOf("lat");
  const lonDim = v.roles.indexOf("lon");
  const east = v.turn!.along === "x";
  for (let k = 0; k < out.length; k++) {
    const iy = region[latDim][0] + (Math.floor(k / st[latDim]) % shape[latDim]);
    const ix = region[lonDim][0] + (Math.floor(k / st[lonDim]) % shape[lonDim]);
    const [e, n] = rotateOne(p, ix, iy, u[k], w[k]);
    out[k] = east ? e : n;
  }
}

/** Physical values converted in place to the variable's answer units. */
export function inAnswerUnits<T extends Float32Array | Float64Array>(v: GroupVariable, values: T): T {
  const f = v.convert;
  if (f) for (let i = 0; i < values.length; i++) values[i] = f(values[i]);
  return values;
}

/**
 * Values of a region as readValues gives them, for a bulk read that visits each chunk once (a map
 * build reading one lead of a whole field): when the array's stored values are its physical ones
 * (StoredArray.readsPhysicalInPlace), each chunk is read and decoded straight into the result on
 * libuv's pool, outside the chunk cache, decoding only the Blosc blocks the region lies in and,
 * with LZ4, only the head of the last one's byte planes (a lead of a chunk holding many is a small
 * part of it); otherwise as readValues.
 */
export async function readBulk(v: GroupVariable, region: Range[]): Promise<Float32Array | Float64Array> {
  if (v.turn || v.plus || !v.array.readsPhysicalInPlace()) return readValues(v, region);
  const shape = region.map(([a, b]) => b - a);
  const n = shape.reduce((a, b) => a * b, 1);
  // Not zero-filled: readStoredInto writes every value (a chunk not stored as its fill value).
  const values = new Float32Array(Buffer.allocUnsafeSlow(n * 4).buffer, 0, n);
  await v.array.readStoredInto(region, values, { offset: 0, strides: strides(shape) });
  return inAnswerUnits(v, values);
}
