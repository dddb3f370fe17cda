// The per-build file cache on its own: it never holds more than its byte budget (oldest out first,
// and a file evicted is read again, the same bytes), files above the size limit are left to be
// streamed, a document without a build-time twin is compressed once when loaded, and concurrent
// loads of one path share one read.
import assert from "node:assert/strict";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { STATIC_CACHE_FILE_MAX, StaticCache } from "../../src/published/static-cache.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const dir = realpathSync(tempDir());
after(() => cleanup(dir));

test("a byte budget, oldest out first; large files streamed; twins made on load; one read per path", async () => {
  const files = [0, 1, 2, 3, 4].map((i) => {
    const bytes = Buffer.alloc(1000, i + 1);
    writeFileSync(join(dir, `${i}.png`), bytes);
    return bytes;
  });
  const cache = new StaticCache(dir, undefined, 3000);
  for (let i = 0; i < files.length; i++) {
    const got = await cache.load(`${i}.png`, [`${i}.png`]);
    assert.ok(got && got !== "large");
    assert.ok(got.identity.bytes.equals(files[i]));
    assert.ok(cache.bytes <= cache.budget, `${cache.bytes} B held of ${cache.budget}`);
  }
  assert.equal(cache.peek("0.png"), undefined, "the oldest left first");
  assert.ok(cache.peek("4.png"), "the newest stays");
  const again = await cache.load("0.png", ["0.png"]);
  assert.ok(again && again !== "large" && again.identity.bytes.equals(files[0]), "read again, the same bytes");

  writeFileSync(join(dir, "big.png"), Buffer.alloc(STATIC_CACHE_FILE_MAX + 1));
  const roomy = new StaticCache(dir);
  assert.equal(await roomy.load("big.png", ["big.png"]), "large");
  assert.equal(roomy.bytes, 0);

  const doc = JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ i, name: `row ${i}` })) });
  writeFileSync(join(dir, "doc.json"), doc);
  const [a, b] = await Promise.all([roomy.load("doc.json", ["doc.json"]), roomy.load("doc.json", ["doc.json"])]);
  assert.equal(a, b, "one read shared");
  assert.ok(a && a !== "large");
  assert.deepEqual(a.codings, ["br", "gzip"]);
  assert.equal(brotliDecompressSync(a.coded.br!.bytes).toString(), doc);
  assert.equal(gunzipSync(a.coded.gzip!.bytes).toString(), doc);
  assert.ok(a.varies);
  assert.equal(await roomy.load("missing.json", ["missing.json"]), undefined);
});
