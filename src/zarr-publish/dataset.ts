// One forecast group as a published dataset: its registered variables under their canonical names
// with dimensions named by role, plus coordinate arrays, each with one chunk grid and one encoding
// shared by the Zarr v2 and v3 views. Built from metadata and the already-decoded coordinates.

import { dimNamesOf, publishedDims } from "../forecast/dim-names.ts";
import { cfDecoding } from "../store/cf.ts";
import { encodingOf } from "../store/chunk-key.ts";
import type { ForecastGroup, NodeMeta, StoredArray } from "../store/store.ts";
import { type CoordArray, coordinateArrays } from "./coordinates.ts";
import { isPublishable } from "./dtype.ts";
import { type Encoding, planEncoding } from "./encoding.ts";
import { type FillPlan, planFill } from "./fill.ts";
import type { Json } from "./zarr-json.ts";

export type ChunkSource =
  /** A coordinate: its one chunk, built from values. */
  | { kind: "coordinate"; coord: CoordArray }
  /** A stored array: chunk bytes come from the store (as they are, or re-encoded). */
  | { kind: "stored"; array: StoredArray; sourceKey: (coords: number[]) => string };

export interface PublishedArray {
  name: string;
  dims: string[];
  shape: number[];
  chunks: number[];
  /** Chunks per dimension. */
  grid: number[];
  dtype: string;
  encoding: Encoding;
  fill: FillPlan;
  source: ChunkSource;
  /** Part of the grid's description (a projected grid's 2-D latitude/longitude, its grid mapping), not a variable. */
  auxiliary?: boolean;
}

export interface PublishedDataset {
  /** Dataset id in the ~ form (forecast~global). */
  id: string;
  group: ForecastGroup;
  attrs: Json;
  /** Coordinates first, then variables, each in name order. */
  arrays: Map<string, PublishedArray>;
  /** Stored arrays left out, with the reason (readers see them nowhere else). */
  skipped: { stored: string; reason: string }[];
}

function coordinate(c: CoordArray): PublishedArray {
  const n = c.values.length;
  return {
    name: c.name,
    dims: [c.name],
    shape: [n],
    chunks: [Math.max(1, n)],
    grid: [1],
    dtype: c.dtype,
    encoding: {
      passthrough: false,
      endian: "little",
      v2Compressor: null,
      v3Codecs: [{ name: "bytes", configuration: { endian: "little" } }],
    },
    fill: {
      v2Fill: c.dtype === "float64" ? Number.NaN : null,
      v3Fill: c.dtype === "float64" ? Number.NaN : 0,
      v2Attrs: c.attrs,
      v3Attrs: c.attrs,
      absentValue: 0,
      v2ServesAbsent: false,
    },
    source: { kind: "coordinate", coord: c },
  };
}

export function buildDataset(id: string, group: ForecastGroup, nodes: Map<string, NodeMeta>): PublishedDataset {
  const arrays = new Map<string, PublishedArray>();
  const skipped: { stored: string; reason: string }[] = [];
  const coords = coordinateArrays(group, nodes);
  const length = new Map(coords.map((c) => [c.name, c.values.length]));
  for (const c of coords) arrays.set(c.name, coordinate(c));
  const names = dimNamesOf(group);
  const grid = gridArrays(group, nodes, names);
  for (const a of grid.arrays) arrays.set(a.name, a);

  for (const v of [...group.variables.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const meta = v.array.meta;
    const a = meta.array!;
    const dims = publishedDims(group, v);
    if (!isPublishable(a.dtype)) {
      skipped.push({ stored: v.stored, reason: `data type ${a.dtype}` });
      continue;
    }
    // xarray refuses a dataset whose variable disagrees with its coordinate's length.
    // A squeezed dimension of one entry has no coordinate (xarray reads it as a bare dimension).
    const bad = dims.findIndex((d, i) => v.roles[i] !== "single" && length.get(d) !== a.shape[i]);
    if (bad >= 0) {
      skipped.push({ stored: v.stored, reason: `dimension ${dims[bad]} does not match its coordinate` });
      continue;
    }
    arrays.set(v.name, {
      name: v.name,
      dims,
      shape: a.shape,
      chunks: a.chunks,
      grid: a.shape.map((s, d) => Math.ceil(s / a.chunks[d])),
      dtype: a.dtype,
      encoding: planEncoding(meta),
      fill: withAttrs(planFill(meta, v.array.packing), grid.variableAttrs),
      source: { kind: "stored", array: v.array, sourceKey: encodingOf(meta) },
    });
  }
  for (const u of group.unregistered) skipped.push({ stored: u.stored, reason: u.reason });
  const attrs = { ...group.attrs };
  delete attrs._ARRAY_DIMENSIONS;
  return { id, group, attrs, arrays, skipped };
}

function withAttrs(fill: FillPlan, attrs: Json): FillPlan {
  const out = { ...fill, v2Attrs: { ...fill.v2Attrs }, v3Attrs: { ...fill.v3Attrs } };
  for (const side of [out.v2Attrs, out.v3Attrs]) {
    for (const k of ["grid_mapping", "coordinates"]) delete side[k];
    Object.assign(side, attrs);
  }
  return out;
}

/**
 * A projected grid's CF description beside its variables: the grid mapping as a scalar variable
 * with the store's attributes (so xarray/rioxarray/pyproj find the CRS), and the stored 2-D
 * latitude/longitude as latitude(y, x) and longitude(y, x), their chunks passed through.
 */
function gridArrays(
  group: ForecastGroup,
  nodes: Map<string, NodeMeta>,
  names: Record<string, string>,
): { arrays: PublishedArray[]; variableAttrs: Json } {
  const p = group.grid.projection;
  if (!p) return { arrays: [], variableAttrs: {} };
  const arrays: PublishedArray[] = [];
  const mappingAttrs: Json = { ...p.attrs };
  for (const k of ["_FillValue", "missing_value", "_ARRAY_DIMENSIONS", "units", "dtype"]) delete mappingAttrs[k];
  if (!("crs_wkt" in mappingAttrs) && !p.definition.startsWith("+")) mappingAttrs.crs_wkt = p.definition;
  const mapping: CoordArray = { name: "spatial_ref", dtype: "int32", values: Int32Array.of(0), attrs: mappingAttrs };
  arrays.push({
    ...coordinate(mapping),
    dims: [],
    shape: [],
    chunks: [],
    grid: [],
    auxiliary: true,
  });
  const coordsAttr: string[] = [];
  for (const [array, name, standard, units] of [
    [p.lat2dArray, "latitude", "latitude", "degrees_north"],
    [p.lon2dArray, "longitude", "longitude", "degrees_east"],
  ] as const) {
    // The metadata the group was built from, as for every published array.
    const meta = array ? nodes.get(array.path) : undefined;
    if (!array || !meta?.array || !isPublishable(meta.array.dtype)) continue;
    const a = meta.array;
    const fill = planFill(meta, cfDecoding(meta.attrs, a.dtype, a.fill_value, meta.format));
    for (const side of [fill.v2Attrs, fill.v3Attrs]) {
      side.standard_name = standard;
      side.units = units;
    }
    arrays.push({
      name,
      dims: [names.lat, names.lon],
      shape: a.shape,
      chunks: a.chunks,
      grid: a.shape.map((s, d) => Math.ceil(s / a.chunks[d])),
      dtype: a.dtype,
      encoding: planEncoding(meta),
      fill,
      source: { kind: "stored", array, sourceKey: encodingOf(meta) },
      auxiliary: true,
    });
    coordsAttr.push(name);
  }
  return {
    arrays,
    variableAttrs: { grid_mapping: "spatial_ref", ...(coordsAttr.length ? { coordinates: coordsAttr.join(" ") } : {}) },
  };
}
