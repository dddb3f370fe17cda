// One forecast group as a published dataset: its registered variables under their canonical names
// with dimensions named by role, plus coordinate arrays, each with one chunk grid and one encoding
// shared by the Zarr v2 and v3 views. Built from metadata and the already-decoded coordinates.

import { dimNamesOf, gridDimNames, publishedDims } from "../forecast/dim-names.ts";
import { cfDecoding } from "../store/cf.ts";
import { encodingOf } from "../store/chunk-key.ts";
import type { ForecastGroup, NodeMeta, StoredArray } from "../store/store.ts";
import { type CoordArray, coordinateArrays } from "./coordinates.ts";
import { isPublishable } from "./dtype.ts";
import { type Encoding, planEncoding, reencoded } from "./encoding.ts";
import { type FillPlan, planFill } from "./fill.ts";
import { GRID_MAPPING_NAME, groupCrs } from "./grid-crs.ts";
import { ascending, type Flip } from "./north-up.ts";
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
  /** Rows reversed along this dimension (a south-to-north axis published north-up). */
  flip?: Flip;
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
  const chunk = c.chunk ?? Math.max(1, n);
  return {
    name: c.name,
    dims: [c.name],
    shape: [n],
    chunks: [chunk],
    grid: [Math.max(1, Math.ceil(n / chunk))],
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
  const flipped = northUp(group, coords);
  for (const c of coords) arrays.set(c.name, coordinate(c));
  const names = dimNamesOf(group);
  const grid = gridArrays(group, nodes, names);
  for (const a of grid.arrays) arrays.set(a.name, withFlip(a, flipped));

  for (const v of [...group.variables.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const meta = v.array.meta;
    const a = meta.array!;
    const dims = publishedDims(group, v);
    // Dimensions read at a fixed index (anemoi-datasets' variables axis) keep their stored names:
    // the stored array is published whole, once, in the store's own layout.
    if (v.fixed) {
      const stored = v.array.path.split("/").pop()!;
      if (arrays.has(stored)) continue;
      for (const [d, r] of v.roles.entries()) if (r === "fixed" || r === "single") length.set(dims[d], a.shape[d]);
      arrays.set(stored, storedArray(stored, v.array, dims, grid.variableAttrs));
      continue;
    }
    if (!isPublishable(a.dtype)) {
      skipped.push({
        stored: v.stored,
        reason: `data type ${a.dtype} has no Zarr view (store it as a float or integer type to publish it under /data)`,
      });
      continue;
    }
    // xarray refuses a dataset whose variable disagrees with its coordinate's length.
    // A squeezed dimension of one entry has no coordinate (xarray reads it as a bare dimension).
    const bad = dims.findIndex((d, i) => v.roles[i] !== "single" && length.get(d) !== a.shape[i]);
    if (bad >= 0) {
      skipped.push({
        stored: v.stored,
        reason: `dimension ${dims[bad]} does not match its coordinate's length (xarray refuses it; store them alike)`,
      });
      continue;
    }
    // A wind component along a projected grid's axes: /data passes stored chunks through and does
    // not turn them to east/north as the other routes do, so it keeps its stored name (and its
    // standard_name x_wind/y_wind, and the grid mapping to turn it by), never u10 or v10.
    // Likewise a variable stored in two parts (WRF's RAINC + RAINNC): /data cannot add them, so
    // each part is published under its stored name, never as the total.
    const name = v.turn || v.plus ? v.stored : v.name;
    arrays.set(name, withFlip(storedArray(name, v.array, dims, grid.variableAttrs), flipped));
    if (v.plus) {
      const p = v.plus.stored;
      arrays.set(p, withFlip(storedArray(p, v.plus.array, dims, grid.variableAttrs), flipped));
    }
  }
  for (const u of group.unregistered) skipped.push({ stored: u.stored, reason: u.reason });
  const attrs = { ...group.attrs };
  delete attrs._ARRAY_DIMENSIONS;
  return { id, group, attrs, arrays, skipped };
}

/** A stored array published under `name`, its chunks from the store, the grid's attributes added. */
function storedArray(name: string, array: StoredArray, dims: string[], attrs: Json): PublishedArray {
  const meta = array.meta;
  const a = meta.array!;
  return {
    name,
    dims,
    shape: a.shape,
    chunks: a.chunks,
    grid: a.shape.map((n, d) => Math.ceil(n / a.chunks[d])),
    dtype: a.dtype,
    encoding: planEncoding(meta),
    fill: withAttrs(planFill(meta, array.packing), attrs),
    source: { kind: "stored", array, sourceKey: encodingOf(meta) },
  };
}

/**
 * Reverse, in place, every latitude (projected y) coordinate that runs south to north; the names
 * of the dimensions whose arrays must then be published with their rows reversed.
 */
function northUp(group: ForecastGroup, coords: CoordArray[]): Set<string> {
  const lats = new Set(
    group.grids.length > 1 ? [...gridDimNames(group).values()].map((n) => n.lat) : [dimNamesOf(group).lat],
  );
  const out = new Set<string>();
  for (const c of coords) {
    if (!lats.has(c.name) || c.values instanceof BigInt64Array || !ascending(c.values)) continue;
    c.values.reverse();
    out.add(c.name);
  }
  return out;
}

/** A stored array along a reversed dimension: its chunks are assembled reversed, so re-encoded. */
function withFlip(a: PublishedArray, flipped: Set<string>): PublishedArray {
  if (a.source.kind !== "stored") return a;
  const dim = a.dims.findIndex((d) => flipped.has(d));
  if (dim < 0) return a;
  return { ...a, flip: { dim }, encoding: reencoded("published north-up") };
}

function withAttrs(fill: FillPlan, attrs: Json): FillPlan {
  const out = { ...fill, v2Attrs: { ...fill.v2Attrs }, v3Attrs: { ...fill.v3Attrs } };
  for (const side of [out.v2Attrs, out.v3Attrs]) {
    for (const k of ["grid_mapping", "coordinates", "_CRS"]) delete side[k];
    Object.assign(side, attrs);
  }
  return out;
}

/**
 * The grid's description beside its variables: the CRS as a scalar grid mapping variable (so
 * GDAL, QGIS, xarray/rioxarray and pyproj find it) and, for a projected grid, the stored 2-D
 * latitude/longitude as latitude(y, x) and longitude(y, x), their chunks passed through.
 */
function gridArrays(
  group: ForecastGroup,
  nodes: Map<string, NodeMeta>,
  names: Record<string, string>,
): { arrays: PublishedArray[]; variableAttrs: Json } {
  if (group.grid.cells) return cellArrays(group);
  const crs = groupCrs(group);
  const mapping: CoordArray = {
    name: GRID_MAPPING_NAME,
    dtype: "int32",
    values: Int32Array.of(0),
    attrs: crs.mappingAttrs,
  };
  const arrays: PublishedArray[] = [
    { ...coordinate(mapping), dims: [], shape: [], chunks: [], grid: [], auxiliary: true },
  ];
  // Listed in `coordinates` too, so xarray keeps the mapping beside the variables, not as one.
  const variableAttrs: Json = { grid_mapping: GRID_MAPPING_NAME, coordinates: GRID_MAPPING_NAME, _CRS: crs.gdal };
  const p = group.grid.projection;
  if (!p) return { arrays, variableAttrs };
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
  if (p.nodes) {
    // A curvilinear grid has no CRS to state: its variables are placed by latitude/longitude only.
    return { arrays: arrays.slice(1), variableAttrs: { coordinates: coordsAttr.join(" ") } };
  }
  variableAttrs.coordinates = [...coordsAttr, GRID_MAPPING_NAME].join(" ");
  return { arrays, variableAttrs };
}

/**
 * An unstructured grid's description beside its variables: the cells' centres as latitude(cell)
 * and longitude(cell) in degrees (computed for HEALPix, converted from radians for ICON), and a
 * scalar `crs` saying what the grid is: CF's healpix grid mapping (nside, order) for HEALPix, the
 * layout and its producer attributes otherwise.
 */
function cellArrays(group: ForecastGroup): { arrays: PublishedArray[]; variableAttrs: Json } {
  const cells = group.grid.cells!;
  const h = cells.axes.healpix;
  const attrs: Json = h
    ? {
        grid_mapping_name: "healpix",
        healpix_nside: h.nside,
        healpix_order: h.order,
        refinement_level: Math.log2(h.nside),
      }
    : {
        grid_mapping_name: "latitude_longitude",
        long_name: `${cells.layout.replace("_", " ")} grid of ${cells.n} cells`,
        gridcast_cell_layout: cells.layout,
        ...(cells.layout === "icon" ? { CDI_grid_type: "unstructured" } : {}),
        ...(cells.layout === "reduced_gaussian" ? { GRIB_gridType: "reduced_gg" } : {}),
      };
  const scalar: CoordArray = { name: "crs", dtype: "int32", values: Int32Array.of(0), attrs };
  const arrays: PublishedArray[] = [
    { ...coordinate(scalar), dims: [], shape: [], chunks: [], grid: [], auxiliary: true },
  ];
  for (const [name, values, standard, units] of [
    ["latitude", cells.lat, "latitude", "degrees_north"],
    ["longitude", cells.lon, "longitude", "degrees_east"],
  ] as const) {
    const c: CoordArray = {
      name,
      dtype: "float64",
      values,
      attrs: { standard_name: standard, long_name: standard, units },
    };
    arrays.push({ ...coordinate(c), dims: ["cell"], auxiliary: true });
  }
  return { arrays, variableAttrs: { grid_mapping: "crs", coordinates: "latitude longitude" } };
}
