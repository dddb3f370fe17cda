// Fill values and missing-value markers in the two views. The formats disagree on what an array's
// fill_value means: in Zarr v2 (as xarray reads it) it doubles as _FillValue and marks missing
// cells; in Zarr v3 it is only the value of chunks never written, and missing cells are marked by
// the CF _FillValue attribute alone. Published metadata must keep every stored value decoding to
// the same number in both views — above all, an integer v3 array with fill_value 0 must not turn
// real zeros into missing values in the v2 view.
import type { NodeMeta } from "../store/store.ts";
import { isFloat } from "./dtype.ts";
import { type Json, numericScalar, sameScalar } from "./zarr-json.ts";

export interface FillPlan {
  /** .zarray fill_value: the missing marker, or null when the array has none. */
  v2Fill: number | null;
  /** zarr.json fill_value: the value of chunks the store does not hold. */
  v3Fill: number;
  v2Attrs: Json;
  v3Attrs: Json;
  /** What the store layer reads for a chunk it does not hold. */
  absentValue: number;
  /**
   * The v2 view cannot express absentValue as "missing chunk" (its fill_value is a missing marker
   * that differs from it, or null), so it serves such chunks filled instead of answering 404.
   */
  v2ServesAbsent: boolean;
}

function without(attrs: Json, ...names: string[]): Json {
  const out = { ...attrs };
  for (const n of names) delete out[n];
  return out;
}

export function planFill(meta: NodeMeta): FillPlan {
  const a = meta.array!;
  const attrs = without(meta.attrs, "_ARRAY_DIMENSIONS");
  const stored = numericScalar(a.fill_value);
  if (meta.format === 2) {
    // v2 source: fill_value already is the missing marker; v3 readers learn it from _FillValue.
    const v3Attrs = { ...attrs };
    if (stored !== undefined && !("_FillValue" in v3Attrs)) v3Attrs._FillValue = stored;
    return {
      v2Fill: stored ?? null,
      v3Fill: stored ?? (isFloat(a.dtype) ? Number.NaN : 0),
      v2Attrs: stored !== undefined ? without(attrs, "_FillValue") : attrs,
      v3Attrs,
      absentValue: stored ?? 0,
      v2ServesAbsent: false,
    };
  }
  const absent = stored ?? 0;
  let marker = numericScalar(attrs._FillValue);
  if (marker !== undefined && !isFloat(a.dtype) && !Number.isInteger(marker)) marker = undefined;
  // A float array filled with NaN reads NaN for unwritten chunks either way.
  const v2Fill = marker ?? (isFloat(a.dtype) && Number.isNaN(absent) ? Number.NaN : null);
  return {
    v2Fill,
    v3Fill: absent,
    v2Attrs: without(attrs, "_FillValue"),
    v3Attrs: attrs,
    absentValue: absent,
    v2ServesAbsent: v2Fill === null || !sameScalar(v2Fill, absent),
  };
}
