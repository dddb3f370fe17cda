// Item metadata: shape, axes, chunking, quantization, missing values, coordinates, CRS and a small
// preview. Reads the item group's metadata, its 1-D coordinate arrays and the preview array; never
// the latent itself. An item is opened once per metadata revision of its group.

import { NotFoundError } from "../errors.ts";
import { shownAttribute } from "../store/attribute-budget.ts";
import type { NodeMeta, Store, StoredArray } from "../store/store.ts";
import { gridMappingOf, type ItemGeometry, itemGeometry } from "./item-geometry.ts";
import { describeScheme, itemLayout, type Layout, type Scheme } from "./layout.ts";
import { type ItemRef, periodDates } from "./names.ts";

/** A preview larger than this many values is not sent (the sample's is 16 × 16 × 3). */
export const PREVIEW_MAX_VALUES = 4096;

export interface ItemNodes {
  ref: ItemRef;
  attrs: Record<string, unknown>;
  latent: StoredArray;
  nodes: Map<string, NodeMeta>;
  layout: Layout;
  geometry: ItemGeometry;
  /** The 1-D coordinates along y and x (physical values), when stored. */
  coords: { y?: Float64Array | Float32Array; x?: Float64Array | Float32Array; yMeta?: NodeMeta; xMeta?: NodeMeta };
}

/** Opened items by the metadata they were opened from (a new revision opens afresh). */
const opened = new WeakMap<Map<string, NodeMeta>, Map<string, Promise<ItemNodes>>>();

async function groupOf(store: Store, ref: ItemRef): Promise<Map<string, NodeMeta>> {
  try {
    return await store.groupNodes(`embeddings/${ref.path}`);
  } catch (e) {
    if (e instanceof NotFoundError) throw new NotFoundError(`no embedding item "${ref.name}"`, { item: ref.name });
    throw e;
  }
}

/**
 * The item's metadata, layout and geometry (reading its coordinate arrays); ItemRefusedError with
 * the reason when gridcast cannot be sure how to read it.
 */
export async function openItem(store: Store, ref: ItemRef): Promise<ItemNodes> {
  const nodes = await groupOf(store, ref);
  let byName = opened.get(nodes);
  if (!byName) opened.set(nodes, (byName = new Map()));
  let p = byName.get(ref.name);
  if (!p) {
    p = open(store, ref, nodes);
    byName.set(ref.name, p);
    p.catch(() => byName.delete(ref.name));
  }
  return p;
}

async function open(store: Store, ref: ItemRef, nodes: Map<string, NodeMeta>): Promise<ItemNodes> {
  const base = `embeddings/${ref.path}`;
  const what = `embedding item "${ref.name}"`;
  const layout = itemLayout(nodes, base, what);
  const attrs = nodes.get(base)?.attrs ?? {};
  const names = layout.axes.names;
  const child = (n: string | undefined) => (n === undefined ? undefined : nodes.get(`${base}/${n}`));
  const coordMeta = (dim: number) => {
    const m = dim < 0 ? undefined : child(names[dim]);
    return m?.kind === "array" && m.array?.shape.length === 1 && m.array.shape[0] === layout.latent.array!.shape[dim]
      ? m
      : undefined;
  };
  const yMeta = coordMeta(layout.axes.dimOf.y);
  const xMeta = coordMeta(layout.axes.dimOf.x);
  const readCoord = async (m: NodeMeta | undefined) => {
    if (!m) return undefined;
    const a = store.array(m);
    const out = new Float64Array(a.shape[0]);
    await a.read([[0, a.shape[0]]], out);
    return out;
  };
  const [y, x] = await Promise.all([readCoord(yMeta), readCoord(xMeta)]);
  const arrays = [...nodes.keys()].filter((p) => p.startsWith(`${base}/`)).map((p) => p.slice(base.length + 1));
  const gmName = gridMappingOf(layout.latent.attrs, arrays);
  const gmMeta = child(gmName);
  const geometry = itemGeometry({
    tile: ref.tile,
    what,
    groupAttrs: attrs,
    latentAttrs: layout.latent.attrs,
    axes: layout.axes,
    gridMapping: gmMeta && gmName ? { name: gmName, attrs: gmMeta.attrs } : undefined,
    y: y && yMeta ? { name: names[layout.axes.dimOf.y], values: y } : undefined,
    x: x && xMeta ? { name: names[layout.axes.dimOf.x], values: x } : undefined,
  });
  return {
    ref,
    attrs,
    latent: store.array(layout.latent),
    nodes,
    layout,
    geometry,
    coords: { y, x, yMeta, xMeta },
  };
}

function coordinate(values: Float64Array | Float32Array | undefined, meta: NodeMeta | undefined) {
  if (!values || !meta) return null;
  const n = values.length;
  return {
    name: meta.path.slice(meta.path.lastIndexOf("/") + 1),
    first: values[0],
    last: values[n - 1],
    min: Math.min(values[0], values[n - 1]),
    max: Math.max(values[0], values[n - 1]),
    step: n > 1 ? (values[n - 1] - values[0]) / (n - 1) : null,
    count: n,
    units: typeof meta.attrs.units === "string" ? shownAttribute(meta.attrs.units) : null,
    meaning: "pixel centre",
  };
}

/** Physical value of one stored value under a scheme that works value by value. */
export function elementwise(s: Scheme): ((v: number) => number) | undefined {
  switch (s.kind) {
    case "raw":
      return (v) => v;
    case "cf_linear":
      return (v) => v * s.scale_factor + s.add_offset;
    case "signed_power":
      return (v) => Math.sign(v) * (Math.abs(v) / s.divisor) ** s.power;
    default:
      return undefined;
  }
}

/**
 * The preview array in the same scale as the default .npy (physical values): decoded with its own
 * CF attributes; a preview stored as integers under an item quantized by another scheme is taken
 * to be in the latent's stored units and goes through the latent's rule, and is left out (with the
 * reason) when that rule needs per-pixel scales it does not have.
 */
async function preview(store: Store, item: ItemNodes) {
  const meta = item.nodes.get(`embeddings/${item.ref.path}/preview`);
  const shape = meta?.array?.shape;
  if (meta?.kind !== "array" || shape?.length !== 3 || shape.reduce((a, b) => a * b, 1) > PREVIEW_MAX_VALUES) {
    return null;
  }
  const scheme = item.layout.scheme;
  const integer = !meta.array!.dtype.startsWith("float");
  let f: ((v: number) => number) | undefined = (v) => v;
  if (integer && scheme.kind !== "raw" && scheme.kind !== "cf_linear") {
    f = elementwise(scheme);
    if (!f) return { omitted: `the preview is stored as ${meta.array!.dtype} and the latent is scaled per pixel` };
  }
  const flat = await store.array(meta).read(shape.map((n) => [0, n] as [number, number]));
  const [py, px, pb] = shape;
  // Nested [y][x][band], seven significant digits: float32 precision without the noise.
  const data = Array.from({ length: py }, (_, i) =>
    Array.from({ length: px }, (_, j) =>
      Array.from({ length: pb }, (_, k) => {
        const v = f(flat[(i * px + j) * pb + k]);
        return Number.isNaN(v) ? null : Number(Math.fround(v).toPrecision(7));
      }),
    ),
  );
  return {
    dims: meta.array?.dimension_names ?? ["preview_y", "preview_x", "preview_band"],
    shape,
    pool: (item.attrs.preview_pool as number | undefined) ?? null,
    description: (meta.attrs.long_name as string | undefined) ?? null,
    values: "physical",
    data,
  };
}

/** What the item metadata and the .npy header say about stored and served values. */
export function valuesDescription(item: ItemNodes) {
  const s = item.layout.scheme;
  return {
    quantization: { scheme: s.kind, rule: describeScheme(s), ...schemeFields(s) },
    stored_dtype: item.latent.dtype,
    missing: {
      stored_values: item.layout.missing.values,
      nan: item.latent.dtype.startsWith("float"),
      rule: item.layout.missing.source,
      served_as: "NaN with values=physical; left as stored with values=raw",
    },
  };
}

function schemeFields(s: Scheme): Record<string, unknown> {
  switch (s.kind) {
    case "cf_linear":
      return { scale_factor: s.scale_factor, add_offset: s.add_offset };
    case "signed_power":
      return { divisor: s.divisor, power: s.power, stated_as: s.rule };
    case "scale_array":
      return { scales: s.array, scale_dims: s.roles };
    default:
      return {};
  }
}

export async function itemMetadata(store: Store, ref: ItemRef) {
  const item = await openItem(store, ref);
  const a = item.latent;
  const [ny, nx, nf] = item.layout.axes.shape;
  const g = item.geometry;
  const pv = await preview(store, item);
  const attrs = item.attrs;
  const name = a.path.slice(a.path.lastIndexOf("/") + 1);
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
    geometry_sources: g.sources,
    resolution_m: g.transform && !item.layout.axes.geographic ? Math.abs(g.transform[0]) : null,
    feature_count: nf,
    latent: {
      array: name,
      dims: a.dims,
      shape: a.shape,
      // How the stored dimensions become the served (y, x, feature); a role the array lacks is 1.
      served_dims: ["y", "x", "feature"],
      served_shape: [ny, nx, nf],
      axes: Object.fromEntries(
        (["y", "x", "feature"] as const).map((r) => [
          r,
          item.layout.axes.dimOf[r] < 0 ? null : a.dims[item.layout.axes.dimOf[r]],
        ]),
      ),
      dtype: a.dtype,
      chunks: a.chunks,
      chunk_grid: a.shape.map((n, d) => Math.ceil(n / a.chunks[d])),
      codecs: a.meta.array?.codecs.map((c) => c.name) ?? [],
      fill_value: a.meta.array?.fill_value ?? null,
      // What the whole latent weighs as a float32 .npy body (the figure embeddings_api_max_mb limits).
      npy_data_bytes: ny * nx * nf * 4,
    },
    values: { default: "physical", ...valuesDescription(item) },
    arrays: item.layout.arrays,
    coordinates: { y: coordinate(item.coords.y, item.coords.yMeta), x: coordinate(item.coords.x, item.coords.xMeta) },
    preview: pv,
    description: (attrs.description as string | undefined) ?? null,
  };
}
