// One forecast group as a published dataset: its registered variables under their canonical names
// with dimensions named by role, plus coordinate arrays, each with one chunk grid and one encoding
// shared by the Zarr v2 and v3 views. Built from metadata and the already-decoded coordinates.
import { encodingOf } from "../store/chunk-key.ts";
import type { ForecastGroup, NodeMeta, StoredArray } from "../store/store.ts";
import { type CoordArray, coordinateArrays, DIM_NAMES } from "./coordinates.ts";
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

  for (const v of [...group.variables.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const meta = v.array.meta;
    const a = meta.array!;
    const dims = v.roles.map((r) => DIM_NAMES[r]);
    if (!isPublishable(a.dtype)) {
      skipped.push({ stored: v.stored, reason: `data type ${a.dtype}` });
      continue;
    }
    // xarray refuses a dataset whose variable disagrees with its coordinate's length.
    const bad = dims.findIndex((d, i) => length.get(d) !== a.shape[i]);
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
      fill: planFill(meta, v.array.packing),
      source: { kind: "stored", array: v.array, sourceKey: encodingOf(meta) },
    });
  }
  for (const u of group.unregistered) skipped.push({ stored: u.stored, reason: u.reason });
  const attrs = { ...group.attrs };
  delete attrs._ARRAY_DIMENSIONS;
  return { id, group, attrs, arrays, skipped };
}
