// The STAC API over the EO latents (/stac): landing page, conformance, collections, items and item
// search, thin over embeddings/stac (the build's STAC index, the documents, the search). Keyed like
// /api/embeddings' catalogue and not metered: the documents come from the build's indexes, never
// the store; the assets they point at are the metered routes themselves.

import {
  collectionDoc,
  collectionsDoc,
  conformance,
  itemCollection,
  itemDoc,
  landingPage,
} from "../../embeddings/stac/documents.ts";
import { GEOJSON } from "../../embeddings/stac/ids.ts";
import { type StacIndex, stacIndexOf } from "../../embeddings/stac/index.ts";
import {
  checkSearch,
  findItem,
  type Hit,
  numberList,
  type Page,
  type SearchInput,
  search,
} from "../../embeddings/stac/search.ts";
import { InvalidParameterError, NotFoundError, StoreUnavailableError } from "../../errors.ts";
import type { AppContext } from "../context.ts";
import { linkBase } from "../public-base.ts";
import { type Reply, type RequestContext, route } from "../route.ts";
import { CollectionPath, ItemPathStac, ItemsQuery, SearchBody, SearchQuery, StacDocument } from "../schemas/stac.ts";

async function stacIndex(app: AppContext): Promise<StacIndex> {
  const snap = await app.published.current();
  if (!snap) throw new StoreUnavailableError("no build is published yet; run gridcast build first");
  return stacIndexOf(snap);
}

const JSON_CONTENT = { "application/json": { schema: StacDocument } };
const geojson = { [GEOJSON]: { schema: StacDocument } };
const ok = (description: string, content: Record<string, { schema: unknown }> = JSON_CONTENT) => ({
  200: { description, content },
});
const noCollection = (id: string) => new NotFoundError(`no collection "${id.slice(0, 80)}"`);

/** The page as a FeatureCollection; the next link repeats the GET request with the new token. */
function getPage(rc: RequestContext<unknown>, page: Page, path: string): Reply {
  const { base, headers } = linkBase(rc.app.settings, rc.req);
  const url = rc.req.url ?? "";
  const q = url.indexOf("?");
  const params = new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
  const self = `${base}${path}${params.size ? `?${params}` : ""}`;
  let next: { rel: string; href: string; type: string } | undefined;
  if (page.next) {
    params.set("token", page.next);
    next = { rel: "next", href: `${base}${path}?${params}`, type: GEOJSON };
  }
  const features = page.hits.map((h: Hit) => itemDoc(base, h.collection, h.name, h.record));
  return {
    json: itemCollection(base, features, self, next),
    headers: { ...headers, "Content-Type": `${GEOJSON}; charset=utf-8` },
  };
}

/** GET search values as the search takes them: bbox numbers, the intersects geometry parsed. */
function fromQuery(q: Record<string, unknown>): SearchInput {
  const out: SearchInput = { ...q };
  if (typeof q.bbox === "string") out.bbox = numberList(q.bbox);
  if (typeof q.intersects === "string") {
    try {
      out.intersects = JSON.parse(q.intersects);
    } catch {
      throw new InvalidParameterError("intersects", "intersects must be a GeoJSON geometry as JSON text");
    }
  }
  return out;
}

const BODY_FIELDS = new Set(["bbox", "intersects", "datetime", "collections", "ids", "limit", "token"]);

function fromBody(body: unknown): SearchInput {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    throw new InvalidParameterError("body", "the search body must be a JSON object");
  }
  // A field this server does not implement (query, filter, sortby, fields) would be ignored, and the
  // answer would not be the one asked for: refused by name instead.
  const unknown = Object.keys(body).find((k) => !BODY_FIELDS.has(k));
  if (unknown !== undefined) {
    throw new InvalidParameterError(unknown.slice(0, 40), `this search does not take "${unknown.slice(0, 40)}"`, {
      accepted: [...BODY_FIELDS],
    });
  }
  const b = body as Record<string, unknown>;
  // null stands for absent, as many clients send it.
  return Object.fromEntries(Object.entries(b).filter(([, v]) => v !== null)) as SearchInput;
}

export const stacRoutes = [
  route({
    method: "GET",
    path: "/stac",
    operationId: "stacLanding",
    summary: "STAC API landing page",
    description:
      "A STAC Catalog: conformance classes (core, collections, ogcapi-features, item-search) and links to the " +
      "conformance, the collections (data), the search (GET and POST) and this OpenAPI document (service-desc). " +
      "Written from the published build's STAC index; 503 before the first build.",
    tags: ["stac"],
    auth: "embeddings",
    responses: ok("The landing page"),
    handler: async ({ app, req }) => {
      const { base, headers } = linkBase(app.settings, req);
      return { json: landingPage(base, (await stacIndex(app)).collections), headers };
    },
  }),
  route({
    method: "GET",
    path: "/stac/conformance",
    operationId: "stacConformance",
    summary: "STAC API conformance classes",
    tags: ["stac"],
    auth: "embeddings",
    responses: ok("The conformance classes"),
    handler: () => ({ json: conformance() }),
  }),
  route({
    method: "GET",
    path: "/stac/collections",
    operationId: "stacCollections",
    summary: "STAC collections: one per latent family and product",
    description:
      "One collection per family and product (tokens, map, vector), spanning its model versions and periods, " +
      "with spatial and temporal extent, summaries (feature counts, dtypes, quantization schemes, UTM zones, " +
      "proj:code) and item asset definitions, as the build computed them.",
    tags: ["stac"],
    auth: "embeddings",
    responses: ok("Every collection"),
    handler: async ({ app, req }) => {
      const { base, headers } = linkBase(app.settings, req);
      return { json: collectionsDoc(base, (await stacIndex(app)).collections), headers };
    },
  }),
  route({
    method: "GET",
    path: "/stac/collections/{collectionId}",
    operationId: "stacCollection",
    summary: "One STAC collection",
    tags: ["stac"],
    auth: "embeddings",
    pathParams: CollectionPath,
    responses: ok("The collection"),
    handler: async ({ app, req, params }) => {
      const c = (await stacIndex(app)).byId.get(params.collectionId);
      if (!c) throw noCollection(params.collectionId);
      const { base, headers } = linkBase(app.settings, req);
      return { json: collectionDoc(base, c), headers };
    },
  }),
  route({
    method: "GET",
    path: "/stac/collections/{collectionId}/items",
    operationId: "stacCollectionItems",
    summary: "Items of one collection, paged",
    description:
      "A GeoJSON FeatureCollection of at most limit items, by model version and period, then by tile name " +
      "(with bbox: by grid cell, then tile name), with a next link while more follow; bbox and datetime " +
      "filter as in the search.",
    tags: ["stac"],
    auth: "embeddings",
    pathParams: CollectionPath,
    query: ItemsQuery,
    responses: ok("One page of items", geojson),
    handler: async (rc) => {
      const index = await stacIndex(rc.app);
      const id = rc.params.collectionId;
      if (!index.byId.has(id)) throw noCollection(id);
      const s = checkSearch(index, { ...fromQuery(rc.query as Record<string, unknown>), collections: [id] });
      return getPage(rc, await search(index, s), `/stac/collections/${id}/items`);
    },
  }),
  route({
    method: "GET",
    path: "/stac/collections/{collectionId}/items/{itemId}",
    operationId: "stacItem",
    summary: "One STAC item",
    description:
      "The item of a latent: geometry and bbox (WGS84) equal to /api/embeddings/item's bbox, the period as " +
      "start_datetime/end_datetime, projection fields (proj:code, proj:shape, proj:transform, proj:bbox), the " +
      "latent's dims, feature count, dtype and quantization scheme, and assets: the .npy route (whole latent; " +
      "query template in its description), the item metadata and its preview (both metered as those routes).",
    tags: ["stac"],
    auth: "embeddings",
    pathParams: ItemPathStac,
    responses: ok("The item", geojson),
    handler: async ({ app, req, params }) => {
      const hit = await findItem(await stacIndex(app), params.collectionId, params.itemId);
      const { base, headers } = linkBase(app.settings, req);
      return {
        json: itemDoc(base, hit.collection, hit.name, hit.record),
        headers: { ...headers, "Content-Type": `${GEOJSON}; charset=utf-8` },
      };
    },
  }),
  route({
    method: "GET",
    path: "/stac/search",
    operationId: "stacSearchGet",
    summary: "STAC item search (GET)",
    description:
      "Items by bbox or intersects (not both), datetime, collections and ids, limit per page, next link with a " +
      "token. The search picks the build's STAC index partitions (collection, version, period) by binary " +
      "search on time and by grid cell: its cost follows the area and the page, not the number of items. " +
      "400 for bbox with intersects, a bbox of other than 4 or 6 numbers, limit outside 1..1000, a datetime without a zone, a geometry that is not GeoJSON, an unknown collection.",
    tags: ["stac"],
    auth: "embeddings",
    query: SearchQuery,
    responses: ok("One page of matching items", geojson),
    handler: async (rc) => {
      const index = await stacIndex(rc.app);
      const s = checkSearch(index, fromQuery(rc.query as Record<string, unknown>));
      return getPage(rc, await search(index, s), "/stac/search");
    },
  }),
  route({
    method: "POST",
    path: "/stac/search",
    operationId: "stacSearchPost",
    summary: "STAC item search (POST)",
    description:
      "The same search with a JSON body (bbox as an array, intersects as a GeoJSON object, collections and ids " +
      "as arrays); the same answer as the GET search. Its next link is a POST with method, body ({token}) and " +
      "merge: true. A field the search does not take is refused (400) rather than ignored.",
    tags: ["stac"],
    auth: "embeddings",
    body: SearchBody,
    responses: ok("One page of matching items", geojson),
    handler: async (rc) => {
      const index = await stacIndex(rc.app);
      const s = checkSearch(index, fromBody(rc.body));
      const page = await search(index, s);
      const { base, headers } = linkBase(rc.app.settings, rc.req);
      const href = `${base}/stac/search`;
      const next = page.next
        ? { rel: "next", href, type: GEOJSON, method: "POST", body: { token: page.next }, merge: true }
        : undefined;
      const features = page.hits.map((h) => itemDoc(base, h.collection, h.name, h.record));
      return {
        json: itemCollection(base, features, href, next),
        headers: { ...headers, "Content-Type": `${GEOJSON}; charset=utf-8` },
      };
    },
  }),
];
