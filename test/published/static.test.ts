// Files of the published build served by direct lookup: content types, ETag/304, Range, HEAD;
// symlinks inside the build are followed, ones leading out of it (or dangling, or looping) are a
// clean 404, as are dotfiles, the embedding indexes under any spelling, and traversal.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  cleanup,
  type Got,
  get,
  rawGet,
  sampleStore,
  type TestServer,
  tempDir,
  testServer,
} from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let store: string;
let outside: string;
let srv: TestServer;
let dir: string;
const SENTINEL = "outside-the-build-sentinel";

before(async () => {
  store = await sampleStore();
  outside = tempDir();
  writeFileSync(join(outside, "secret.json"), JSON.stringify({ SENTINEL }));
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
  symlinkSync("catalog.json", join(dir, "alias.json"));
  mkdirSync(join(dir, "docs"));
  symlinkSync("../legends", join(dir, "docs", "legends"));
  symlinkSync(join(outside, "secret.json"), join(dir, "escape.json"));
  symlinkSync(outside, join(dir, "escape-dir"));
  symlinkSync("../../../../../../../../etc/passwd", join(dir, "passwd.json"));
  symlinkSync("missing.json", join(dir, "dangling.json"));
  symlinkSync("loop-b.json", join(dir, "loop-a.json"));
  symlinkSync("loop-a.json", join(dir, "loop-b.json"));
  writeFileSync(join(dir, ".hidden.json"), JSON.stringify({ SENTINEL }));
});
after(async () => {
  await srv.close();
  cleanup(store, outside);
});

function notFound(r: Got, what: string): void {
  assert.equal(r.status, 404, `${what}: ${r.status}`);
  assert.match(r.headers.get("content-type") ?? "", /application\/problem\+json/, what);
  const text = r.body.toString();
  assert.ok(!text.includes(SENTINEL) && !text.includes("root:") && !text.includes(dir), `${what} leaks`);
}

test("content types, ETag and 304, HEAD, immutable run tiles", async () => {
  const cat = await get(`${srv.url}/catalog.json`);
  assert.equal(cat.status, 200);
  assert.equal(cat.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(cat.headers.get("cache-control"), "public, max-age=60");
  assert.ok(cat.body.equals(readFileSync(join(dir, "catalog.json"))));
  const etag = cat.headers.get("etag")!;
  assert.match(etag, /^"[\w-]+"$/);
  assert.equal((await get(`${srv.url}/catalog.json`)).headers.get("etag"), etag, "stable");
  const again = await get(`${srv.url}/catalog.json`, { "If-None-Match": `W/"x", ${etag}` });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
  // fetch asks for gzip and br and hands back the decoded body: the identity length is the one to compare.
  const head = await get(`${srv.url}/catalog.json`, { "Accept-Encoding": "identity" }, "HEAD");
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), String(cat.body.length));
  assert.equal(head.body.length, 0);
  const lead = cat.json().layers[0].runs[0].leads[0];
  const tile = await get(`${srv.url}${lead.tiles.replace("{z}/{x}/{y}", "1/0/1")}`);
  assert.equal(tile.status, 200);
  assert.equal(tile.headers.get("content-type"), "image/png");
  assert.equal(tile.headers.get("cache-control"), "public, max-age=31536000, immutable");
  const index = await get(`${srv.url}/`);
  assert.equal(index.status, 200);
  assert.equal(index.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal((await get(`${srv.url}/viewer.js`)).headers.get("content-type"), "text/javascript; charset=utf-8");
});

test("Range: a slice, a suffix, an open end; unsatisfiable is 416; If-Range with another ETag sends all", async () => {
  const whole = readFileSync(join(dir, "catalog.json"));
  const a = await get(`${srv.url}/catalog.json`, { Range: "bytes=10-19" });
  assert.equal(a.status, 206);
  assert.equal(a.headers.get("content-range"), `bytes 10-19/${whole.length}`);
  assert.ok(a.body.equals(whole.subarray(10, 20)));
  const b = await get(`${srv.url}/catalog.json`, { Range: "bytes=-7" });
  assert.ok(b.body.equals(whole.subarray(whole.length - 7)));
  const c = await get(`${srv.url}/catalog.json`, { Range: `bytes=${whole.length - 3}-` });
  assert.ok(c.body.equals(whole.subarray(whole.length - 3)));
  const d = await get(`${srv.url}/catalog.json`, { Range: `bytes=${whole.length}-` });
  assert.equal(d.status, 416);
  assert.equal(d.headers.get("content-range"), `bytes */${whole.length}`);
  const e = await get(`${srv.url}/catalog.json`, { Range: "bytes=0-3", "If-Range": '"stale"' });
  assert.equal(e.status, 200);
  assert.equal(e.body.length, whole.length);
});

test("symlinks: inside the build served, out of it / dangling / looping a clean 404", async () => {
  const alias = await get(`${srv.url}/alias.json`);
  assert.equal(alias.status, 200);
  assert.ok(alias.body.equals(readFileSync(join(dir, "catalog.json"))));
  const legend = await get(`${srv.url}/docs/legends/global.t2m.json`);
  assert.equal(legend.status, 200);
  for (const p of ["/escape.json", "/escape-dir/secret.json", "/passwd.json", "/dangling.json", "/loop-a.json"])
    notFound(await get(`${srv.url}${p}`), p);
});

test("dotfiles, embedding indexes under any spelling, traversal: 404 problem+json, nothing leaks", async () => {
  assert.ok(existsSync(join(dir, "embeddings", "items.json")), "the build has the index these must not reach");
  for (const p of [
    "/.hidden.json",
    "/%2ehidden.json",
    "/embeddings/items.json",
    "/%65mbeddings/items.json",
    "/e%6dbeddings/items.json",
    "/EMBEDDINGS/items.json",
    "//embeddings/items.json",
    "/tiles/../embeddings/items.json",
    "/tiles/%2e%2e/embeddings/items.json",
    "/tiles%2f..%2f..%2f..%2fsecret.json",
    "/legends/..%5c..%5ccatalog.json",
    "/catalog.json%00",
  ]) {
    const r = await rawGet(srv.url, p);
    assert.ok(r.status === 404 || r.status === 400, `${p}: ${r.status}`);
    assert.ok(!r.body.toString().includes(SENTINEL), p);
    assert.ok(!r.body.toString().includes('"items"'), `${p} served the embedding catalogue`);
  }
});
