// The /data Zarr stores as HTTP objects: what real clients depend on (404 for every absent key, 401
// without a key, HEAD, Range, ETag/304, no Content-Encoding), the two views serving the same bytes,
// and a key space that nothing outside it — traversal included — can reach.
import assert from "node:assert/strict";
import { cpSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cleanup, get, rawGet, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { latNorthToSouth, recodedVariants } from "./data-fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
let h: Record<string, string>;
const G = "/data/datasets/forecast~global/zarr";

before(async () => {
  storeDir = await sampleStore();
  recodedVariants(storeDir);
  // The v2 source group stored north to south, so its arrays are passed through (not north-up).
  latNorthToSouth(storeDir, "forecast/europe");
  // A passthrough array (fill NaN = _FillValue NaN) missing one chunk.
  rmSync(join(storeDir, "forecast/global/msl/c/1/0/1/1"));
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
  h = { "X-API-Key": key };
});
after(async () => {
  await srv.close();
  cleanup(storeDir);
});

describe("key space", () => {
  test("absent keys and metadata probes are 404, never 403 or 500", async () => {
    const absent = [
      ".zarray", // a group probed as an array
      "t2m/.zgroup", // an array probed as a group
      "t2m/0.0.0.0/zarr.json",
      "t2m/0.0.0.0/.zarray",
      "nope/.zarray",
      "nope/zarr.json",
      "t2m/2.0.0.0", // outside the chunk grid
      "t2m/0.1.0.0",
      "t2m/c/0/0/0/2",
      "t2m/0.0.0", // wrong number of indices
      "t2m/c/0/0/0",
      "t2m/00.0.0.0", // not how Zarr spells an index
      "t2m/-1.0.0.0",
      "t2m/c/0.0.0.0",
      "msl/1.0.1.1", // in the grid, not in the store
      "msl/c/1/0/1/1",
      "tcc/c/1/0/0/0", // v3 view: an unwritten chunk reads as fill_value
      "zarr.json/.zarray",
      ".zmetadata/x",
    ];
    for (const k of absent) {
      for (const method of ["GET", "HEAD"]) {
        const r = await get(`${srv.url}${G}/${k}`, h, method);
        assert.equal(r.status, 404, `${method} ${k}`);
      }
    }
    assert.equal((await get(`${srv.url}/data/datasets/forecast~nope/zarr/.zmetadata`, h)).status, 404);
    assert.equal((await get(`${srv.url}/data/datasets/forecast~nope/zarr/`, h)).status, 404);
    // Stored names are not published: alps stores u10 as "10u" and publishes it as u10 only.
    assert.equal((await get(`${srv.url}/data/datasets/forecast~alps/zarr/10u/zarr.json`, h)).status, 404);
    assert.equal((await get(`${srv.url}/data/datasets/forecast~alps/zarr/u10/zarr.json`, h)).status, 200);
  });

  test("the fill-value trap: the v2 view serves an unwritten chunk of an integer array filled, not missing", async () => {
    const zarray = (await get(`${srv.url}${G}/tcc/.zarray`, h)).json();
    assert.equal(zarray.fill_value, -32767, "the CF _FillValue marks missing cells in v2");
    const v3 = (await get(`${srv.url}${G}/tcc/zarr.json`, h)).json();
    assert.equal(v3.fill_value, 0);
    assert.equal(v3.attributes._FillValue, -32767);
    const filled = await get(`${srv.url}${G}/tcc/1.0.0.0`, h);
    assert.equal(filled.status, 200);
    // Coordinates: integer time and lead_time (lead 0 is a real 0) have no missing marker in v2.
    for (const c of ["time", "lead_time"])
      assert.equal((await get(`${srv.url}${G}/${c}/.zarray`, h)).json().fill_value, null);
  });

  test("both views serve the stored chunk bytes unchanged when the codec chain allows it", async () => {
    const stored = readFileSync(join(storeDir, "forecast/global/msl/c/0/0/0/1"));
    const v2 = await get(`${srv.url}${G}/msl/0.0.0.1`, h);
    const v3 = await get(`${srv.url}${G}/msl/c/0/0/0/1`, h);
    assert.deepEqual(v2.body, stored);
    assert.deepEqual(v3.body, stored);
    assert.equal(v2.headers.get("content-type"), "application/octet-stream");
    // A v2 source group: .zarray chunk keys map to its own stored keys (europe's latitude was
    // turned north to south in before(); stored south to north it would be re-encoded north-up).
    const europe = readFileSync(join(storeDir, "forecast/europe/t2m/1.0.0.1"));
    assert.deepEqual((await get(`${srv.url}/data/datasets/forecast~europe/zarr/t2m/c/1/0/0/1`, h)).body, europe);
    // Re-encoded arrays: both views serve the same bytes, which are not the stored ones.
    const a = await get(`${srv.url}${G}/u10/1.0.1.0`, h);
    const b = await get(`${srv.url}${G}/u10/c/1/0/1/0`, h);
    assert.equal(a.status, 200);
    assert.deepEqual(a.body, b.body);
    assert.notDeepEqual(a.body, readFileSync(join(storeDir, "forecast/global/u10/c/1/0/1/0")));
  });

  test("metadata: consolidated v2 and v3, CF coordinates, Zarr JSON fill values", async () => {
    const zm = await get(`${srv.url}${G}/.zmetadata`, h);
    assert.equal(zm.status, 200);
    assert.doesNotMatch(zm.body.toString(), /[^"]NaN/, 'NaN is always the string "NaN"');
    const { zarr_consolidated_format, metadata } = zm.json();
    assert.equal(zarr_consolidated_format, 1);
    assert.equal(metadata["t2m/.zarray"].fill_value, "NaN");
    assert.deepEqual(metadata["t2m/.zattrs"]._ARRAY_DIMENSIONS, ["time", "lead_time", "lat", "lon"]);
    assert.deepEqual(metadata["t/.zattrs"]._ARRAY_DIMENSIONS, ["time", "lead_time", "level", "lat", "lon"]);
    assert.deepEqual(metadata["msl/.zarray"].compressor, { id: "zstd", level: 3 }, "no v3-only checksum param");
    assert.equal(metadata["tcc/.zattrs"].scale_factor, 1 / 65536);
    assert.equal(metadata["tcc/.zattrs"].add_offset, 0.5);
    assert.equal(metadata["time/.zattrs"].units, "hours since 1970-01-01 00:00:00");
    assert.equal(metadata["time/.zattrs"].calendar, "proleptic_gregorian");
    assert.equal(metadata["lead_time/.zattrs"].units, "hours");
    for (const [k, v] of Object.entries(metadata)) {
      if (k.endsWith("/.zarray") || k.endsWith("/.zattrs"))
        assert.deepEqual((await get(`${srv.url}${G}/${k}`, h)).json(), v, k);
    }
    const root = (await get(`${srv.url}${G}/zarr.json`, h)).json();
    assert.equal(root.node_type, "group");
    assert.equal(root.consolidated_metadata.kind, "inline");
    const t2m = root.consolidated_metadata.metadata.t2m;
    assert.deepEqual(t2m.dimension_names, ["time", "lead_time", "lat", "lon"]);
    assert.deepEqual(t2m.chunk_grid.configuration.chunk_shape, [1, 7, 90, 90], "the inner chunk of the stored shard");
    assert.deepEqual(
      t2m.codecs.map((c: { name: string }) => c.name),
      ["bytes", "zstd"],
    );
    assert.deepEqual((await get(`${srv.url}${G}/t2m/zarr.json`, h)).json(), t2m);
  });

  test("the listing links each store root; the root answers the dataset summary", async () => {
    const { datasets } = (await get(`${srv.url}/data/datasets`, h)).json();
    for (const d of datasets) {
      const r = await get(`${srv.url}${d.zarr}`, h);
      assert.equal(r.status, 200);
      assert.equal(r.json().id, d.id);
    }
  });
});

describe("HTTP semantics", () => {
  const chunk = `${G}/msl/0.0.0.1`;

  test("no key, or a wrong one, is 401 on every key", async () => {
    for (const path of [chunk, `${G}/.zmetadata`, `${G}/zarr.json`, `${G}/nope`, `${G}/`, "/data/datasets"]) {
      for (const method of ["GET", "HEAD"]) {
        assert.equal((await get(`${srv.url}${path}`, {}, method)).status, 401, `${method} ${path}`);
      }
      const wrong = await get(`${srv.url}${path}`, {
        "X-API-Key": key.slice(0, -2) + (key.endsWith("AA") ? "BB" : "AA"),
      });
      assert.equal(wrong.status, 401, path);
      assert.match(wrong.headers.get("www-authenticate") ?? "", /X-API-Key/);
    }
  });

  test("HEAD answers GET's headers without a body", async () => {
    const g = await get(`${srv.url}${chunk}`, h);
    const hd = await get(`${srv.url}${chunk}`, h, "HEAD");
    assert.equal(hd.status, 200);
    assert.equal(hd.body.length, 0);
    for (const name of ["content-length", "content-type", "etag", "accept-ranges", "cache-control"]) {
      assert.equal(hd.headers.get(name), g.headers.get(name), name);
    }
    assert.equal(Number(hd.headers.get("content-length")), g.body.length);
  });

  test("Range: bytes=a-b, a- and -n give 206 with Content-Range; beyond the end 416", async () => {
    const full = (await get(`${srv.url}${chunk}`, h)).body;
    const n = full.length;
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      ["bytes=100-", 100, n - 1],
      ["bytes=-50", n - 50, n - 1],
      [`bytes=10-${n + 500}`, 10, n - 1],
    ];
    for (const [range, a, b] of cases) {
      const r = await get(`${srv.url}${chunk}`, { ...h, Range: range });
      assert.equal(r.status, 206, range);
      assert.equal(r.headers.get("content-range"), `bytes ${a}-${b}/${n}`, range);
      assert.equal(Number(r.headers.get("content-length")), b - a + 1, range);
      assert.deepEqual(r.body, full.subarray(a, b + 1), range);
    }
    for (const range of [`bytes=${n}-`, `bytes=${n + 10}-${n + 20}`, "bytes=-0"]) {
      const r = await get(`${srv.url}${chunk}`, { ...h, Range: range });
      assert.equal(r.status, 416, range);
      assert.equal(r.headers.get("content-range"), `bytes */${n}`, range);
    }
    // Metadata documents are ranged the same way.
    const zm = (await get(`${srv.url}${G}/.zmetadata`, h)).body;
    const part = await get(`${srv.url}${G}/.zmetadata`, { ...h, Range: "bytes=0-9" });
    assert.equal(part.status, 206);
    assert.deepEqual(part.body, zm.subarray(0, 10));
  });

  test("ETag + If-None-Match gives 304; chunk bytes are never content-encoded", async () => {
    const r = await get(`${srv.url}${chunk}`, { ...h, "Accept-Encoding": "gzip, br, zstd" });
    assert.equal(r.headers.get("content-encoding"), null);
    const etag = r.headers.get("etag")!;
    assert.match(etag, /^"[\w-]+"$/);
    const again = await get(`${srv.url}${chunk}`, { ...h, "If-None-Match": etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.get("etag"), etag);
    const other = await get(`${srv.url}${G}/msl/0.0.0.0`, { ...h, "If-None-Match": etag });
    assert.equal(other.status, 200);
    assert.notEqual(other.headers.get("etag"), etag);
  });
});

test("a burst of chunk requests beyond the heavy-request cap is served, not refused", async () => {
  // zarr-python 2 would turn a refused chunk into fill values without a word.
  const capped = await testServer(storeDir, { max_heavy_requests: 1 });
  try {
    const k = await capped.key(["weather"]);
    const keys = [];
    for (let t = 0; t < 2; t++)
      for (let y = 0; y < 2; y++)
        for (let x = 0; x < 2; x++) keys.push(`msl/${t}.0.${y}.${x}`, `u10/c/${t}/0/${y}/${x}`);
    const got = await Promise.all(keys.map((c) => get(`${capped.url}${G}/${c}`, { "X-API-Key": k })));
    assert.deepEqual(
      got.map((r) => r.status),
      keys.map((c) => (c === "msl/1.0.1.1" ? 404 : 200)),
    );
  } finally {
    await capped.close();
  }
});

test("a chunk whose array vanished from the store is 503, not a silent 404", async () => {
  const copy = join(tempDir(), "store");
  cpSync(storeDir, copy, { recursive: true });
  const s = await testServer(copy);
  try {
    const k = { "X-API-Key": await s.key(["weather"]) };
    assert.equal((await get(`${s.url}${G}/msl/0.0.0.0`, k)).status, 200);
    rmSync(join(copy, "forecast/global/msl"), { recursive: true });
    for (const c of ["msl/0.0.0.0", "msl/c/0/0/0/0"]) assert.equal((await get(`${s.url}${G}/${c}`, k)).status, 503, c);
  } finally {
    await s.close();
    cleanup(dirname(copy));
  }
});

describe("traversal", () => {
  test("encoded and raw traversal never leaves the key space nor reaches the store", async () => {
    await get(`${srv.url}${G}/.zmetadata`, h); // warm: the dataset is built, ids are listed
    await get(`${srv.url}/data/datasets/forecast~alps/zarr/.zmetadata`, h);
    srv.running.ctx.store.backend.reset();
    const attempts = [
      `${G}/..%2f..%2f..%2fzarr.json`,
      `${G}/%2e%2e/%2e%2e/zarr.json`,
      `${G}/%2e%2e%2f%2e%2e%2fzarr.json`,
      `${G}/%252e%252e/%252e%252e/zarr.json`,
      `${G}/..%252f..%252fzarr.json`,
      `${G}/../../../../etc/passwd`,
      `${G}/t2m/../../alps/zarr.json`,
      `${G}/t2m/c/0/0/0/0/../../../../../zarr.json`,
      `${G}/..\\..\\zarr.json`,
      `${G}/t2m%00/.zarray`,
      `${G}//etc/passwd`,
      `${G}/%2fetc%2fpasswd`,
      `${G}/t2m/%2e%2e/msl/c/0/0/0/0`,
      "/data/datasets/forecast~alps/zarr/10u/c/0/0/0/0",
      "/data/datasets/forecast%2f..%2f..%2fforecast~global/zarr/.zmetadata",
      "/data/datasets/..%2fforecast~global/zarr/zarr.json",
      "/data/datasets/forecast~..~..~forecast~global/zarr/zarr.json",
      "/data/datasets/%2e%2e/zarr/zarr.json",
    ];
    for (const path of attempts) {
      const r = await rawGet(srv.url, path, h);
      assert.ok(r.status === 404 || r.status === 400, `${path} → ${r.status}`);
      assert.equal(r.headers.get("content-type"), "application/problem+json", path);
    }
    assert.deepEqual(srv.running.ctx.store.backend.keysRead(), [], "no attempt read anything from the store");
    // The same connection-level client reaches real keys (the attempts above fail for their paths only).
    assert.equal((await rawGet(srv.url, `${G}/t2m/.zarray`, h)).status, 200);
  });
});
