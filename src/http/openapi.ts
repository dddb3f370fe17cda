// The OpenAPI 3.1 description, generated from the route declarations: the same schemas validate
// requests, shape responses and document them.

import { STATUS_TABLE, TITLES } from "./problem.ts";
import { EXPOSED_HEADERS } from "./request-intake.ts";
import type { RouteDef } from "./route.ts";
import { Problem } from "./schemas/common.ts";
import { EDR_CONVENTIONS } from "./schemas/edr.ts";

type Json = Record<string, unknown>;

// Descriptions are Markdown to Swagger UI and ReDoc, which drop anything that looks like an HTML
// tag: "<group name>.<variable>" would show as ".". Runs of text holding such placeholders are
// put in code spans, which both render literally and which read well in the raw JSON too.
const PLACEHOLDER_RUN = /(?:[^\s<>`,;()]*<[^<>`\n]+>)+[^\s<>`,;()]*/g;

export function literalPlaceholders(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(PLACEHOLDER_RUN, (run) => {
            const trail = /[.:]+$/.exec(run)?.[0] ?? "";
            return `\`${run.slice(0, run.length - trail.length)}\`${trail}`;
          }),
    )
    .join("");
}

/** Every `description` in the document, at any depth, through literalPlaceholders. */
function literalDescriptions<T>(value: T): T {
  if (Array.isArray(value)) return value.map(literalDescriptions) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        k === "description" && typeof v === "string" ? literalPlaceholders(v) : literalDescriptions(v),
      ]),
    ) as T;
  }
  return value;
}

const PROBLEM_CONTENT = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };

function parameters(def: RouteDef): Json[] {
  const out: Json[] = [];
  const add = (schema: object | undefined, where: "query" | "path") => {
    const s = schema as { properties?: Record<string, Json>; required?: string[] } | undefined;
    for (const [name, sub] of Object.entries(s?.properties ?? {})) {
      const { description, ...rest } = sub;
      out.push({
        name,
        in: where,
        required: where === "path" || (s?.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
        ...(where === "query" && def.formLists?.includes(name) ? { style: "form", explode: false } : {}),
      });
    }
  };
  add(def.pathParams, "path");
  for (const m of def.path.matchAll(/\{(\w+)\+?\}/g)) {
    if (!out.some((p) => p.name === m[1])) {
      out.push({ name: m[1], in: "path", required: true, schema: { type: "string" } });
    }
  }
  add(def.query, "query");
  return out;
}

function errorResponses(def: RouteDef): Json {
  const statuses = new Set<number>([400, 404, 500]);
  if (def.auth !== "public") {
    statuses.add(401);
    statuses.add(403);
    statuses.add(429);
    statuses.add(503);
  }
  if (def.heavy) statuses.add(503);
  if (def.cost) statuses.add(402);
  if (/npy/.test(def.path)) statuses.add(413);
  const out: Json = {};
  for (const s of [...statuses].sort()) {
    if (def.responses[s]) continue;
    const description =
      s === 400
        ? `${TITLES[s] ?? "Error"}: a parameter is malformed, out of range, given twice, or not one this route ` +
          "takes (an unknown query parameter is refused before anything is read or charged)"
        : s === 429
          ? "Too Many Requests: the key's rate-limit bucket stayed empty for longer than the request may wait " +
            "for a token (`rate_wait_ms`, 10 s by default; `data_rate_wait_ms` for /data): a request within " +
            "the bound is slowed to the key's rate, not refused. Retry-After says when a token is due"
          : (TITLES[s] ?? "Error");
    out[String(s)] = { description, content: PROBLEM_CONTENT };
  }
  return out;
}

function responses(def: RouteDef): Json {
  const out: Json = {};
  for (const [status, doc] of Object.entries(def.responses)) {
    const headers: Json = { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } };
    for (const [h, d] of Object.entries(doc.headers ?? {})) headers[h] = d;
    if (def.cost) {
      headers["X-Credits-Charged"] = { $ref: "#/components/headers/X-Credits-Charged" };
      headers["X-Credits-Remaining"] = { $ref: "#/components/headers/X-Credits-Remaining" };
    }
    out[status] = { description: doc.description, ...(doc.content ? { content: doc.content } : {}), headers };
  }
  return { ...out, ...errorResponses(def) };
}

export function openapiDocument(routes: RouteDef[], info: { version: string; publicUrl?: string }): Json {
  const paths: Record<string, Json> = {};
  for (const def of routes) {
    const op: Json = {
      operationId: def.operationId,
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      tags: def.tags,
      parameters: parameters(def),
      responses: responses(def),
      security: def.auth === "public" ? [] : [{ ApiKey: [] }],
      ...(def.body ? { requestBody: { required: true, content: { "application/json": { schema: def.body } } } } : {}),
      ...(def.cost ? { "x-credit-metered": true } : {}),
      ...(def.auth !== "public" ? { "x-scope": def.auth } : {}),
    };
    const path = def.path.replace(/\{(\w+)\+\}/g, "{$1}");
    paths[path] = { ...(paths[path] ?? {}), [def.method.toLowerCase()]: op };
  }
  return literalDescriptions({
    openapi: "3.1.0",
    info: {
      title: "gridcast",
      version: info.version,
      license: { name: "MIT", identifier: "MIT" },
      description:
        "Gridded weather forecasts and Earth-observation latent embeddings from one Zarr store. Map tiles, the " +
        "forecast catalog and click values are public; /point, exports and the /data Zarr stores need an API key " +
        "with the weather scope, embeddings need the embeddings scope and are credit-metered. A metered response " +
        "is debited in full before its headers go out (X-Credits-Charged); one cut short is charged by the same " +
        "rule for the body bytes handed to the connection (taken by the server's kernel) and gets the rest back, " +
        "and one cut before its first body byte costs nothing. A 304 is free and answers only an If-None-Match " +
        "naming the current ETag; If-None-Match: * is not honoured on metered routes. Every error is " +
        "RFC 9457 problem+json; its type is one of: " +
        STATUS_TABLE.map(([, status, slug]) => `/problems/${slug} (${status})`).join(", ") +
        ". Every route takes only the query parameters it lists: any other is answered 400 (invalid-parameter, " +
        "naming it) before the store is read or credits are charged. Keys are issued by operators with " +
        "`gridcast keys create`. Every response, public files included, is " +
        "dropped once its client took fewer than send_floor_bytes_per_s on average over send_stall_ms while " +
        "bytes waited for it, or it has taken response_timeout_ms; " +
        "a connection beyond max_connections_per_client from one address, or beyond max_connections in all, " +
        "gets 503 /problems/busy with Retry-After before its request is read (see /readyz `limits`).",
    },
    // The server's public_url when it is set; else relative to wherever this document was fetched.
    servers: info.publicUrl
      ? [{ url: info.publicUrl, description: "This server's public base URL (setting public_url)" }]
      : [{ url: "/", description: "The server this document was fetched from" }],
    tags: [
      { name: "maps", description: "Public, read-only map interfaces (catalog, tiles, click values)" },
      { name: "weather", description: "Keyed forecast reads: point series and bounded exports" },
      { name: "zarr", description: "Zarr stores for lazy analysis (xarray, zarr-python, zarrita)" },
      { name: "embeddings", description: "EO latent embeddings (credit-metered)" },
      {
        name: "stac",
        description:
          "STAC API 1.0 over the EO latents: collections per family and product, one item per latent item, " +
          "item search (GET and POST). Keyed like /api/embeddings; the assets are the metered embedding routes",
      },
      { name: "catalog", description: "Models and variable registry" },
      {
        name: "edr",
        description:
          "OGC API – Environmental Data Retrieval over every forecast group (/edr): positions, radius, areas, " +
          `cubes and trajectories in CoverageJSON, GeoJSON and CSV. ${EDR_CONVENTIONS}`,
      },
      { name: "operations", description: "Health, readiness, metrics and documentation" },
    ],
    paths,
    components: {
      securitySchemes: {
        ApiKey: {
          type: "apiKey",
          in: "header",
          name: "X-API-Key",
          description: "Sent on every request, including each Zarr request",
        },
      },
      schemas: { Problem },
      headers: {
        "X-Request-Id": { description: "Id of this request in the server's access log", schema: { type: "string" } },
        "X-Credits-Charged": { description: "Credits debited for this response", schema: { type: "integer" } },
        "X-Credits-Remaining": { description: "Balance after this response", schema: { type: "integer" } },
      },
    },
    "x-cors-exposed-headers": EXPOSED_HEADERS,
  });
}
