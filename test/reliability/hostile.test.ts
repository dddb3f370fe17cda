// Hostile input over real HTTP. Traversal in every path parameter is sent as raw request lines (no
// client normalises it first); a sentinel file beside the store root must never be served, and no
// credit may be charged. Then invalid values for every documented parameter, generated from the
// OpenAPI document: always 4xx problem+json, never 5xx, never a stack trace, path or SQL.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, rawGet, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const SENTINEL = "gridcast-sentinel-7d1f";
let storeDir: string;
let srv: TestServer;
let key: string;
let keyId: string;

before(async () => {
  storeDir = await sampleStore();
  const parent = dirname(storeDir);
  // Files a traversal would reach: beside the root, and in a sibling whose name starts with the root's.
  writeFileSync(join(parent, "secret.txt"), SENTINEL);
  mkdirSync(`${storeDir}-evil`, { recursive: true });
  writeFileSync(join(`${storeDir}-evil`, "zarr.json"), SENTINEL);
  srv = await testServer(storeDir);
  writeFileSync(join(srv.dir, "secret.txt"), SENTINEL);
  await build({
    store: storeDir,
    out: join(srv.dir, "output"),
    maxZoom: 1,
    groups: ["forecast/global"],
    vars: ["t2m"],
  });
  const created = await srv.running.ctx.ledger.createKey({
    name: "hostile",
    scopes: ["weather", "embeddings"],
    credits: 100,
    rate: 0,
  });
  key = created.key;
  keyId = created.record.id;
});
after(async () => {
  await srv.close();
  cleanup(storeDir, `${storeDir}-evil`);
});

const TRAVERSALS = [
  "../secret.txt",
  "..%2fsecret.txt",
  "%2e%2e/secret.txt",
  "%2e%2e%2fsecret.txt",
  "%252e%252e%252fsecret.txt",
  "..%5csecret.txt",
  "%c0%ae%c0%ae/secret.txt",
  "secret.txt%00.png",
  "%2fetc%2fpasswd",
  "/etc/passwd",
  "..%2f..%2f..%2f..%2fetc%2fpasswd",
  "..%2fstore-evil%2fzarr.json",
];

const TEMPLATES = [
  "/data/datasets/{p}/zarr/.zmetadata",
  "/data/datasets/forecast~global/zarr/{p}",
  "/data/datasets/forecast~global/zarr/t2m/{p}",
  "/api/export/{p}/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=0&lat_max=1&lon_min=0&lon_max=1",
  "/api/embeddings/item/{p}",
  "/api/embeddings/npy/{p}",
  "/api/forecast/tile/{p}/0/0?layer=global.t2m",
  "/api/forecast/tile/0/{p}/0?layer=global.t2m",
  "/api/forecast/tile/0/0/{p}?layer=global.t2m",
  "/api/forecast/tile/0/0/0?layer={p}",
  "/{p}",
  "/tiles/{p}",
  "/vendor/leaflet/{p}",
  "/vendor/redoc/{p}",
];

describe("path traversal in every path parameter", () => {
  test("never serves the sentinel, answers 400/404 problem+json, charges nothing", async () => {
    const before = await srv.running.ctx.ledger.balance(keyId);
    const seen: string[] = [];
    for (const t of TEMPLATES) {
      for (const p of TRAVERSALS) {
        const path = t.replace("{p}", p);
        const r = await rawGet(srv.url, path, { "X-API-Key": key });
        const text = r.body.toString("latin1");
        assert.ok(!text.includes(SENTINEL), `${path} leaked the sentinel`);
        assert.ok(!text.includes("root:x:0:0"), `${path} leaked /etc/passwd`);
        assert.ok([400, 404, 405].includes(r.status), `${path} → ${r.status}`);
        if (r.body.length) assert.match(r.headers.get("content-type") ?? "", /problem\+json/, path);
        seen.push(`${r.status}`);
      }
    }
    assert.ok(seen.length === TEMPLATES.length * TRAVERSALS.length);
    assert.equal(await srv.running.ctx.ledger.balance(keyId), before);
    // the keyed and metered routes were really reachable with this key
    const ok = await get(`${srv.url}/api/embeddings?limit=1`, { "X-API-Key": key });
    assert.equal(ok.status, 200);
  });
});

describe("the build's private indexes under any spelling", () => {
  // Every way a path can name embeddings/... of the published build: percent-encoded letters,
  // doubled slashes, dot segments, case. The guard must read the path as the file server does.
  const SPELLINGS = [
    "/embeddings/items.json",
    "/%65mbeddings/items.json",
    "/e%6dbeddings/items.json",
    "/%65%6d%62%65%64%64%69%6e%67%73/items.json",
    "/embeddings%2fitems.json",
    "//embeddings/items.json",
    "/./embeddings/items.json",
    "/tiles/../embeddings/items.json",
    "/tiles/%2e%2e/embeddings/items.json",
    "/EMBEDDINGS/items.json",
    "/Embeddings/items.json",
    "/embeddings/./items.json",
    "/embeddings//items.json",
    "/embeddings/items%2ejson",
  ];

  test("are never served, with or without a key", async () => {
    const root = join(srv.dir, "output", "current", "embeddings");
    const files = readdirSync(root, { recursive: true }).map(String);
    assert.ok(files.includes("items.json"), "the build wrote the catalogue the guard protects");
    const locate = files.find((f) => f.startsWith("locate/") && f.endsWith(".json"));
    assert.ok(locate, "the build wrote a locate index");
    const paths = [
      ...SPELLINGS,
      ...SPELLINGS.map((p) => p.replace("items.json", locate)),
      ...SPELLINGS.map((p) => p.replace("items.json", locate.replace("locate/", "locat%65/"))),
    ];
    for (const path of paths) {
      for (const headers of [{}, { "X-API-Key": key }] as Record<string, string>[]) {
        const r = await rawGet(srv.url, path, headers);
        assert.ok([400, 404].includes(r.status), `${path} → ${r.status}`);
        assert.ok(!r.body.toString("utf8").includes('"items"'), `${path} leaked the catalogue`);
      }
    }
    // The same guard lets ordinary build files through under harmless encodings.
    assert.equal((await rawGet(srv.url, "/catalog.json")).status, 200);
    assert.equal((await rawGet(srv.url, "/catalog%2ejson")).status, 200);
    assert.equal((await rawGet(srv.url, "//catalog.json")).status, 200);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is plain JSON
type Param = { name: string; in: "query" | "path"; required: boolean; schema: any };

const BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e309", "0x10", "", "abc", "1,5", "99999999999999999999999"];
const BAD_INTEGERS = [...BAD_NUMBERS, "1.5", "-1", "9007199254740993"];
const BAD_STRINGS = ["", "x".repeat(500), "%00", "../../etc/passwd"];

const VALID: Record<string, string> = {
  lat: "46.5",
  lon: "10.1",
  var: "t2m",
  group: "forecast/global",
  time_index: "0",
  lead_start: "0",
  lead_stop: "0",
  lat_min: "40",
  lat_max: "50",
  lon_min: "0",
  lon_max: "10",
  layer: "global.t2m",
  lead: "0",
  z: "0",
  x: "0",
  y: "0",
  id: "forecast~global",
  name: "geofm~rf~v1.2~base~map~2026_06_01_2026_08_31~32TNS",
  key: ".zmetadata",
  limit: "10",
  prefix: "geofm/rf/v1.2/base/map",
};

function badValues(p: Param): string[] {
  const t = p.schema?.type ?? p.schema?.anyOf?.[0]?.type;
  const out = t === "integer" ? BAD_INTEGERS : t === "number" ? BAD_NUMBERS : BAD_STRINGS;
  const extra: string[] = [];
  if (typeof p.schema?.maximum === "number") extra.push(String(p.schema.maximum + 1000));
  if (typeof p.schema?.minimum === "number") extra.push(String(p.schema.minimum - 1000));
  return [...out, ...extra];
}

describe("generated negative tests from the OpenAPI document", () => {
  test("invalid values for every documented parameter → 4xx problem+json, never 5xx or a leak", async () => {
    const doc = (await get(`${srv.url}/openapi.json`)).json();
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, { get: { parameters: Param[] } }>)) {
      const params = item.get.parameters;
      if (!params.length) continue;
      for (const target of params) {
        for (const bad of badValues(target)) {
          let url = path;
          const q = new URLSearchParams();
          for (const p of params) {
            const value = p === target ? bad : VALID[p.name];
            if (p.in === "path") {
              const enc = p === target ? encodeURIComponent(value ?? "x") : (value ?? "x");
              url = url.replace(`{${p.name}}`, enc === "" ? "%20" : enc);
            } else if (value !== undefined && (p.required || p === target)) q.set(p.name, value);
          }
          const full = `${url}${q.size ? `?${q}` : ""}`;
          const r = await get(`${srv.url}${full}`, { "X-API-Key": key });
          const text = r.body.toString();
          assert.ok(r.status < 500, `${full} → ${r.status} ${text.slice(0, 200)}`);
          if (r.status >= 400) {
            assert.match(r.headers.get("content-type") ?? "", /problem\+json/, full);
            assert.ok(
              !/\n\s+at |node:internal|\/tmp\/|\/work\/|SELECT |INSERT |sqlite|postgres/i.test(text),
              `${full}: ${text}`,
            );
          }
          checked++;
        }
      }
    }
    assert.ok(checked > 200, `only ${checked} cases`);
  });

  test("numeric parameters that are invalid are 400 naming the parameter", async () => {
    for (const [q, param] of [
      ["lat=1e309&lon=1", "lat"],
      ["lat=0x1A&lon=1", "lat"],
      ["lat=1&lon=-Infinity", "lon"],
      ["lat=1&lat=2&lon=1", "lat"],
      ["lat=&lon=1", "lat"],
    ] as const) {
      const r = await get(`${srv.url}/point?${q}&var=t2m`, { "X-API-Key": key });
      assert.equal(r.status, 400, q);
      assert.equal(r.json().param, param, q);
    }
    const inverted = await get(
      `${srv.url}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=0&lat_min=50&lat_max=40&lon_min=0&lon_max=1`,
      { "X-API-Key": key },
    );
    assert.equal(inverted.status, 400);
    assert.equal(inverted.json().param, "lat_min");
    const listing = (await get(`${srv.url}/api/embeddings?limit=1`, { "X-API-Key": key })).json();
    const item = JSON.stringify(listing).match(/"name":"([^"]+)"/)![1];
    const huge = await get(`${srv.url}/api/embeddings/npy/${item}?y_stop=99999999999999`, { "X-API-Key": key });
    assert.equal(huge.status, 400);
    assert.equal(huge.json().param, "y_stop");
  });
});
