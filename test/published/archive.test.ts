// Archive builds checked with the pmtiles package's own reader: every tile of a z/x/y build of the
// same store is in the archive with the same bytes, nothing else is, identical tiles are stored
// once, directories too large for the root spill into leaves, and the server answers tiles, static
// tile paths and HTTP Range reads of the archives (what a CDN-hosted viewer does) from them.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { after, before, test } from "node:test";
import { FetchSource, PMTiles, tileIdToZxy, zxyToTileId } from "pmtiles";
import { publishShards } from "../../src/pipeline/finalize.ts";
import { archiveTile } from "../../src/published/archive-reader.ts";
import type { Catalog } from "../../src/published/layout.ts";
import {
  buildDirectories,
  encodeHeader,
  encodeMetadata,
  HEADER_BYTES,
  layoutTiles,
  ROOT_LIMIT,
} from "../../src/published/pmtiles-writer.ts";
import { cleanup, get, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let store: string;
let work: string;
let zxyDir: string;
let srv: TestServer;

const md5 = (b: Uint8Array): string => createHash("md5").update(b).digest("hex");

before(async () => {
  store = await sampleStore();
  work = tempDir();
  const opts = { store, maxZoom: 4, groups: ["global", "alps"], vars: ["t2m", "tp_1h"] };
  const z = await build({ ...opts, out: join(work, "zxy") });
  zxyDir = z.dir;
  srv = await testServer(store);
  await build({ ...opts, out: srv.running.ctx.settings.out, tiles: "pmtiles" });
});
after(async () => {
  await srv.close();
  cleanup(store, work);
});

function fileSource(path: string) {
  return {
    getKey: () => path,
    getBytes: async (offset: number, length: number) => {
      const all = readFileSync(path);
      const part = all.subarray(offset, offset + length);
      return { data: part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength) as ArrayBuffer };
    },
  };
}

test("every z/x/y tile is in the lead's archive with the same bytes; identical tiles stored once", async () => {
  const catalog: Catalog & { tile_format?: string } = JSON.parse(
    readFileSync(join(srv.running.ctx.settings.out, "current", "catalog.json"), "utf8"),
  );
  assert.equal(catalog.tile_format, "pmtiles");
  let leads = 0;
  for (const layer of catalog.layers)
    for (const run of layer.runs)
      for (const lead of run.leads) {
        leads++;
        const folder = join(zxyDir, lead.tiles.slice(1).replace("/{z}/{x}/{y}.png", ""));
        const archive = join(srv.running.ctx.settings.out, "current", (lead as { archive?: string }).archive!);
        const p = new PMTiles(fileSource(archive));
        const h = await p.getHeader();
        // Archives hold the 256 px tiles; the folder build's 512 px @2x tiles have no place in them.
        const files = readdirSync(folder, { recursive: true, withFileTypes: true }).filter(
          (d) => d.isFile() && !d.name.endsWith("@2x.png"),
        );
        const contents = new Set<string>();
        for (const f of files) {
          const [z, x, y] = relative(folder, join(f.parentPath, f.name)).replace(".png", "").split("/").map(Number);
          const want = readFileSync(join(f.parentPath, f.name));
          contents.add(md5(want));
          const got = await p.getZxy(z, x, y);
          assert.ok(got, `${lead.tiles} ${z}/${x}/${y} missing from the archive`);
          assert.ok(Buffer.from(got.data).equals(want), `${z}/${x}/${y} differs`);
        }
        assert.equal(h.specVersion, 3);
        assert.equal(h.clustered, true);
        assert.equal(h.tileType, 2);
        assert.equal(h.maxZoom, 4);
        assert.equal(h.numAddressedTiles, files.length, "one addressed tile per z/x/y file");
        assert.equal(h.numTileContents, contents.size, "each distinct tile stored once");
        assert.ok(h.numTileEntries <= files.length);
        // Tiles the folder does not have (outside a regional patch) are not in the archive either.
        const have = new Set(files.map((f) => relative(folder, join(f.parentPath, f.name))));
        for (let y = 0; y < 16; y++)
          if (!have.has(`4/8/${y}.png`))
            assert.equal(await p.getZxy(4, 8, y), undefined, `4/8/${y} is not in the folder`);
      }
  assert.ok(leads > 4);
});

test("directories too large for the first 16 KiB go to leaves the reader follows", async () => {
  // Every tile of z0..8 with its own content: ~87k entries, far past what the root can hold.
  const tiles = [];
  let seed = 12345;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  for (let id = 0; id < zxyToTileId(9, 0, 0); id++)
    tiles.push({ tileId: id, key: String(id), length: 8 + (next() % 4000) });
  const layout = layoutTiles(tiles);
  const { root, leaves } = buildDirectories(layout.entries);
  assert.ok(leaves.length > 0 && HEADER_BYTES + root.length <= ROOT_LIMIT);
  const metadata = encodeMetadata({ name: "t" });
  const header = encodeHeader({
    rootLength: root.length,
    metadataLength: metadata.length,
    leavesLength: leaves.length,
    dataLength: layout.dataLength,
    addressed: tiles.length,
    entries: layout.entries.length,
    contents: layout.contents.length,
    minZoom: 0,
    maxZoom: 8,
    bounds: [-180, -85, 180, 85],
  });
  const data = Buffer.alloc(layout.dataLength);
  for (const e of layout.entries) data.writeDoubleLE(e.tileId, e.offset);
  const path = join(work, "leaves.pmtiles");
  writeFileSync(path, Buffer.concat([header, root, metadata, leaves, data]));
  for (const id of [0, 1, 4242, 30000, tiles.length - 1]) {
    const [z, x, y] = tileIdToZxy(id);
    const got = await archiveTile(path, z, x, y);
    assert.equal(got?.readDoubleLE(0), id, `tile ${id} (${z}/${x}/${y})`);
  }
  assert.equal(await archiveTile(path, 9, 0, 0), undefined);
});

test("the server answers the tile route and static tile paths from archives, and Range reads of them", async () => {
  const catalog = (await get(`${srv.url}/api/forecast/catalog`)).json();
  const lead = catalog.layers.find((l: { id: string }) => l.id === "global.t2m").runs[0].leads[0];
  const want = readFileSync(join(zxyDir, lead.tiles.replace("{z}/{x}/{y}", "3/4/2")));
  const viaRoute = await get(`${srv.url}${lead.route.replace("{z}/{x}/{y}", "3/4/2")}`);
  assert.equal(viaRoute.status, 200);
  assert.ok(viaRoute.body.equals(want));
  const viaPath = await get(`${srv.url}${lead.tiles.replace("{z}/{x}/{y}", "3/4/2")}`);
  assert.equal(viaPath.status, 200);
  assert.equal(viaPath.headers.get("content-type"), "image/png");
  assert.equal(viaPath.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.ok(viaPath.body.equals(want));
  const etag = viaPath.headers.get("etag")!;
  assert.equal(
    (await get(`${srv.url}${lead.tiles.replace("{z}/{x}/{y}", "3/4/2")}`, { "If-None-Match": etag })).status,
    304,
  );
  assert.equal((await get(`${srv.url}${lead.tiles.replace("{z}/{x}/{y}", "9/4/2")}`)).status, 404);

  // What a viewer on a CDN copy does: the pmtiles reader over HTTP Range requests.
  const part = await get(`${srv.url}${lead.archive}`, { Range: "bytes=0-126" });
  assert.equal(part.status, 206);
  assert.equal(part.body.subarray(0, 7).toString(), "PMTiles");
  const remote = new PMTiles(new FetchSource(`${srv.url}${lead.archive}`));
  const got = await remote.getZxy(3, 4, 2);
  assert.ok(got && Buffer.from(got.data).equals(want));

  // A lead the catalog lists whose archive is gone: a loud 500 naming no path, never a blank tile.
  const other = catalog.layers.find((l: { id: string }) => l.id === "alps.t2m").runs[0].leads[0];
  const file = join(srv.running.ctx.settings.out, "current", other.archive);
  renameSync(file, `${file}.away`);
  try {
    const r = await get(`${srv.url}${other.route.replace("{z}/{x}/{y}", "3/4/2")}`);
    assert.equal(r.status, 500);
    assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
    assert.ok(!r.body.toString().includes(srv.dir));
  } finally {
    renameSync(`${file}.away`, file);
  }
  // An archive that is a symlink out of the build is no archive: not read by either path.
  const third = catalog.layers.find((l: { id: string }) => l.id === "alps.tp_1h").runs[0].leads[0];
  const inBuild = join(srv.running.ctx.settings.out, "current", third.archive);
  const outside = join(work, "outside.pmtiles");
  renameSync(inBuild, outside);
  symlinkSync(outside, inBuild);
  try {
    assert.equal((await get(`${srv.url}${third.tiles.replace("{z}/{x}/{y}", "3/4/2")}`)).status, 404);
    assert.equal((await get(`${srv.url}${third.route.replace("{z}/{x}/{y}", "3/4/2")}`)).status, 500);
  } finally {
    unlinkSync(inBuild);
    renameSync(outside, inBuild);
  }
  assert.equal((await get(`${srv.url}${third.tiles.replace("{z}/{x}/{y}", "3/4/2")}`)).status, 200);
});

test("sharded archive builds assemble at publish; a rebuild reuses archives by hard link", async () => {
  const out = join(work, "sharded");
  const opts = { store, out, maxZoom: 3, groups: ["global", "alps"], vars: ["t2m"], tiles: "pmtiles" as const };
  for (const index of [1, 2]) await build({ ...opts, shard: { index, count: 2 }, buildId: "s" });
  const partial = join(out, "builds", "s.partial");
  const parts = readdirSync(partial, { recursive: true }).filter((f) => String(f).includes(".part-"));
  assert.ok(parts.length > 0, "shards leave parts for publish");
  const published = await publishShards({ out, buildId: "s", webDir: null });
  assert.equal(published.output.format, "pmtiles");
  const files = readdirSync(published.dir, { recursive: true }).map(String);
  assert.deepEqual(
    files.filter((f) => f.includes(".part-")),
    [],
    "no parts left",
  );
  const archives = files.filter((f) => f.endsWith(".pmtiles"));
  assert.equal(archives.length, published.totals.entries);
  const whole = await build({ ...opts, out: join(work, "whole"), reuse: false });
  for (const a of archives) {
    const p = new PMTiles(fileSource(join(published.dir, a)));
    const q = new PMTiles(fileSource(join(whole.dir, a)));
    const [hp, hq] = [await p.getHeader(), await q.getHeader()];
    assert.equal(hp.numAddressedTiles, hq.numAddressedTiles, a);
    assert.equal(hp.numTileContents, hq.numTileContents, a);
    const t = await p.getZxy(3, 4, 2);
    const u = await q.getZxy(3, 4, 2);
    assert.equal(Boolean(t), Boolean(u), a);
    if (t && u) assert.ok(Buffer.from(t.data).equals(Buffer.from(u.data)), a);
  }

  const again = await build({ ...opts, buildId: "again" });
  assert.equal(again.totals.reused, again.totals.entries, "every lead reused");
  for (const a of archives)
    assert.equal(statSync(join(again.dir, a)).ino, statSync(join(published.dir, a)).ino, `${a} is a hard link`);
});
