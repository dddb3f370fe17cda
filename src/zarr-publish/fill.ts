// Fill values and missing-value markers in the two views. The formats disagree on what an array's
// fill_value means: in Zarr v2 (as xarray reads it) it doubles as _FillValue and marks missing
// cells; in Zarr v3 it is only the value of chunks never written, and missing cells are marked by
// the CF _FillValue attribute alone. Published metadata must keep every stored value decoding to
// the same number in both views — above all, an integer v3 array with fill_value 0 must not turn
// real zeros into missing values in the v2 view.
import { base64Double, type Decoding, zarrScalar } from "../store/cf.ts";
import type { NodeMeta } from "../store/store.ts";
import { isFloat } from "./dtype.ts";
import { type Json, sameScalar } from "./zarr-json.ts";

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

/** A marker list as an attribute: a scalar for one value, a list for several. */
const asAttr = (values: number[]): number | number[] => (values.length === 1 ? values[0] : values);

/**
 * Both views carry the markers the store layer decodes with (cf.ts), written as each client
 * generation reads them: v2 puts the _FillValue in .zarray's fill_value (xarray + zarr 2 take it from
 * there); v3 writes it as the _FillValue attribute, base64 of a little-endian float64 for float
 * arrays (what xarray + zarr 3 write and insist on reading) and an integer otherwise. Every other
 * marker is missing_value in both.
 */
export function planFill(meta: NodeMeta, decoding: Decoding): FillPlan {
  const a = meta.array!;
  const float = isFloat(a.dtype);
  const attrs = without(meta.attrs, "_ARRAY_DIMENSIONS", "_FillValue", "missing_value");
  if (decoding.missingValue.length > 0) attrs.missing_value = asAttr(decoding.missingValue);
  const stored = zarrScalar(a.fill_value);
  const absent = stored ?? 0;
  const marker = decoding.fillValue;
  const v3Attrs = { ...attrs };
  if (marker !== undefined) {
    v3Attrs._FillValue = float ? base64Double(marker) : marker;
  }
  // A float array filled with NaN reads NaN for unwritten chunks either way.
  const v2Fill = marker ?? (float && Number.isNaN(absent) ? Number.NaN : null);
  // A v2 source without a fill value answers 404 for missing chunks in its own v2 view, as stored.
  const asStored = meta.format === 2 && stored === undefined && v2Fill === null;
  return {
    v2Fill,
    v3Fill: absent,
    v2Attrs: attrs,
    v3Attrs,
    absentValue: absent,
    v2ServesAbsent: !asStored && (v2Fill === null || !sameScalar(v2Fill, absent)),
  };
}
