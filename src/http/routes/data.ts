// /data: every forecast group as a Zarr store for lazy analysis (xarray, zarr-python 2 and 3,
// zarrita), behind the X-API-Key gate. Thin over zarr-publish/: the routes find the dataset, ask
// for one key and answer it as an object store would (ETag, Range, HEAD, 404 for absent keys).
import Type from "typebox";
import { publisherFor } from "../../zarr-publish/publisher.ts";
import { sendBytes } from "../byte-reply.ts";
import { linkBase } from "../public-base.ts";
import { route } from "../route.ts";

/** Clients revalidate with the ETag: the same key can hold new bytes after a forecast cycle. */
const STORE_CACHE = "private, no-cache";

/**
 * Said in every /data route's description: a Zarr client must never be handed a refusal it would
 * silently turn into fill values, so an empty rate-limit bucket delays these requests instead.
 */
const LIMITS =
  " Rate limits pace /data instead of refusing it: a request that finds its key's bucket empty waits " +
  "(first come, first served per key) for the next token, up to `data_rate_wait_ms` (60 s by default), " +
  "and is answered normally; only past that bound is it refused with 429 + Retry-After. The places to wait " +
  "are bounded across all keys (`data_rate_waiters_max`, by default a quarter of the server's open-file " +
  "limit): when every one is taken, a request that would have to wait is refused at once with 503 + " +
  "Retry-After (/readyz shows checks.data_waiters as waiting/max). Zarr clients " +
  "(zarr-python 2 in particular) turn any failed chunk request into fill values without an error, so " +
  "/data is also outside the concurrency cap. 404 is reserved for keys that are not in the store: an " +
  "absent chunk is how Zarr says 'all fill value'. A 5xx on a chunk means the data could not be read, " +
  "never that it is missing; a client that reads through such errors should treat them as failures.";

export const zarrHref = (id: string): string => `/data/datasets/${id}/zarr/`;

const Dataset = Type.Object(
  {
    id: Type.String({ description: "Dataset id in the ~ form (forecast~global)" }),
    group: Type.String({ description: "Group id in the / form" }),
    zarr: Type.String({
      description:
        "Root of the dataset's Zarr store (v2 and v3 views of the same chunks): absolute on the server's public_url " +
        "(or a trusted proxy's headers) when known, else a path",
    }),
    kind: Type.String(),
    title: Type.Union([Type.String(), Type.Null()]),
    dims: Type.Record(Type.String(), Type.Integer(), { description: "Dimension name → length" }),
    runs: Type.Array(Type.String(), { description: "Run times, ISO 8601 without zone (UTC)" }),
    lead_hours: Type.Array(Type.Number()),
    variables: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: "Published arrays: canonical name, stored name, dims, shape, chunks, dtype",
    }),
    skipped: Type.Array(Type.Object({ stored: Type.String(), reason: Type.String() })),
  },
  { additionalProperties: true },
);

const DatasetList = Type.Object({
  datasets: Type.Array(Dataset),
  unavailable: Type.Array(Type.Object({ id: Type.String(), reason: Type.String() }), {
    description: "Datasets the store has but gridcast cannot read, each with the reason; the others still serve",
  }),
});

const StoreKey = {
  description:
    "Store key: metadata (.zmetadata, .zgroup, .zattrs, <var>/.zarray, zarr.json, <var>/zarr.json) or chunk (<var>/i.j.k.l, <var>/c/i/j/k/l)",
  content: {
    "application/octet-stream": { schema: { type: "string", format: "binary" } },
    "application/json": { schema: {} },
  },
  headers: {
    ETag: { description: "Strong validator of the object's bytes", schema: Type.String() },
    "Content-Range": { description: "On 206: the part of the object sent", schema: Type.String() },
  },
};

export const dataRoutes = [
  route({
    method: "GET",
    path: "/data/datasets",
    operationId: "listDatasets",
    summary: "Forecast datasets published as Zarr stores",
    description:
      "Each forecast group as a dataset id in the ~ form, with the root of its Zarr store and a short summary." +
      LIMITS,
    tags: ["zarr"],
    auth: "weather",
    rateLimit: "wait",
    responses: { 200: { description: "Datasets", content: { "application/json": { schema: DatasetList } } } },
    handler: async ({ app, req }) => {
      const { datasets, unavailable } = await publisherFor(app.store).summaries();
      const { base, headers } = linkBase(app.settings, req);
      return {
        json: { datasets: datasets.map((d) => ({ ...d, zarr: `${base}${zarrHref(d.id)}` })), unavailable },
        headers,
      };
    },
  }),
  route({
    method: "GET",
    path: "/data/datasets/{id}/zarr/",
    operationId: "datasetStoreRoot",
    summary: "Root of a dataset's Zarr store",
    description:
      "Open it with xarray (`xr.open_zarr(url, consolidated=True, storage_options={'headers': {'X-API-Key': key}})`), " +
      "zarr-python or zarrita; every request needs the X-API-Key header. This URL itself answers the dataset summary." +
      LIMITS,
    tags: ["zarr"],
    auth: "weather",
    rateLimit: "wait",
    responses: { 200: { description: "Dataset summary", content: { "application/json": { schema: Dataset } } } },
    handler: async ({ app, req, params }) => {
      const publisher = publisherFor(app.store);
      const d = await publisher.summary(params.id);
      const { base, headers } = linkBase(app.settings, req);
      const consolidated = { v2: ".zmetadata", v3: "zarr.json" };
      return { json: { ...d, zarr: `${base}${zarrHref(d.id)}`, consolidated }, headers };
    },
  }),
  route({
    method: "GET",
    path: "/data/datasets/{id}/zarr/{key+}",
    operationId: "datasetStoreKey",
    summary: "One key of a dataset's Zarr store",
    description:
      "Metadata documents and chunks of the v2 view (.zmetadata, <var>/.zarray, <var>/i.j.k.l) and the v3 view " +
      "(zarr.json with inline consolidated metadata, <var>/zarr.json, <var>/c/i/j/k/l) of the same chunks. A key " +
      "that is not in the store is 404. HEAD, Range (bytes=a-b, a-, -n) and If-None-Match are supported." +
      LIMITS,
    tags: ["zarr"],
    auth: "weather",
    rateLimit: "wait",
    // Not "heavy": zarr-python 2 fetches a selection's chunks in one concurrent burst and turns any
    // error (a 503 from the concurrency cap included) into fill values, silently. One key is at most
    // one chunk of work, so the burst is served, not refused.
    heavy: false,
    responses: { 200: StoreKey, 206: { ...StoreKey, description: "Part of the object" } },
    handler: async ({ app, params, req, res }) => {
      const obj = await publisherFor(app.store).get(params.id, params.key);
      sendBytes(req, res, {
        body: obj.bytes,
        type: obj.kind === "metadata" ? "application/json" : "application/octet-stream",
        cache: STORE_CACHE,
      });
      return { handled: true };
    },
  }),
];
