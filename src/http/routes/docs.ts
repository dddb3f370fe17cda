// /openapi.json and the two interactive views, served from npm packages (no CDN): Swagger UI at
// /api-docs and ReDoc at /api-redoc, and the site icon. Both views work offline: Swagger UI's
// validator badge (an online service) is off, and ReDoc's bundle is served with its one
// external URL, the Redocly logo in its sidebar credit, replaced by a local copy of our icon.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { FAVICON_SVG, faviconPng } from "../favicon.ts";
import { openapiDocument } from "../openapi.ts";
import { type RouteDef, route } from "../route.ts";

const VERSION = (
  JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../package.json"), "utf8")) as { version: string }
).version;

/** The OpenAPI document of the given routes, serialised once per server base URL (public_url). */
function openapiJson(routes: () => RouteDef[]): (publicUrl: string) => string {
  let cached: { base: string; text: string } | undefined;
  return (publicUrl) => {
    if (cached?.base !== publicUrl) {
      cached = { base: publicUrl, text: JSON.stringify(openapiDocument(routes(), { version: VERSION, publicUrl })) };
    }
    return cached.text;
  };
}

const ICON = '<link rel="icon" type="image/svg+xml" href="/favicon.svg">';

const swaggerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gridcast API</title>${ICON}
<link rel="stylesheet" href="/vendor/swagger-ui/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/vendor/swagger-ui/swagger-ui-bundle.js"></script>
<script src="/api-docs/init.js"></script>
</body></html>`;

const redocPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gridcast API reference</title>${ICON}</head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/api-redoc/redoc.js"></script>
</body></html>`;

const REDOC_BUNDLE = resolve(import.meta.dirname, "../../../node_modules/redoc/bundles/redoc.standalone.js");
const REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
let redocJs: string | undefined;
/** ReDoc's bundle with its sidebar logo taken from this server; fails loudly if the URL moved. */
export function offlineRedoc(): string {
  if (redocJs) return redocJs;
  const js = readFileSync(REDOC_BUNDLE, "utf8");
  if (!js.includes(REDOC_LOGO)) throw new Error(`ReDoc bundle no longer names ${REDOC_LOGO}; update docs.ts`);
  redocJs = js.replaceAll(REDOC_LOGO, "/favicon.svg");
  return redocJs;
}

const html = (body: string) => ({ body, type: "text/html; charset=utf-8", cache: "public, max-age=300" });

/** The documentation routes; `documented` lists every route the OpenAPI document describes (these included). */
export const docsRoutes = (documented: () => RouteDef[]): RouteDef[] => {
  const openapi = openapiJson(documented);
  return [
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
      handler: async ({ app }) => ({
        body: openapi(app.settings.public_url),
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
        // validatorUrl null: no badge fetched from the online validator.
        body: 'window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#ui", deepLinking: true, validatorUrl: null });\n',
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
    route({
      method: "GET",
      path: "/api-redoc/redoc.js",
      operationId: "apiRedocScript",
      summary: "ReDoc bundle, with no request leaving this server",
      tags: ["operations"],
      auth: "public",
      responses: { 200: { description: "JavaScript", content: { "text/javascript": { schema: { type: "string" } } } } },
      handler: async () => ({
        body: offlineRedoc(),
        type: "text/javascript; charset=utf-8",
        cache: "public, max-age=86400",
      }),
    }),
    route({
      method: "GET",
      path: "/favicon.ico",
      operationId: "faviconPng",
      summary: "Site icon (PNG, at the path browsers ask for)",
      tags: ["operations"],
      auth: "public",
      responses: { 200: { description: "PNG image", content: { "image/png": { schema: {} } } } },
      handler: async () => ({ body: faviconPng(), type: "image/png", cache: "public, max-age=86400" }),
    }),
    route({
      method: "GET",
      path: "/favicon.svg",
      operationId: "faviconSvg",
      summary: "Site icon (SVG)",
      tags: ["operations"],
      auth: "public",
      responses: { 200: { description: "SVG image", content: { "image/svg+xml": { schema: { type: "string" } } } } },
      handler: async () => ({ body: FAVICON_SVG, type: "image/svg+xml", cache: "public, max-age=86400" }),
    }),
  ];
};
