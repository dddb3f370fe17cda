// /openapi.json and the two interactive views, served from npm packages (no CDN): Swagger UI at
// /api-docs and ReDoc at /api-redoc. Their scripts come from the /vendor/ static mounts.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { openapiDocument } from "../openapi.ts";
import { route } from "../route.ts";
import { allRoutes } from "./index.ts";

const VERSION = (
  JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../package.json"), "utf8")) as { version: string }
).version;

let cached: string | undefined;
export function openapiJson(): string {
  cached ??= JSON.stringify(openapiDocument(allRoutes(), { version: VERSION }));
  return cached;
}

const swaggerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gridcast API</title>
<link rel="stylesheet" href="/vendor/swagger-ui/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/api-docs/init.js"></script>
</body></html>`;

const redocPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gridcast API reference</title></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/vendor/redoc/redoc.standalone.js"></script>
</body></html>`;

const html = (body: string) => ({ body, type: "text/html; charset=utf-8", cache: "public, max-age=300" });

export const docsRoutes = [
  route({
    method: "GET",
    path: "/openapi.json",
    operationId: "openapi",
    summary: "This OpenAPI 3.1 description",
    tags: ["operations"],
    auth: "public",
    responses: {
      200: { description: "OpenAPI document", content: { "application/json": { schema: { type: "object" } } } },
    },
    handler: async () => ({
      body: openapiJson(),
      type: "application/json; charset=utf-8",
      cache: "public, max-age=300",
    }),
  }),
  route({
    method: "GET",
    path: "/api-docs",
    operationId: "apiDocs",
    summary: "Interactive API documentation (Swagger UI)",
    tags: ["operations"],
    auth: "public",
    responses: { 200: { description: "HTML page", content: { "text/html": { schema: { type: "string" } } } } },
    handler: async () => html(swaggerPage),
  }),
  route({
    method: "GET",
    path: "/api-docs/init.js",
    operationId: "apiDocsInit",
    summary: "Swagger UI start-up script",
    tags: ["operations"],
    auth: "public",
    responses: { 200: { description: "JavaScript", content: { "text/javascript": { schema: { type: "string" } } } } },
    handler: async () => ({
      body: 'window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#ui", deepLinking: true });\n',
      type: "text/javascript; charset=utf-8",
      cache: "public, max-age=300",
    }),
  }),
  route({
    method: "GET",
    path: "/api-redoc",
    operationId: "apiRedoc",
    summary: "API reference (ReDoc)",
    tags: ["operations"],
    auth: "public",
    responses: { 200: { description: "HTML page", content: { "text/html": { schema: { type: "string" } } } } },
    handler: async () => html(redocPage),
  }),
];
