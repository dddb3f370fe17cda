// The OpenAPI description: valid 3.1, in step with what polka really routes, and true to the
// responses the server really sends.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import sharp from "sharp";
import Value from "typebox/value";
import { literalPlaceholders } from "../../src/http/openapi.ts";
import { polkaPattern } from "../../src/http/route.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
// biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON
let doc: any;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  key = await srv.key(["weather", "embeddings"]);
  doc = (await get(`${srv.url}/openapi.json`)).json();
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

function resolveRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolveRefs);
  if (schema && typeof schema === "object") {
    const o = schema as Record<string, unknown>;
    if (typeof o.$ref === "string") {
      const path = o.$ref.replace(/^#\//, "").split("/");
      let target: unknown = doc;
      for (const p of path) target = (target as Record<string, unknown>)[p];
      return resolveRefs(target);
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolveRefs(v)]));
  }
  return schema;
}

describe("OpenAPI", () => {
  test("the document is valid OpenAPI 3.1", async () => {
    assert.equal(doc.openapi, "3.1.0");
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
  });

  test("routes polka serves and paths the document describes are the same set", () => {
    const registered = srv.running.app.registered();
    const served = new Set(registered.GET);
    const metered = new Set(srv.running.app.routes.filter((r) => r.cost).map((r) => polkaPattern(r.path)));
    assert.ok(metered.size > 0);
    assert.deepEqual(
      new Set(registered.HEAD),
      new Set([...served].filter((p) => !metered.has(p))),
      "every unmetered GET route answers HEAD too",
    );
    const documented = new Set(
      Object.keys(doc.paths).map((p) => {
        const def = srv.running.app.routes.find((r) => r.path.replace(/\{(\w+)\+\}/, "{$1}") === p);
        return polkaPattern(def ? def.path : p);
      }),
    );
    assert.deepEqual([...served].sort(), [...documented].sort());
  });

  test("keyed routes carry the X-API-Key scheme; problem responses and credit headers are described", () => {
    assert.deepEqual(doc.components.securitySchemes.ApiKey, {
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
      description: "Sent on every request, including each Zarr request",
    });
    assert.deepEqual(doc.paths["/point"].get.security, [{ ApiKey: [] }]);
    assert.deepEqual(doc.paths["/api/forecast/catalog"]?.get.security ?? [], []);
    assert.ok(doc.paths["/point"].get.responses["401"].content["application/problem+json"]);
    const npy = doc.paths["/api/export/{id}/npy"].get;
    assert.ok(npy.responses["200"].headers["X-SVC-Field"]);
    assert.ok(npy.responses["413"]);
    const names = npy.parameters.map((p: { name: string }) => p.name);
    for (const n of [
      "id",
      "var",
      "time_index",
      "lead_start",
      "lead_stop",
      "lat_min",
      "lat_max",
      "lon_min",
      "lon_max",
      "level",
    ]) {
      assert.ok(names.includes(n), n);
    }
  });

  test("real responses validate against the documented schemas", async () => {
    const H = { "X-API-Key": key };
    const samples: [string, string, Record<string, string>][] = [
      ["/point", "/point?lat=46.5&lon=10.1&var=tp_1h", H],
      ["/point", "/point?lat=46.5&lon=10.1&var=nope", H],
      ["/point", "/point?lat=99&lon=10.1&var=t2m", H],
      ["/point", "/point?lat=9&lon=10.1&var=t2m", {}],
      ["/healthz", "/healthz", {}],
      ["/readyz", "/readyz", {}],
      ["/api/export", "/api/export", H],
      ["/api/models", "/api/models", {}],
      ["/api/registry", "/api/registry", {}],
      ["/api/export/{id}/npy", "/api/export/forecast~global/npy?var=t2m", H],
    ];
    for (const [path, url, headers] of samples) {
      const r = await get(`${srv.url}${url}`, headers);
      const op = doc.paths[path].get;
      const resp = op.responses[String(r.status)];
      assert.ok(resp, `${url}: status ${r.status} is not documented`);
      const type = (r.headers.get("content-type") ?? "").split(";")[0];
      const schema = resolveRefs(resp.content?.[type]?.schema);
      assert.ok(schema, `${url}: ${type} is not documented for ${r.status}`);
      const ok = Value.Check(schema as never, r.json());
      assert.ok(ok, `${url}: body does not match its schema: ${r.body.toString().slice(0, 300)}`);
    }
  });

  test("the interactive views are served from local packages", async () => {
    const docs = await get(`${srv.url}/api-docs`);
    assert.equal(docs.status, 200);
    assert.match(docs.body.toString(), /\/vendor\/swagger-ui\/swagger-ui-bundle\.js/);
    const redoc = await get(`${srv.url}/api-redoc`);
    assert.match(redoc.body.toString(), /\/api-redoc\/redoc\.js/);
    for (const asset of [
      "/vendor/swagger-ui/swagger-ui-bundle.js",
      "/vendor/swagger-ui/swagger-ui.css",
      "/api-redoc/redoc.js",
      "/api-docs/init.js",
    ]) {
      const r = await get(`${srv.url}${asset}`);
      assert.equal(r.status, 200, asset);
      assert.ok(r.body.length > 50, asset);
    }
    // The served ReDoc bundle names no other host (the browser test checks the requests made).
    const bundle = (await get(`${srv.url}/api-redoc/redoc.js`)).body.toString();
    assert.doesNotMatch(bundle, /cdn\.redoc\.ly/);
    assert.match((await get(`${srv.url}/api-docs/init.js`)).body.toString(), /validatorUrl: null/);
  });

  test("a favicon at /favicon.ico (PNG) and /favicon.svg, linked from both views", async () => {
    const ico = await get(`${srv.url}/favicon.ico`);
    assert.equal(ico.status, 200);
    assert.equal(ico.headers.get("content-type"), "image/png");
    const meta = await sharp(ico.body).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["png", 32, 32]);
    const svg = await get(`${srv.url}/favicon.svg`);
    assert.equal(svg.headers.get("content-type"), "image/svg+xml");
    assert.equal((await sharp(svg.body).metadata()).format, "svg");
    for (const page of ["/api-docs", "/api-redoc"]) {
      assert.match(
        (await get(`${srv.url}${page}`)).body.toString(),
        /<link rel="icon" type="image\/svg\+xml" href="\/favicon\.svg">/,
      );
    }
  });

  test("every range end says whether it is included or excluded (lead_stop is, y_stop is not)", () => {
    const ends = new Map<string, string>();
    for (const item of Object.values(doc.paths) as Record<string, { parameters?: unknown[] }>[]) {
      for (const op of Object.values(item)) {
        for (const p of (op?.parameters ?? []).map(resolveRefs) as { name: string; description?: string }[]) {
          if (/_(stop|start)$/.test(p.name)) ends.set(`${p.name}: ${p.description ?? ""}`, p.name);
        }
      }
    }
    const names = new Set(ends.values());
    for (const n of ["lead_start", "lead_stop", "y_start", "y_stop", "x_stop", "feature_stop"])
      assert.ok(names.has(n), n);
    for (const [text, name] of ends) {
      assert.match(text, /\b(included|excluded)\b/, `${name} does not say whether its end is in the range`);
      if (name === "lead_stop") assert.match(text, /\bincluded\b/);
      if (/^(x|y|feature)_stop$/.test(name)) assert.match(text, /\bexcluded\b/);
    }
  });

  test("descriptions keep their placeholders: no HTML-like tag outside a code span", () => {
    const bad: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) {
          if (k === "description" && typeof x === "string") {
            if (/<[^>]*>/.test(x.replace(/`[^`]*`/g, ""))) bad.push(x);
          } else walk(x);
        }
    };
    walk(doc);
    assert.deepEqual(bad, []);
    const layer = doc.paths["/api/forecast/tile/{z}/{x}/{y}"].get.parameters.find(
      (p: { name: string }) => p.name === "layer",
    );
    assert.equal(
      layer.description,
      "Layer id from the catalog: `<group name>.<variable>[.<level>]`, e.g. global.t2m or global.t.500",
    );
    assert.equal(literalPlaceholders("a `<kept>` b <x>/y, c."), "a `<kept>` b `<x>/y`, c.");
    assert.equal(literalPlaceholders("ends with <name>."), "ends with `<name>`.");
  });
});

test("servers: relative to the document without public_url, the public_url when it is set", async () => {
  assert.deepEqual(
    doc.servers.map((x: { url: string }) => x.url),
    ["/"],
  );
  const settings = srv.running.ctx.settings;
  try {
    settings.public_url = "https://api.example.org/gc";
    const withBase = (await get(`${srv.url}/openapi.json`)).json();
    assert.deepEqual(
      withBase.servers.map((x: { url: string }) => x.url),
      ["https://api.example.org/gc"],
    );
    assert.deepEqual(Object.keys(withBase.paths), Object.keys(doc.paths));
  } finally {
    settings.public_url = "";
  }
  assert.deepEqual((await get(`${srv.url}/openapi.json`)).json().servers, doc.servers);
});
