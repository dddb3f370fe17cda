// Item metadata: shape, chunking, coordinates, CRS and a small preview. Reads the item group's
// metadata, the two 1-D coordinate arrays and the preview array; never the latent itself.
import { CorruptDataError, NotFoundError } from "../errors.ts";
import type { NodeMeta, Store, StoredArray } from "../store/store.ts";
import { type ItemGeometry, itemGeometry } from "./item-geometry.ts";
import { type ItemRef, periodDates } from "./names.ts";

/** A preview larger than this many values is not sent (the sample's is 16 × 16 × 3). */
export const PREVIEW_MAX_VALUES = 4096;

export interface ItemNodes {
  ref: ItemRef;
  attrs: Record<string, unknown>;
  latent: StoredArray;
  nodes: Map<string, NodeMeta>;
  geometry: ItemGeometry;
}

/** The item's group metadata and its latent array, from metadata alone. */
export async function openItem(store: Store, ref: ItemRef): Promise<ItemNodes> {
  const base = `embeddings/${ref.path}`;
  let nodes: Map<string, NodeMeta>;
  try {
    nodes = await store.groupNodes(base);
  } catch (e) {
    if (e instanceof NotFoundError) throw new NotFoundError(`no embedding item "${ref.name}"`, { item: ref.name });
    throw e;
  }
  const meta = nodes.get(`${base}/latent`);
  if (meta?.kind !== "array" || meta.array?.shape.length !== 3) {
    throw new CorruptDataError(`embedding item "${ref.name}" has no (y, x, feature) latent array`);
  }
  const attrs = nodes.get(base)?.attrs ?? {};
  return { ref, attrs, latent: store.array(meta), nodes, geometry: itemGeometry(ref.tile, attrs, meta.array.shape) };
}

async function coordinate(store: Store, item: ItemNodes, name: "x" | "y", n: number) {
  const meta = item.nodes.get(`embeddings/${item.ref.path}/${name}`);
  if (meta?.kind !== "array" || meta.array?.shape.length !== 1 || meta.array.shape[0] !== n) return null;
  const v = await store.array(meta).read([[0, n]]);
  return {
    first: v[0],
    last: v[n - 1],
    min: Math.min(v[0], v[n - 1]),
    max: Math.max(v[0], v[n - 1]),
    step: n > 1 ? (v[n - 1] - v[0]) / (n - 1) : null,
    count: n,
    units: (meta.attrs.units as string | undefined) ?? null,
    meaning: "pixel centre",
  };
}

async function preview(store: Store, item: ItemNodes) {
  const meta = item.nodes.get(`embeddings/${item.ref.path}/preview`);
  const shape = meta?.array?.shape;
  if (meta?.kind !== "array" || shape?.length !== 3 || shape.reduce((a, b) => a * b, 1) > PREVIEW_MAX_VALUES) {
    return null;
  }
  const flat = await store.array(meta).read(shape.map((n) => [0, n] as [number, number]));
  const [py, px, pb] = shape;
  // Nested [y][x][band], seven significant digits: float32 precision without the noise.
  const data = Array.from({ length: py }, (_, i) =>
    Array.from({ length: px }, (_, j) =>
      Array.from({ length: pb }, (_, k) => {
        const v = flat[(i * px + j) * pb + k];
        return Number.isNaN(v) ? null : Number(v.toPrecision(7));
      }),
    ),
  );
  return {
    dims: meta.array?.dimension_names ?? ["preview_y", "preview_x", "preview_band"],
    shape,
    pool: (item.attrs.preview_pool as number | undefined) ?? null,
    description: (meta.attrs.long_name as string | undefined) ?? null,
    data,
  };
}

export async function itemMetadata(store: Store, ref: ItemRef) {
  const item = await openItem(store, ref);
  const a = item.latent;
  const [ny, nx, nf] = a.shape;
  const g = item.geometry;
  const [x, y, pv] = await Promise.all([
    coordinate(store, item, "x", nx),
    coordinate(store, item, "y", ny),
    preview(store, item),
  ]);
  const attrs = item.attrs;
  return {
    name: ref.name,
    path: `embeddings/${ref.path}`,
    family: ref.family,
    model_version: ref.version,
    product: ref.product,
    period: { id: ref.period, ...periodDates(ref.period) },
    tile: ref.tile,
    crs: g.crs,
    epsg: g.epsg,
    transform: g.transform,
    bbox: g.bbox,
    bbox_utm: g.bbox_utm,
    resolution_m: Math.abs(g.transform[0]),
    feature_count: nf,
    latent: {
      dims: a.dims,
      shape: a.shape,
      dtype: a.dtype,
      chunks: a.chunks,
      chunk_grid: a.shape.map((n, d) => Math.ceil(n / a.chunks[d])),
      codecs: a.meta.array?.codecs.map((c) => c.name) ?? [],
      fill_value: a.meta.array?.fill_value ?? null,
      // What the whole latent weighs as a float32 .npy body (the figure embeddings_api_max_mb limits).
      npy_data_bytes: ny * nx * nf * 4,
    },
    coordinates: { y, x },
    preview: pv,
    description: (attrs.description as string | undefined) ?? null,
  };
}
