// The metadata documents of both views of a published dataset. v2: .zgroup, .zattrs, per array
// .zarray and .zattrs (with _ARRAY_DIMENSIONS), and consolidated .zmetadata — what zarr-python 2
// and xarray read. v3: per array zarr.json (with dimension_names) and a root zarr.json carrying
// inline consolidated metadata — what zarr-python 3 and zarrita read. Chunk keys: "i.j.k" (v2),
// "c/i/j/k" (v3).
import type { PublishedArray, PublishedDataset } from "./dataset.ts";
import { v2Dtype } from "./dtype.ts";
import { type Json, jsonBytes } from "./zarr-json.ts";

function zarray(a: PublishedArray): Json {
  return {
    zarr_format: 2,
    shape: a.shape,
    chunks: a.chunks,
    dtype: v2Dtype(a.dtype, a.encoding.endian),
    compressor: a.encoding.v2Compressor,
    fill_value: a.fill.v2Fill,
    order: "C",
    filters: null,
    dimension_separator: ".",
  };
}

function arrayJson(a: PublishedArray): Json {
  return {
    zarr_format: 3,
    node_type: "array",
    shape: a.shape,
    data_type: a.dtype,
    chunk_grid: { name: "regular", configuration: { chunk_shape: a.chunks } },
    chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
    fill_value: a.fill.v3Fill,
    codecs: a.encoding.v3Codecs,
    attributes: a.fill.v3Attrs,
    dimension_names: a.dims,
    storage_transformers: [],
  };
}

/** Every metadata key of both views → its document bytes. */
export function metadataDocuments(ds: PublishedDataset): Map<string, Uint8Array> {
  const v2: Record<string, Json> = { ".zgroup": { zarr_format: 2 }, ".zattrs": ds.attrs };
  const v3Children: Record<string, Json> = {};
  for (const a of ds.arrays.values()) {
    v2[`${a.name}/.zarray`] = zarray(a);
    v2[`${a.name}/.zattrs`] = { ...a.fill.v2Attrs, _ARRAY_DIMENSIONS: a.dims };
    v3Children[a.name] = arrayJson(a);
  }
  const out = new Map<string, Uint8Array>();
  for (const [key, doc] of Object.entries(v2)) out.set(key, jsonBytes(doc));
  out.set(".zmetadata", jsonBytes({ zarr_consolidated_format: 1, metadata: v2 }));
  for (const [name, doc] of Object.entries(v3Children)) out.set(`${name}/zarr.json`, jsonBytes(doc));
  out.set(
    "zarr.json",
    jsonBytes({
      zarr_format: 3,
      node_type: "group",
      attributes: ds.attrs,
      consolidated_metadata: { kind: "inline", must_understand: false, metadata: v3Children },
    }),
  );
  return out;
}
