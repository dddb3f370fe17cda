// The STAC documents, written from the STAC index on one base URL (no trailing slash; "" writes
// paths): landing page, conformance, collections, items and item collections. Pure functions.
import type { StacCollectionSummary, StacRecord } from "../index-files.ts";
import { parseItemName, periodDates } from "../names.ts";
import { CONFORMANCE, GEOJSON, NPY, PROJECTION_EXTENSION, STAC_VERSION } from "./ids.ts";

type Json = Record<string, unknown>;
type Link = { rel: string; href: string; type?: string; title?: string; method?: string; body?: Json; merge?: boolean };

const JSON_TYPE = "application/json";
export const OPENAPI_TYPE = "application/vnd.oai.openapi+json;version=3.0";

/** The query parameters of the .npy asset, as an RFC 6570 template (all optional: the default is the whole latent). */
export const NPY_QUERY_TEMPLATE = "{?y_start,y_stop,x_start,x_stop,feature_start,feature_stop,values}";

const stacRoot = (base: string) => `${base}/stac`;
export const collectionHref = (base: string, id: string) => `${stacRoot(base)}/collections/${id}`;
export const itemHref = (base: string, collection: string, id: string) =>
  `${collectionHref(base, collection)}/items/${id}`;

export function landingPage(base: string, collections: readonly StacCollectionSummary[]): Json {
  const root = stacRoot(base);
  return {
    type: "Catalog",
    stac_version: STAC_VERSION,
    id: "gridcast-embeddings",
    title: "gridcast EO latent embeddings",
    description:
      "Earth-observation latent embeddings, one collection per model family and product (tokens, map, vector); " +
      "one item per latent item. Every request needs an X-API-Key header; asset downloads are credit-metered.",
    conformsTo: CONFORMANCE,
    links: [
      { rel: "self", href: root, type: JSON_TYPE },
      { rel: "root", href: root, type: JSON_TYPE },
      { rel: "conformance", href: `${root}/conformance`, type: JSON_TYPE },
      { rel: "data", href: `${root}/collections`, type: JSON_TYPE },
      { rel: "search", href: `${root}/search`, type: GEOJSON, method: "GET" },
      { rel: "search", href: `${root}/search`, type: GEOJSON, method: "POST" },
      { rel: "service-desc", href: `${base}/openapi.json`, type: OPENAPI_TYPE },
      ...collections.map((c) => ({ rel: "child", href: collectionHref(base, c.id), type: JSON_TYPE, title: c.id })),
    ] satisfies Link[],
  };
}

export const conformance = (): Json => ({ conformsTo: CONFORMANCE });

const ASSETS = {
  latent: {
    title: "Latent (.npy)",
    description:
      `The whole latent as NumPy .npy, dims (y, x, feature), float32 physical values. Narrow it with the query ` +
      `template ${NPY_QUERY_TEMPLATE} (half-open index ranges; values=raw for the stored values). Needs the ` +
      "X-API-Key header; credit-metered like /api/embeddings/npy.",
    type: NPY,
    roles: ["data"],
  },
  metadata: {
    title: "Item metadata",
    description: "Shape, dims, dtype, chunking, coordinates, CRS and quantization (X-API-Key; credit-metered).",
    type: JSON_TYPE,
    roles: ["metadata"],
  },
  preview: {
    title: "Preview",
    description: "The small pooled preview array, the preview member of the item metadata (same request and price).",
    type: JSON_TYPE,
    roles: ["overview"],
  },
};

const startOf = (period: string) => `${periodDates(period).start}T00:00:00Z`;
const endOf = (period: string) => `${periodDates(period).end}T23:59:59Z`;

export function collectionDoc(base: string, c: StacCollectionSummary): Json {
  const self = collectionHref(base, c.id);
  return {
    type: "Collection",
    stac_version: STAC_VERSION,
    stac_extensions: [PROJECTION_EXTENSION],
    id: c.id,
    title: `${c.family} ${c.product} latents`,
    description:
      `Latent embeddings of model family ${c.family}, product ${c.product}: ${c.items} items over ` +
      `${c.partitions.length} model version and period combinations.`,
    license: "proprietary",
    providers: [{ name: "gridcast", roles: ["host", "processor"] }],
    extent: {
      spatial: { bbox: [c.bbox] },
      temporal: { interval: [[`${c.start}T00:00:00Z`, `${c.end}T23:59:59Z`]] },
    },
    summaries: {
      "latent:family": [c.family],
      "latent:product": [c.product],
      "latent:model_version": [...new Set(c.partitions.map((p) => p.version))],
      "latent:feature_count": c.feature_counts,
      "latent:dtype": c.dtypes,
      "latent:quantization": c.quantization,
      "latent:utm_zone": [...new Set(c.epsg.filter(isUtm).map((e) => e % 100))].sort((a, b) => a - b),
      "proj:code": c.epsg.map((e) => `EPSG:${e}`),
    },
    item_assets: ASSETS,
    "latent:items": c.items,
    links: [
      { rel: "self", href: self, type: JSON_TYPE },
      { rel: "root", href: stacRoot(base), type: JSON_TYPE },
      { rel: "parent", href: stacRoot(base), type: JSON_TYPE },
      { rel: "items", href: `${self}/items`, type: GEOJSON },
    ] satisfies Link[],
  };
}

export function collectionsDoc(base: string, collections: readonly StacCollectionSummary[]): Json {
  return {
    collections: collections.map((c) => collectionDoc(base, c)),
    links: [
      { rel: "self", href: `${stacRoot(base)}/collections`, type: JSON_TYPE },
      { rel: "root", href: stacRoot(base), type: JSON_TYPE },
      { rel: "parent", href: stacRoot(base), type: JSON_TYPE },
    ] satisfies Link[],
  };
}

const isUtm = (e: number) => (e > 32600 && e <= 32660) || (e > 32700 && e <= 32760);

/** GeoJSON of a footprint bbox: a polygon, or two across the antimeridian. */
export function footprintGeometry([w, s, e, n]: readonly number[]): Json {
  const ring = (a: number, b: number) => [
    [a, s],
    [b, s],
    [b, n],
    [a, n],
    [a, s],
  ];
  return w <= e
    ? { type: "Polygon", coordinates: [ring(w, e)] }
    : { type: "MultiPolygon", coordinates: [[ring(w, 180)], [ring(-180, e)]] };
}

export function itemDoc(base: string, collection: string, name: string, r: StacRecord): Json {
  const ref = parseItemName(name);
  const [ny, nx, nf] = r.shape;
  const api = `${base}/api/embeddings`;
  return {
    type: "Feature",
    stac_version: STAC_VERSION,
    stac_extensions: [PROJECTION_EXTENSION],
    id: name,
    collection,
    geometry: footprintGeometry(r.bbox),
    bbox: r.bbox,
    properties: {
      datetime: null,
      start_datetime: startOf(ref.period),
      end_datetime: endOf(ref.period),
      "proj:code": r.epsg === null ? null : `EPSG:${r.epsg}`,
      "proj:shape": [ny, nx],
      ...(r.transform ? { "proj:transform": r.transform } : {}),
      "proj:bbox": r.bbox_utm,
      "latent:family": ref.family,
      "latent:model_version": ref.version,
      "latent:product": ref.product,
      "latent:period": ref.period,
      "latent:tile": ref.tile,
      "latent:utm_zone": r.epsg !== null && isUtm(r.epsg) ? r.epsg % 100 : null,
      "latent:dims": ["y", "x", "feature"],
      "latent:stored_dims": r.dims,
      "latent:shape": r.shape,
      "latent:feature_count": nf,
      "latent:dtype": r.dtype,
      "latent:quantization": r.quantization,
    },
    links: [
      { rel: "self", href: itemHref(base, collection, name), type: GEOJSON },
      { rel: "parent", href: collectionHref(base, collection), type: JSON_TYPE },
      { rel: "collection", href: collectionHref(base, collection), type: JSON_TYPE },
      { rel: "root", href: stacRoot(base), type: JSON_TYPE },
    ] satisfies Link[],
    assets: {
      latent: { href: `${api}/npy/${name}`, ...ASSETS.latent, "latent:query_template": NPY_QUERY_TEMPLATE },
      metadata: { href: `${api}/item/${name}`, ...ASSETS.metadata },
      preview: { href: `${api}/item/${name}#/preview`, ...ASSETS.preview },
    },
  };
}

/** A page of items: a GeoJSON FeatureCollection with its links (self, root, and next when there is more). */
export function itemCollection(base: string, features: Json[], self: string, next?: Link): Json {
  return {
    type: "FeatureCollection",
    features,
    numberReturned: features.length,
    links: [
      { rel: "self", href: self, type: GEOJSON },
      { rel: "root", href: stacRoot(base), type: JSON_TYPE },
      ...(next ? [next] : []),
    ] satisfies Link[],
  };
}
