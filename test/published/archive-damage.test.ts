// Damaged PMTiles archives, made from the project's own writer's output and then mutated: a
// truncated file, a moved tile offset, a huge run length, a tile length of 2^31 and a directory
// bomb. Over real HTTP each one answers 500 problem+json (no path, no stack, no caching), a log
// line names the archive, the server stays up (a good tile follows with 200), and a later read of
// the same archive (static tile path, raw Range read) fails too. Publishing a build that holds any
// of them is refused and leaves the published build in place.
import assert from "node:assert/strict";
import { readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { gunzipSync, gzipSync } from "node:zlib";
import { readVarint, tileIdToZxy } from "pmtiles";
import { tileCount } from "../../src/published/archive-check.ts";
import { archiveTile } from "../../src/published/archive-reader.ts";
import { verifyArchive } from "../../src/published/archive-verify.ts";
import {
  buildDirectories,
  type Entry,
  encodeHeader,
  encodeMetadata,
  layoutTiles,
  serializeDirectory,
} from "../../src/published/pmtiles-writer.ts";
import { cleanup, get, sampleStore, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let store: string;
let work: string;
let srv: TestServer;
let out: string;
const opts = { maxZoom: 3, groups: ["global", "alps"], vars: ["t2m"], tiles: "pmtiles" as const };

interface Lead {
  route: string;
  tiles: string;
  archive: string;
}
let bad: Lead;
let good: Lead;
let archive: string;
let original: Buffer;

before(async () => {
  store = await sampleStore();
  work = tempDir();
  srv = await testServer(store);
  out = srv.running.ctx.settings.out;
  await build({ ...opts, store, out, buildId: "first" });
  const catalog = (await get(`${srv.url}/api/forecast/catalog`)).json();
  const lead = (id: string): Lead => catalog.layers.find((l: { id: string }) => l.id === id).runs[0].leads[0];
  // A regional layer: its archive leaves gaps between tile ids, where a bad run would reach.
  bad = lead("alps.t2m");
  good = lead("global.t2m");
  archive = realpathSync(join(out, "current", bad.archive));
  original = readFileSync(archive);
});
after(async () => {
  await srv.close();
  cleanup(store, work);
});

/** The sections of a writer-made archive with a root-only directory, decoded. */
function parse(buf: Buffer) {
  const u = (i: number): number => Number(buf.readBigUInt64LE(8 + 8 * i));
  const [rootOffset, rootLength, metadataOffset, metadataLength, , leavesLength, dataOffset, dataLength] = [
    0, 1, 2, 3, 4, 5, 6, 7,
  ].map(u);
  assert.equal(leavesLength, 0, "the test archive keeps every tile in its root");
  const raw = gunzipSync(buf.subarray(rootOffset, rootOffset + rootLength));
  const p = { buf: new Uint8Array(raw), pos: 0 };
  const n = readVarint(p);
  const entries: Entry[] = Array.from({ length: n }, () => ({ tileId: 0, offset: 0, length: 0, runLength: 0 }));
  let id = 0;
  for (const e of entries) {
    id += readVarint(p);
    e.tileId = id;
  }
  for (const e of entries) e.runLength = readVarint(p);
  for (const e of entries) e.length = readVarint(p);
  entries.forEach((e, i) => {
    const v = readVarint(p);
    e.offset = v === 0 ? entries[i - 1].offset + entries[i - 1].length : v - 1;
  });
  return {
    entries,
    metadata: buf.subarray(metadataOffset, metadataOffset + metadataLength),
    data: buf.subarray(dataOffset, dataOffset + dataLength),
    counts: { addressed: u(8), contents: u(10) },
    maxZoom: buf[101],
    bounds: [102, 106, 110, 114].map((at) => buf.readInt32LE(at) / 1e7) as [number, number, number, number],
  };
}

/** The archive written again by the project's writer, with the given root directory. */
function rewrite(buf: Buffer, root: Buffer, maxZoom?: number): Buffer {
  const p = parse(buf);
  const header = encodeHeader({
    rootLength: root.length,
    metadataLength: p.metadata.length,
    leavesLength: 0,
    dataLength: p.data.length,
    addressed: p.counts.addressed,
    entries: p.entries.length,
    contents: p.counts.contents,
    minZoom: 0,
    maxZoom: maxZoom ?? p.maxZoom,
    bounds: p.bounds,
  });
  return Buffer.concat([header, root, p.metadata, p.data]);
}

function withEntries(buf: Buffer, change: (entries: Entry[]) => void): Buffer {
  const { entries } = parse(buf);
  change(entries);
  return rewrite(buf, serializeDirectory(entries));
}

const url = (lead: Lead, id: number, via: "route" | "tiles"): string => {
  const [z, x, y] = tileIdToZxy(id);
  return `${srv.url}${lead[via].replace("{z}/{x}/{y}", `${z}/${x}/${y}`)}`;
};

interface Damage {
  name: string;
  bytes: () => Buffer;
  /** The tile id whose read shows the damage. */
  tile: () => number;
}

const entriesOf = (): Entry[] => parse(original).entries;

const damages: Damage[] = [
  {
    name: "truncated file",
    bytes: () => original.subarray(0, original.length - 40),
    // The content stored last: before, a truncated PNG.
    tile: () => entriesOf().reduce((a, b) => (b.offset > a.offset ? b : a)).tileId,
  },
  {
    name: "moved offset",
    bytes: () =>
      withEntries(original, (es) => {
        const [k, j] = movedPair(es);
        es[k].offset = es[j].offset;
      }),
    tile: () => entriesOf()[movedPair(entriesOf())[0]].tileId,
  },
  {
    name: "huge run length",
    bytes: () =>
      withEntries(original, (es) => {
        es[gapEntry(es)].runLength = 2 ** 40;
      }),
    // An id in the gap after that entry: before, that entry's tile.
    tile: () => {
      const es = entriesOf();
      const e = es[gapEntry(es)];
      return e.tileId + e.runLength;
    },
  },
  {
    name: "tile length 2^31",
    bytes: () =>
      withEntries(original, (es) => {
        es[0].length = 2 ** 31;
      }),
    tile: () => entriesOf()[0].tileId,
  },
  {
    name: "directory bomb",
    bytes: () => rewrite(original, bombRoot(3_000_000), 11),
    tile: () => entriesOf()[0].tileId,
  },
];

/** An entry with a content of its own, and another content of a different length. */
function movedPair(es: Entry[]): [number, number] {
  const uses = new Map<number, number>();
  for (const e of es) uses.set(e.offset, (uses.get(e.offset) ?? 0) + 1);
  const k = es.findIndex((e) => uses.get(e.offset) === 1);
  const j = es.findIndex((e) => e.offset !== es[k].offset && e.length !== es[k].length);
  assert.ok(k >= 0 && j >= 0);
  return [k, j];
}

/** An entry followed by tile ids the archive does not hold (still within its zooms). */
function gapEntry(es: Entry[]): number {
  const limit = tileCount(3);
  const i = es.findIndex((e, n) => e.tileId + e.runLength < (es[n + 1]?.tileId ?? limit));
  assert.ok(i >= 0, "the regional archive has a gap");
  return i;
}

/** A root of `n` one-byte entries: a few KB gzipped, megabytes once decompressed. */
function bombRoot(n: number): Buffer {
  const count: number[] = [];
  for (let v = n; ; v = Math.floor(v / 128)) {
    if (v < 128) {
      count.push(v);
      break;
    }
    count.push((v % 128) | 0x80);
  }
  // Ids 1..n, each a run of one, one byte long, all at offset 0: every field in bounds.
  const body = Buffer.alloc(4 * n, 1);
  const root = gzipSync(Buffer.concat([Buffer.from(count), body]), { level: 9 });
  assert.ok(root.length < 16000, `bomb root ${root.length} bytes fits the first 16 KiB`);
  return root;
}

test("each damaged archive answers a logged 500 on both tile paths, the server stays up, raw reads refused", async () => {
  for (const d of damages) {
    const id = d.tile();
    // The archive is good before it is damaged: the same tile is served.
    assert.equal((await get(url(bad, id, "route"))).status, 200, `${d.name}: before`);
    writeFileSync(archive, d.bytes());
    try {
      const rssBefore = process.memoryUsage().rss;
      const r = await get(url(bad, id, "route"));
      assert.equal(r.status, 500, `${d.name}: tile route`);
      assert.match(r.headers.get("content-type") ?? "", /problem\+json/);
      assert.equal(r.headers.get("cache-control"), "no-store", d.name);
      const body = r.body.toString();
      assert.equal(r.json().type, "/problems/corrupt-data");
      assert.ok(!body.includes(srv.dir) && !body.includes(".pmtiles") && !/\bat .*:\d+/.test(body), body);
      const line = srv.logs.find((l) => l.request_id === r.headers.get("x-request-id") && l.level === "error");
      assert.ok(line, `${d.name}: an error log line`);
      assert.equal(line.archive, archive, `${d.name}: the log line names the archive`);
      assert.ok(typeof line.defect === "string" && line.defect.length > 0, `${d.name}: and what is wrong`);
      if (d.name === "directory bomb") {
        assert.match(String(line.defect), /decompresses past/, "refused while decompressing, before decoding");
        assert.ok(process.memoryUsage().rss - rssBefore < 96 << 20, "the bomb takes no memory to refuse");
      }

      // The server is still up and serves good archives.
      assert.equal((await get(url(good, 0, "route"))).status, 200, `${d.name}: a good tile after`);
      // The same archive keeps failing loudly, by the static tile path and raw, never immutable.
      const again = await get(url(bad, id, "tiles"));
      assert.equal(again.status, 500, `${d.name}: static tile path`);
      assert.equal(again.headers.get("cache-control"), "no-store");
      const raw = await get(`${srv.url}${bad.archive}`, { Range: "bytes=0-126" });
      assert.equal(raw.status, 500, `${d.name}: raw archive read`);
      assert.equal(raw.headers.get("cache-control"), "no-store");
      assert.ok(
        srv.logs.some((l) => l.request_id === raw.headers.get("x-request-id") && l.archive !== undefined),
        `${d.name}: the raw refusal is logged`,
      );
    } finally {
      writeFileSync(archive, original);
    }
    // Repaired (a new file identity), the archive is served again.
    assert.equal((await get(url(bad, id, "route"))).status, 200, `${d.name}: after repair`);
  }
});

test("publishing a build that holds a damaged archive is refused; the published build stays", async () => {
  for (const [i, d] of damages.entries()) {
    // The rebuild reuses the published archive by hard link: the damage travels with it.
    writeFileSync(archive, d.bytes());
    try {
      await assert.rejects(
        build({ ...opts, store, out, buildId: `damaged-${i}` }),
        (e: Error) =>
          e.name === "CorruptDataError" &&
          e.message.includes(bad.archive.slice(1)) &&
          /nothing was published/.test(e.message),
        d.name,
      );
      assert.equal(readlinkSync(join(out, "current")).split("/").pop(), "first", `${d.name}: current unchanged`);
    } finally {
      writeFileSync(archive, original);
    }
  }
  // The undamaged archive passes the same walk.
  assert.equal(verifyArchive(archive).bytes, original.length);
});

test("damage inside leaf directories is found by the reader and by the publish walk", async () => {
  // Every tile of z0..7 with its own content: the writer spills the entries into leaves.
  let seed = 2463534242;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  const tiles = [];
  for (let id = 0; id < tileCount(7); id++) tiles.push({ tileId: id, key: String(id), length: 8 + (next() % 4000) });
  const layout = layoutTiles(tiles);
  const write = (entries: Entry[], name: string): string => {
    const { root, leaves } = buildDirectories(entries);
    assert.ok(leaves.length > 0);
    const metadata = encodeMetadata({ name });
    const header = encodeHeader({
      rootLength: root.length,
      metadataLength: metadata.length,
      leavesLength: leaves.length,
      dataLength: layout.dataLength,
      addressed: tiles.length,
      entries: layout.entries.length,
      contents: layout.contents.length,
      minZoom: 0,
      maxZoom: 7,
      bounds: [-180, -85, 180, 85],
    });
    const path = join(work, `${name}.pmtiles`);
    writeFileSync(path, Buffer.concat([header, root, metadata, leaves, Buffer.alloc(layout.dataLength)]));
    return path;
  };
  assert.equal(verifyArchive(write(layout.entries, "whole")).addressed, tiles.length);
  const deep = 20000;
  const cases: [string, (e: Entry[]) => void, RegExp][] = [
    ["length", (e) => (e[deep].length = 2 ** 31), /length/],
    ["run", (e) => (e[deep].runLength = 5), /run length/],
    ["offset", (e) => (e[deep].offset = e[deep + 7].offset), /start at/],
    // Onto a content another leaf holds: only the whole walk sees the gap left behind.
    ["offset across leaves", (e) => (e[deep].offset = e[deep - 9000].offset), /starts at|repeats the content/],
  ];
  for (const [name, change, why] of cases) {
    const entries = layout.entries.map((e) => ({ ...e }));
    change(entries);
    const path = write(entries, name);
    assert.throws(() => verifyArchive(path), why, `${name}: publish walk`);
    if (name === "offset across leaves") continue; // one leaf cannot see another leaf's contents
    const [z, x, y] = tileIdToZxy(entries[deep].tileId);
    await assert.rejects(archiveTile(path, z, x, y), { name: "CorruptDataError" }, `${name}: reader`);
  }
});
