// EO latent embeddings: catalogue listing and locate (answered from the published build's indexes,
// not metered: they read nothing from the store and the same indexes are static files of the
// build), item metadata and .npy slices (read the store, credit-metered).
import type { IncomingMessage } from "node:http";
import { MIB } from "../../config.ts";
import { LIST_DEFAULT_LIMIT, listItems } from "../../embeddings/catalogue.ts";
import { itemMetadata } from "../../embeddings/item.ts";
import { type LocateRequest, locate } from "../../embeddings/locate.ts";
import type { ItemRef } from "../../embeddings/names.ts";
import { itemKeySpace, publishedCatalogue, requireItem } from "../../embeddings/published-catalogue.ts";
import { planSlice, type SliceRequest, sliceBands } from "../../embeddings/slice.ts";
import { InsufficientCreditsError } from "../../errors.ts";
import { recycleSlab } from "../../read-ahead.ts";
import { perMiBRule } from "../delivery.ts";
import { npyResponseHeaders } from "../npy-stream.ts";
import { linkBase } from "../public-base.ts";
import { type RequestContext, route } from "../route.ts";
import {
  ItemList,
  ItemMetadata,
  ItemPath,
  ListQuery,
  LocateQuery,
  LocateResult,
  NpyQuery,
} from "../schemas/embeddings.ts";

/**
 * An item's URLs: absolute on the server's base URL when it is known (public_url, or a trusted
 * proxy's headers), else paths, which a client resolves against the URL it asked.
 */
const links = (name: string, base: string) => ({
  item: `${base}/api/embeddings/item/${name}`,
  npy: `${base}/api/embeddings/npy/${name}`,
});

/**
 * Credits a planned .npy costs and the body bytes that make one MiB of its physical answer, from
 * the handler to the route's cost and meter rule.
 */
const npyCost = new WeakMap<IncomingMessage, { credits: number; unit: number }>();

async function requestedItem({ app, params }: RequestContext<unknown, Record<string, string>>): Promise<ItemRef> {
  return requireItem(await itemKeySpace(app.published, app.store), params.name ?? "");
}

export const embeddingRoutes = [
  route({
    method: "GET",
    path: "/api/embeddings",
    operationId: "listEmbeddings",
    summary: "Catalogue of embedding items",
    description:
      "Item names sorted by code unit, from the published build's catalogue (no store access). Page with " +
      "next_cursor; a cursor stays valid across builds (it marks a position by name, not by offset).",
    tags: ["embeddings"],
    auth: "embeddings",
    query: ListQuery,
    responses: { 200: { description: "One page of items", content: { "application/json": { schema: ItemList } } } },
    handler: async ({ app, req, query }) => {
      const q = query as { prefix?: string; limit?: number; cursor?: string };
      const { base, headers } = linkBase(app.settings, req);
      const cat = await publishedCatalogue(app.published);
      const page = listItems(cat.names, cat.refs, q);
      const items = page.items.map((r) => ({
        name: r.name,
        family: r.family,
        version: r.version,
        product: r.product,
        period: r.period,
        tile: r.tile,
        ...links(r.name, base),
      }));
      const limit = q.limit ?? LIST_DEFAULT_LIMIT;
      return { json: { items, total: page.total, limit, next_cursor: page.next_cursor }, headers };
    },
  }),
  route({
    method: "GET",
    path: "/api/embeddings/locate",
    operationId: "locateEmbedding",
    summary: "The item covering a coordinate",
    description:
      "MGRS 100 km tile of the point (UTM zones with the Norway and Svalbard exceptions), the deterministic item " +
      "name, UTM CRS, bounds, the pixel holding the point and whether the item exists. Answered from the published " +
      "locate index in memory: no catalogue scan and no store access. Not metered. 503 before the first build.",
    tags: ["embeddings"],
    auth: "embeddings",
    query: LocateQuery,
    responses: { 200: { description: "Located item", content: { "application/json": { schema: LocateResult } } } },
    handler: async ({ app, query }) => ({
      json: await locate(await publishedCatalogue(app.published), query as LocateRequest),
    }),
  }),
  route({
    method: "GET",
    path: "/api/embeddings/item/{name}",
    operationId: "getEmbeddingItem",
    summary: "Metadata of one item",
    description:
      "Shape, dims, dtype, chunking, x/y pixel-centre ranges and resolution, CRS, bounds, feature count, model " +
      "version and a small preview. Reads metadata, coordinates and the preview array, never the latent. Costs " +
      "credit_cost_item credits once the first byte of the body has been handed to the connection (taken by the " +
      "server's kernel); failed requests and responses cut before their first body byte cost nothing. A 304 costs " +
      "nothing: it answers only an If-None-Match naming the current ETag (the SHA-1 of the body, so it tells " +
      "nothing the holder of that body does not know); If-None-Match: * is not honoured here and gets the charged " +
      "200. Names are checked against the published catalogue (before the first build: the store's item list) " +
      "before the store is read: 400 malformed, 404 unknown.",
    tags: ["embeddings"],
    auth: "embeddings",
    heavy: true,
    cost: ({ app }) => app.settings.credit_cost_item,
    item: ({ params }) => params.name,
    pathParams: ItemPath,
    responses: {
      200: { description: "Item metadata", content: { "application/json": { schema: ItemMetadata } } },
    },
    handler: async (rc) => {
      const ref = await requestedItem(rc);
      const { base, headers } = linkBase(rc.app.settings, rc.req);
      return { json: { ...(await itemMetadata(rc.app.store, ref)), ...links(ref.name, base) }, headers };
    },
  }),
  route({
    method: "GET",
    path: "/api/embeddings/npy/{name}",
    operationId: "getEmbeddingNpy",
    summary: "A slice of one item's latent as NumPy .npy",
    description:
      "Array with dims (y, x, feature) whatever order the store keeps them in (a dimension the latent lacks, as " +
      "in a vector item, has length 1); ranges are half-open like Python slices and default to the full " +
      "extent. values=physical (the default) answers float32 physical values: the item's quantization undone " +
      "(CF scale_factor/add_offset, a de-quantization rule in its attributes such as AlphaEarth's " +
      "sign(x)*(abs(x)/127.5)**2, or an array of per-pixel or per-feature scales as geotessera writes) and " +
      "missing values NaN (the item's declared _FillValue, missing_value or nodata; otherwise xarray's rule: a " +
      "Zarr v2 fill_value marks missing values, a v3 one does not). values=raw answers the stored values in " +
      "their stored type, nothing masked. The same item's metadata and the preview use the physical scale. " +
      "Size and price count the physical answer (4 bytes per value, header excluded) whatever values= asks " +
      "for, so the same slice costs the same and meets the same limit as physical or raw. The size is computed " +
      "before any chunk is read: above embeddings_api_max_mb MiB of physical data the answer is 413. Costs " +
      "credit_cost_npy_base plus one credit per started MiB of physical data; the balance is checked before " +
      "reading and the whole cost is debited before the headers go out (X-Credits-Charged). A response cut short " +
      "(the client went away, stalled or ran out of time) is then charged by the same rule for what was handed " +
      "to the connection (taken by the server's kernel): the base once the first body byte went out, plus one " +
      "per MiB of physical data whose first value went out (a values=raw int8 body: per 256 KiB sent, int16: " +
      "per 512 KiB); the rest comes back. Cut before its first body byte, it costs nothing. The body is streamed in bands of whole y rows; " +
      "should a read fail after the headers went out, the connection is cut short of Content-Length (never a " +
      "complete-looking file) and nothing is charged. X-SVC-Field describes the slice: " +
      "name, dims, shape, dtype, values (physical or raw), quantization (scheme and rule), stored_dtype, " +
      "stored_dims, missing (which stored values are missing and why), offsets, CRS and the affine transform " +
      "of the slice.",
    tags: ["embeddings"],
    auth: "embeddings",
    heavy: true,
    cost: ({ req }) => npyCost.get(req)!.credits,
    meterRule: ({ app, req }, reply, full) =>
      perMiBRule(
        app.settings.credit_cost_npy_base,
        "npy" in reply ? reply.npy.header.length : 0,
        full,
        npyCost.get(req)?.unit ?? MIB,
      ),
    item: ({ params }) => params.name,
    pathParams: ItemPath,
    query: NpyQuery,
    responses: {
      200: {
        description: "NumPy .npy body",
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
        headers: npyResponseHeaders,
      },
    },
    handler: async (rc) => {
      const { app, query, key, req } = rc;
      const ref = await requestedItem(rc);
      const plan = await planSlice(app.store, ref, query as SliceRequest, app.settings.embeddings_api_max_mb);
      // Priced by the physical answer's size, whatever values= sends: the same information costs the same.
      const cost = app.settings.credit_cost_npy_base + Math.ceil(plan.pricedBytes / MIB);
      // The charge happens after the reply is built; refuse up front rather than read for nothing.
      const balance = key ? await app.ledger.balance(key.id) : 0;
      if (balance < cost) throw new InsufficientCreditsError("not enough credits for this slice", { balance, cost });
      npyCost.set(req, { credits: cost, unit: (MIB * plan.dataBytes) / plan.pricedBytes });
      const [[y0, y1], [x0, x1], [f0, f1]] = plan.region;
      const raw = plan.values === "raw" ? "_raw" : "";
      const filename = `${ref.name}_y${y0}-${y1}_x${x0}-${x1}_f${f0}-${f1}${raw}.npy`;
      return {
        npy: {
          header: plan.header,
          bytes: plan.header.length + plan.dataBytes,
          field: plan.field,
          filename,
          chunks: sliceBands(app.store, plan, app.settings.read_slab_mb * MIB, app.settings.scan_hold_mb * MIB),
          recycle: recycleSlab,
        },
      };
    },
  }),
];
