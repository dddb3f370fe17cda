// Whether an accumulated variable's amounts run from the forecast's start or reset in buckets,
// when its metadata leaves that open: by ECMWF's convention, else checked against its values.
import { StoreUnavailableError } from "../errors.ts";
import { windowFromData } from "../registry/temporal.ts";
import type { StoredArray } from "./array.ts";
import type { DimRole } from "./dims.ts";
import type { Json } from "./metadata.ts";

/** ECMWF's GRIB accumulations (centre ecmf) run from the forecast's start, by its convention. */
export function ecmwfAccumulation(attrs: Json, groupAttrs: Json): boolean {
  return [attrs.GRIB_centre, groupAttrs.GRIB_centre].some((c) => c === "ecmf");
}

/** Most values read to tell a since-start amount from one reset in buckets: one run's leads. */
const WINDOW_CHECK_VALUES = 2 ** 22;

/**
 * Whether an amount said to run from the forecast's start really does, from the latest run's
 * values over all leads in the first spatial chunk (and level, control member): a since-start
 * amount never decreases; GFS-style buckets drop after each reset (see windowFromData).
 */
export async function accumulationWindow(
  v: { array: StoredArray; roles: DimRole[] },
  run: number,
  member: number,
  leads: number[],
): Promise<ReturnType<typeof windowFromData>> {
  const { array, roles } = v;
  const region = roles.map((role, d): [number, number] => {
    if (role === "time") return [run, run + 1];
    if (role === "lead") return [0, array.shape[d]];
    if (role === "member") return [member, member + 1];
    if (role === "level") return [0, 1];
    return [0, Math.min(array.shape[d], array.chunks[d])];
  });
  const size = region.reduce((n, [a, b]) => n * (b - a), 1);
  if (size > WINDOW_CHECK_VALUES) {
    return { window: "undecided", reason: "the store does not say, and its chunks are too large to check" };
  }
  let values: Float32Array | Float64Array;
  try {
    values = await array.read(region);
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw e;
    return { window: "undecided", reason: "its values could not be read to check" };
  }
  const leadDim = roles.indexOf("lead");
  if (leadDim < 0) return { window: "since_start" };
  let stride = 1;
  for (let d = region.length - 1; d > leadDim; d--) stride *= region[d][1] - region[d][0];
  let top = 0;
  for (const x of values) if (Math.abs(x) > top) top = Math.abs(x);
  // Float32 storage and packing round a since-start amount by a hair: drops below that are noise.
  const tol = top * 1e-5;
  const falls = new Set<number>();
  for (let i = 0; i < values.length; i++) {
    const li = Math.floor(i / stride) % leads.length;
    if (li > 0 && values[i] < values[i - stride] - tol) falls.add(li - 1);
  }
  return windowFromData(
    leads,
    [...falls].sort((a, b) => a - b),
  );
}
