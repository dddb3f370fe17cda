// The build's public files compressed and revalidated: twins written at build time, chosen by
// Accept-Encoding (br, gzip, identity, q-values), Vary on every document answer, an ETag per
// coding, 304 on If-None-Match and If-Modified-Since, Range over the coded and the identity body;
// the catalog route and a large route reply (OpenAPI) compressed too, PNG never. Then, with every
// cache warm, a planted symlink or a swapped directory serves nothing from outside the build.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { chooseCoding } from "../../src/content-coding.ts";
import { cleanup, type Got, rawGet, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let store: string;
let outside: string;
let srv: TestServer;
let dir: string;
const SENTINEL = "outside-the-build-sentinel";

before(async () => {
  store = await sampleStore();
  outside = tempDir();
  srv = await testServer(store);
  const out = srv.running.ctx.settings.out;
  await build({
    store,
    out,
    maxZoom: 1,
    groups: ["global"],
    vars: ["t2m"],
    webDir: join(import.meta.dirname, "../../web"),
  });
  dir = realpathSync(join(out, "current"));
});
after(async () => {
  await srv.close();
  cleanup(store, outside);
});

/** A GET with exactly these headers (no client adds or decodes an encoding). */
const get = (path: string, headers: Record<string, string> = {}): Promise<Got> => rawGet(srv.url, path, headers);

test("Accept-Encoding: q-values, ties to brotli, identity when excluded or not asked", () => {
  const both = ["br", "gzip"] as const;
  assert.equal(chooseCoding(undefined, both), "identity");
  assert.equal(chooseCoding("", both), "identity");
  assert.equal(chooseCoding("gzip, br", both), "br");
  assert.equal(chooseCoding("gzip;q=1, br;q=0.5", both), "gzip");
  assert.equal(chooseCoding("br;q=0, gzip", both), "gzip");
  assert.equal(chooseCoding("br;q=0, gzip;q=0", both), "identity");
  assert.equal(chooseCoding("gzip;q=0.5, identity", both), "identity");
  assert.equal(chooseCoding("*", both), "br");
  assert.equal(chooseCoding("*;q=0.2, identity;q=0", both), "br");
  assert.equal(chooseCoding("deflate", both), "identity");
  assert.equal(chooseCoding("x-gzip", both), "gzip");
  assert.equal(chooseCoding("gzip;q=0.5", both), "gzip", "identity not named ranks below a named coding");
  assert.equal(chooseCoding("*;q=0", both), "identity", "nothing acceptable: identity anyway");
  assert.equal(chooseCoding("BR;Q=0.9, GZIP;q=0.8", both), "br");
  assert.equal(chooseCoding("gzip, br", ["gzip"]), "gzip");
});

test("documents go out as the build's br / gzip twins, by Accept-Encoding, with Vary and an ETag per coding", async () => {
  const plain = readFileSync(join(dir, "catalog.json"));
  assert.ok(existsSync(join(dir, "catalog.json.br")) && existsSync(join(dir, "catalog.json.gz")), "twins written");
  const tags = new Set<string>();
  for (const [accept, coding] of [
    ["gzip, br", "br"],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["identity", undefined],
    ["br;q=0, gzip;q=0", undefined],
  ] as const) {
    const r = await get("/catalog.json", { "Accept-Encoding": accept });
    assert.equal(r.status, 200, accept);
    assert.equal(r.headers.get("vary"), "Accept-Encoding", accept);
    assert.equal(r.headers.get("content-encoding") ?? undefined, coding, accept);
    assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
    assert.equal(Number(r.headers.get("content-length")), r.body.length);
    const decoded = coding === "br" ? brotliDecompressSync(r.body) : coding === "gzip" ? gunzipSync(r.body) : r.body;
    assert.ok(decoded.equals(plain), `${accept}: the document itself`);
    if (coding) assert.ok(r.body.equals(readFileSync(join(dir, `catalog.json.${coding === "br" ? "br" : "gz"}`))));
    tags.add(r.headers.get("etag")!);
  }
  assert.equal(tags.size, 3, "br, gzip and identity each have their own ETag");
  // No Accept-Encoding at all: identity, still marked as varying.
  const bare = await get("/catalog.json");
  assert.equal(bare.headers.get("content-encoding"), null);
  assert.equal(bare.headers.get("vary"), "Accept-Encoding");
  assert.ok(bare.body.equals(plain));
  // The catalog route answers the same twin, and it is at least 5× smaller than the document.
  const route = await get("/api/forecast/catalog", { "Accept-Encoding": "br, gzip" });
  assert.equal(route.headers.get("content-encoding"), "br");
  assert.equal(route.headers.get("vary"), "Accept-Encoding");
  assert.ok(brotliDecompressSync(route.body).equals(plain));
  assert.ok(route.body.length * 5 <= plain.length, `${route.body.length} B of ${plain.length} B`);
  // TileJSON, legend JSON and the viewer page too; PNGs never, whatever is accepted.
  const lead = JSON.parse(plain.toString()).layers[0].runs[0].leads[0];
  const layer = JSON.parse(plain.toString()).layers[0];
  for (const path of [lead.tilejson, layer.legend.json, "/"]) {
    const r = await get(path, { "Accept-Encoding": "gzip" });
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get("content-encoding"), "gzip", path);
    gunzipSync(r.body);
  }
  // The vendor bundles served from node_modules too, compressed from memory.
  const leaflet = readFileSync(join(import.meta.dirname, "../../node_modules/leaflet/dist/leaflet.js"));
  const vendor = await get("/vendor/leaflet/leaflet.js", { "Accept-Encoding": "br, gzip" });
  assert.equal(vendor.headers.get("content-encoding"), "br");
  assert.equal(vendor.headers.get("vary"), "Accept-Encoding");
  assert.ok(brotliDecompressSync(vendor.body).equals(leaflet));
  assert.ok((await get("/vendor/leaflet/leaflet.js")).body.equals(leaflet), "identity without Accept-Encoding");
  for (const path of [lead.tiles.replace("{z}/{x}/{y}", "1/0/0"), layer.legend.png]) {
    const r = await get(path, { "Accept-Encoding": "gzip, br" });
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get("content-encoding"), null, path);
    assert.equal(r.headers.get("vary"), null, path);
    assert.equal(r.body.subarray(1, 4).toString(), "PNG");
  }
});

test("304: If-None-Match names the coding's own ETag; If-Modified-Since; Vary on the 304", async () => {
  const br = await get("/catalog.json", { "Accept-Encoding": "br" });
  const gz = await get("/catalog.json", { "Accept-Encoding": "gzip" });
  const brTag = br.headers.get("etag")!;
  const again = await get("/catalog.json", { "Accept-Encoding": "br", "If-None-Match": brTag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  assert.equal(again.headers.get("etag"), brTag);
  assert.equal(again.headers.get("vary"), "Accept-Encoding");
  // The gzip body's tag does not revalidate a brotli answer: that client holds other bytes.
  const other = await get("/catalog.json", { "Accept-Encoding": "br", "If-None-Match": gz.headers.get("etag")! });
  assert.equal(other.status, 200);
  const lastModified = br.headers.get("last-modified")!;
  assert.equal((await get("/catalog.json", { "If-Modified-Since": lastModified })).status, 304);
  const later = new Date(Date.parse(lastModified) + 3600_000).toUTCString();
  assert.equal((await get("/catalog.json", { "If-Modified-Since": later })).status, 304);
  const earlier = new Date(Date.parse(lastModified) - 3600_000).toUTCString();
  assert.equal((await get("/catalog.json", { "If-Modified-Since": earlier })).status, 200);
  // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
  const both = await get("/catalog.json", { "If-None-Match": '"nope"', "If-Modified-Since": lastModified });
  assert.equal(both.status, 200);
  // A route reply large enough to compress (the OpenAPI document): its coded tag revalidates it.
  const api = await get("/openapi.json", { "Accept-Encoding": "gzip" });
  assert.equal(api.headers.get("content-encoding"), "gzip");
  assert.equal(api.headers.get("vary"), "Accept-Encoding");
  assert.ok(JSON.parse(gunzipSync(api.body).toString()).openapi);
  const apiPlain = await get("/openapi.json");
  assert.notEqual(apiPlain.headers.get("etag"), api.headers.get("etag"));
  assert.ok(gunzipSync(api.body).equals(apiPlain.body));
  const api304 = await get("/openapi.json", { "Accept-Encoding": "gzip", "If-None-Match": api.headers.get("etag")! });
  assert.equal(api304.status, 304);
});

test("Range counts the bytes of the body as sent: coded and identity", async () => {
  const plain = readFileSync(join(dir, "catalog.json"));
  const br = readFileSync(join(dir, "catalog.json.br"));
  const a = await get("/catalog.json", { "Accept-Encoding": "br", Range: "bytes=5-24" });
  assert.equal(a.status, 206);
  assert.equal(a.headers.get("content-encoding"), "br");
  assert.equal(a.headers.get("content-range"), `bytes 5-24/${br.length}`);
  assert.ok(a.body.equals(br.subarray(5, 25)));
  const b = await get("/catalog.json", { "Accept-Encoding": "br", Range: "bytes=-9" });
  assert.ok(b.body.equals(br.subarray(br.length - 9)));
  const c = await get("/catalog.json", { Range: "bytes=5-24" });
  assert.equal(c.headers.get("content-encoding"), null);
  assert.equal(c.headers.get("content-range"), `bytes 5-24/${plain.length}`);
  assert.ok(c.body.equals(plain.subarray(5, 25)));
  const past = await get("/catalog.json", { "Accept-Encoding": "br", Range: `bytes=${br.length}-` });
  assert.equal(past.status, 416);
  assert.equal(past.headers.get("content-range"), `bytes */${br.length}`);
  assert.equal(past.headers.get("content-encoding"), null);
  // If-Range naming the identity tag does not select a range of the brotli body.
  const idTag = c.headers.get("etag")!;
  const mixed = await get("/catalog.json", { "Accept-Encoding": "br", Range: "bytes=0-9", "If-Range": idTag });
  assert.equal(mixed.status, 200);
  assert.ok(mixed.body.equals(br));
});

test("warm caches: a planted symlink or a swapped directory serves nothing from outside the build", async () => {
  const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  const layer = catalog.layers[0];
  const lead = layer.runs[0].leads[0];
  const tileDir = join(dir, lead.tiles.replace("/{z}/{x}/{y}.png", "").slice(1), "1", "0");
  const tile = (y: number) => `${lead.tiles.replace("{z}/{x}/{y}", `1/0/${y}`)}`;
  const route = (y: number) =>
    `/api/forecast/tile/1/0/${y}?layer=${layer.id}&run=${layer.runs[0].token}&lead=${lead.hours}`;
  const legendFile = join(dir, layer.legend.json.slice(1));
  // Warm every cache: the static path, the tile route, the documents and their twins.
  const before: Record<string, Buffer> = {};
  for (const path of [tile(0), route(0), layer.legend.json, "/catalog.json", "/api/forecast/catalog"]) {
    for (const accept of ["br", "gzip", "identity"]) {
      const r = await get(path, { "Accept-Encoding": accept });
      assert.equal(r.status, 200, path);
      before[`${path} ${accept}`] = r.body;
    }
  }
  // Outside: files of the very names asked for, holding the sentinel.
  const evil = join(outside, "evil");
  mkdirSync(evil);
  const png = Buffer.concat([Buffer.from("\x89PNG"), Buffer.from(SENTINEL)]);
  for (const y of [0, 1]) writeFileSync(join(evil, `${y}.png`), png);
  writeFileSync(join(outside, "legend.json"), JSON.stringify({ SENTINEL }));
  // Swap the tile directory for a symlink out; plant symlinks over the legend and its twins.
  renameSync(tileDir, join(outside, "moved-tiles"));
  symlinkSync(evil, tileDir);
  for (const suffix of ["", ".br", ".gz"]) {
    rmSync(legendFile + suffix, { force: true });
    symlinkSync(join(outside, "legend.json"), legendFile + suffix);
  }
  symlinkSync(join(outside, "legend.json"), join(dir, "planted.json"));
  const leaks = (r: Got) => r.body.includes(SENTINEL) || r.body.includes(Buffer.from(SENTINEL).toString("base64"));
  // What was cached is what the build held; what was not is opened, confined, and refused.
  for (const path of [tile(0), route(0), layer.legend.json, "/catalog.json", "/api/forecast/catalog"]) {
    for (const accept of ["br", "gzip", "identity"]) {
      const r = await get(path, { "Accept-Encoding": accept });
      assert.equal(r.status, 200, path);
      assert.ok(r.body.equals(before[`${path} ${accept}`]), `${path} ${accept}: the build's bytes`);
    }
  }
  for (const path of [tile(1), route(1), "/planted.json", `${layer.legend.json}.br`]) {
    const r = await get(path, { "Accept-Encoding": "gzip, br" });
    assert.ok(!leaks(r), `${path} leaks (${r.status})`);
    if (!path.startsWith("/api/")) assert.equal(r.status, 404, path);
  }
});
