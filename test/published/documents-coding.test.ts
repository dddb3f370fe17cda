// The live documents the server answers for a build, compressed: the WMTS capabilities the build
// writes (with its br and gzip twins) answered by Accept-Encoding with Vary and an ETag per coding,
// exactly the build's bytes when the build was written for the server's base URL; and, for a base
// URL the build was not written for (behind a trusted proxy), the catalog and the capabilities made
// for that base, compressed, with Vary naming the proxy headers and their own ETags per coding.
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { cleanup, type Got, rawGet, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const PUBLIC_URL = "https://maps.example.org";
const WMTS = "wmts/1.0.0/WMTSCapabilities.xml";
const FORWARDED_VARY = "X-Forwarded-Host, X-Forwarded-Proto, Host, Accept-Encoding";

let store: string;
/** public_url set, and the build written for it. */
let srv: TestServer;
/** The same build behind a trusted proxy, no public_url: the base comes from the request. */
let proxied: TestServer;
let dir: string;

before(async () => {
  store = await sampleStore();
  srv = await testServer(store, { public_url: PUBLIC_URL });
  const out = srv.running.ctx.settings.out;
  await build({ store, out, maxZoom: 1, groups: ["global"], publicUrl: PUBLIC_URL });
  dir = realpathSync(join(out, "current"));
  proxied = await testServer(store, { out, trust_proxy: 1 });
});
after(async () => {
  await srv?.close();
  await proxied?.close();
  cleanup(store);
});

const decode = (r: Got): Buffer => {
  const coding = r.headers.get("content-encoding");
  return coding === "br" ? brotliDecompressSync(r.body) : coding === "gzip" ? gunzipSync(r.body) : r.body;
};

test("the WMTS capabilities go out as the build's br / gzip twins, by Accept-Encoding, with Vary and an ETag per coding", async () => {
  const xml = readFileSync(join(dir, WMTS));
  assert.ok(xml.includes(`${PUBLIC_URL}/api/forecast/tile/`), "the build wrote its document for public_url");
  for (const suffix of [".br", ".gz"]) assert.ok(existsSync(join(dir, WMTS + suffix)), `twin ${suffix} written`);
  assert.ok(brotliDecompressSync(readFileSync(join(dir, `${WMTS}.br`))).equals(xml));
  assert.ok(gunzipSync(readFileSync(join(dir, `${WMTS}.gz`))).equals(xml));
  const tags = new Map<string, string>();
  for (const [accept, coding, file] of [
    ["gzip, br", "br", `${WMTS}.br`],
    ["br;q=0.5, gzip", "gzip", `${WMTS}.gz`],
    ["identity", null, WMTS],
    [undefined, null, WMTS],
  ] as const) {
    const r = await rawGet(srv.url, `/${WMTS}`, accept ? { "Accept-Encoding": accept } : {});
    assert.equal(r.status, 200, String(accept));
    assert.equal(r.headers.get("content-encoding"), coding, String(accept));
    assert.equal(r.headers.get("vary"), "Accept-Encoding", String(accept));
    assert.equal(r.headers.get("content-type"), "application/xml; charset=utf-8");
    assert.equal(Number(r.headers.get("content-length")), r.body.length);
    // The build's own bytes: the twin written at build time, not a compression made per request.
    assert.ok(r.body.equals(readFileSync(join(dir, file))), `${accept}: the build's ${file}`);
    tags.set(coding ?? "identity", r.headers.get("etag")!);
  }
  assert.equal(new Set(tags.values()).size, 3, "br, gzip and identity each have their own ETag");
  // Each coding's tag revalidates that coding only.
  const br304 = await rawGet(srv.url, `/${WMTS}`, { "Accept-Encoding": "br", "If-None-Match": tags.get("br")! });
  assert.equal(br304.status, 304);
  assert.equal(br304.headers.get("vary"), "Accept-Encoding");
  assert.equal(br304.body.length, 0);
  const crossed = await rawGet(srv.url, `/${WMTS}`, { "Accept-Encoding": "br", "If-None-Match": tags.get("gzip")! });
  assert.equal(crossed.status, 200);
  // Range over the coded body.
  const br = readFileSync(join(dir, `${WMTS}.br`));
  const part = await rawGet(srv.url, `/${WMTS}`, { "Accept-Encoding": "br", Range: "bytes=3-12" });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get("content-range"), `bytes 3-12/${br.length}`);
  assert.ok(part.body.equals(br.subarray(3, 13)));
  // The catalog route likewise answers the build's twin.
  const cat = await rawGet(srv.url, "/api/forecast/catalog", { "Accept-Encoding": "gzip" });
  assert.ok(cat.body.equals(readFileSync(join(dir, "catalog.json.gz"))));
});

test("a base URL the build was not written for: catalog and WMTS made for it, compressed, Vary on the proxy headers", async () => {
  const at =
    (host: string, accept?: string, extra: Record<string, string> = {}) =>
    (path: string) =>
      rawGet(proxied.url, path, {
        "X-Forwarded-Host": host,
        ...(accept ? { "Accept-Encoding": accept } : {}),
        ...extra,
      });
  for (const path of ["/api/forecast/catalog", `/${WMTS}`]) {
    const br = await at("a.example", "br, gzip")(path);
    const gz = await at("a.example", "gzip")(path);
    const plain = await at("a.example")(path);
    for (const [r, coding] of [
      [br, "br"],
      [gz, "gzip"],
      [plain, null],
    ] as const) {
      assert.equal(r.status, 200, path);
      assert.equal(r.headers.get("content-encoding"), coding, path);
      assert.equal(r.headers.get("vary"), FORWARDED_VARY, path);
      assert.ok(decode(r).equals(plain.body), `${path} ${coding}: the same document`);
    }
    assert.ok(
      br.body.length * 3 < plain.body.length,
      `${path}: compressed (${br.body.length} of ${plain.body.length} B)`,
    );
    const text = plain.body.toString();
    assert.ok(text.includes("http://a.example"), `${path} written for the forwarded host`);
    assert.ok(!text.includes(PUBLIC_URL), `${path} holds no other base`);
    const tags = [br, gz, plain].map((r) => r.headers.get("etag"));
    assert.equal(new Set(tags).size, 3, `${path}: an ETag per coding`);
    const again = await at("a.example", "br", { "If-None-Match": tags[0]! })(path);
    assert.equal(again.status, 304, path);
    assert.equal(again.headers.get("vary"), FORWARDED_VARY);
    // Another host gets its own document and tags, and one host's tag does not revalidate it.
    const other = await at("b.example", "br", { "If-None-Match": tags[0]! })(path);
    assert.equal(other.status, 200, path);
    assert.ok(decode(other).toString().includes("http://b.example"));
    assert.notEqual(other.headers.get("etag"), tags[0]);
  }
  // Reached at the base the build was written for: the build's own file, still varying on the
  // proxy headers (another host would get another document).
  const own = await at("maps.example.org", "br", { "X-Forwarded-Proto": "https" })("/api/forecast/catalog");
  assert.ok(own.body.equals(readFileSync(join(dir, "catalog.json.br"))));
  assert.equal(own.headers.get("vary"), FORWARDED_VARY);
});
