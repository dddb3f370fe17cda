// gridcast build, what it writes: tiles whose pixels carry the colour of the store's value at that
// place (both storage layouts), nothing outside a regional patch, catalog, TileJSON, legends,
// manifest, embedding indexes and viewer files; and one full z0..7 pyramid of a single layer.
import assert from "node:assert/strict";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, sep } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Catalog } from "../../src/published/layout.ts";
import { runPart } from "../../src/published/layout.ts";
import { pixelLat, pixelLon, TILE_SIZE } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { decodeRgba, pixel } from "../render/decode.ts";
import { build, expectedPixels, layerField, listFiles } from "./build-fixture.ts";

const RUN_TOKEN = "20261120T1200"; // latest run of the sample store
const LATEST = 1;
const dirs: string[] = [];
const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));
/** The run segment of a layer's tile paths in a build: the latest run's token and the layer's drawing. */
const runOf = (buildDir: string, layer: string) =>
  runPart(RUN_TOKEN, (json(join(buildDir, "catalog.json")) as Catalog).layers.find((l) => l.id === layer)?.drawing);

after(() => cleanup(...dirs));

/** Compares a 16×16 lattice of pixels of every written tile of a layer with the store's values. */
async function checkLayerPixels(
  buildDir: string,
  store: Store,
  layer: string,
  group: string,
  variable: string,
  level: number | null,
  maxZoom: number,
) {
  const lead = 2;
  const f = await layerField(store, group, variable, LATEST, lead, level);
  let checked = 0;
  for (let z = 0; z <= maxZoom; z++) {
    for (let x = 0; x < 2 ** z; x++) {
      for (let y = 0; y < 2 ** z; y++) {
        const file = join(
          buildDir,
          "tiles",
          layer,
          runOf(buildDir, layer),
          String(lead),
          String(z),
          String(x),
          `${y}.png`,
        );
        if (!existsSync(file)) continue;
        const img = await decodeRgba(readFileSync(file));
        assert.equal(img.width, TILE_SIZE);
        for (let row = 5; row < TILE_SIZE; row += 16) {
          for (let col = 3; col < TILE_SIZE; col += 16) {
            const want = expectedPixels(f, z, x, y, col, row);
            const got = pixel(img.data, row * TILE_SIZE + col);
            const where = `${layer} z${z}/${x}/${y} px ${col},${row} (${pixelLat(z, y, row).toFixed(3)}, ${pixelLon(z, x, col).toFixed(3)})`;
            if (want[0][3] === 0) assert.equal(got[3], 0, `${where}: transparent expected, got ${got}`);
            else
              assert.ok(
                want.some((w) => w.join() === got.join()),
                `${where}: ${got} not in ${want.join(" | ")}`,
              );
            checked++;
          }
        }
      }
    }
  }
  assert.ok(checked > 200, `${layer}: only ${checked} pixels checked`);
}

for (const layout of [
  { name: "north-to-south, 0..360", opts: {} },
  { name: "south-to-north, -180..180", opts: { latDescending: false, lon360: false } },
]) {
  describe(`build pixels (${layout.name} store)`, () => {
    let storeDir: string;
    let out: string;
    before(async () => {
      storeDir = await sampleStore(layout.opts);
      out = tempDir();
      dirs.push(storeDir, out);
      await build({ store: storeDir, out, maxZoom: 2, vars: ["t2m", "t", "tp_1h"], leads: [2] });
    });

    test("a pixel has the palette colour of the value the store holds at that place", async () => {
      const store = new Store(storeDir);
      const current = realpathSync(join(out, "current"));
      await checkLayerPixels(current, store, "global.t2m", "forecast/global", "t2m", null, 2);
      await checkLayerPixels(current, store, "global.t.850", "forecast/global", "t", 1, 1);
      await checkLayerPixels(current, store, "europe.t2m", "forecast/europe", "t2m", null, 2);
      // Accumulated amounts below transparent_below must stay see-through.
      await checkLayerPixels(current, store, "alps.tp_1h", "forecast/alps", "tp_1h", null, 2);
    });
  });
}

describe("build output", () => {
  let storeDir: string;
  let out: string;
  let web: string;
  let dir: string;
  let report: Awaited<ReturnType<typeof build>>;
  before(async () => {
    storeDir = await sampleStore();
    out = tempDir();
    web = tempDir();
    dirs.push(storeDir, out, web);
    writeFileSync(join(web, "index.html"), "<!doctype html><title>viewer</title>");
    mkdirSync(join(web, "assets"));
    writeFileSync(join(web, "assets", "app.js"), "export {};");
    report = await build({ store: storeDir, out, maxZoom: 3, webDir: web, vars: ["t2m", "tp_1h", "t"] });
    dir = realpathSync(join(out, "current"));
  });

  test("publishes builds/<id> through the current link", () => {
    assert.equal(dir, realpathSync(join(out, "builds", report.build_id)));
    assert.equal(report.published, true);
    assert.equal(existsSync(join(out, "builds", `${report.build_id}.partial`)), false);
    assert.equal(existsSync(join(out, ".locks", "build.lock")), false, "the lock is released");
  });

  test("a regional patch writes only the tiles its grid touches", async () => {
    const store = new Store(storeDir);
    const europe = await store.forecastGroup("forecast/europe");
    const [west, south, east, north] = europe.grid.bbox;
    for (let z = 0; z <= 3; z++) {
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          // Independently: some pixel centre of the tile lies within the patch's cell edges.
          let colIn = false;
          let rowIn = false;
          for (let i = 0; i < TILE_SIZE; i++) {
            const lon = pixelLon(z, x, i);
            const lat = pixelLat(z, y, i);
            colIn ||= lon >= west && lon <= east;
            rowIn ||= lat >= south && lat <= north;
          }
          const file = join(dir, "tiles", "europe.t2m", runOf(dir, "europe.t2m"), "0", `${z}/${x}/${y}.png`);
          assert.equal(existsSync(file), colIn && rowIn, `z${z}/${x}/${y}`);
        }
      }
    }
    const tj = json(join(dir, "tilejson", "europe.t2m", RUN_TOKEN, "0.json"));
    assert.equal(tj.tilejson, "3.0.0");
    assert.deepEqual(tj.bounds, europe.grid.bbox);
    assert.equal(tj.minzoom, 0);
    assert.equal(tj.maxzoom, 3);
    assert.deepEqual(tj.tiles, [`/tiles/europe.t2m/${runOf(dir, "europe.t2m")}/0/{z}/{x}/{y}.png`]);
    // The shared transparent tile the route falls back to is part of the build.
    const empty = await decodeRgba(readFileSync(join(dir, "tiles", "empty.png")));
    assert.ok(empty.data.every((_, i) => i % 4 !== 3 || empty.data[i] === 0));
  });

  test("the catalog lists every layer, run and lead with tiles, route, TileJSON and legends that exist", () => {
    const catalog = json(join(dir, "catalog.json")) as Catalog;
    assert.equal(catalog.build_id, report.build_id);
    const ids = catalog.layers.map((l) => l.id);
    assert.deepEqual(ids.slice(0, 4), ["global.t.500", "global.t.850", "global.t2m", "global.tp_1h"]);
    assert.deepEqual(ids.slice(4).sort(), ["alps.t2m", "alps.tp_1h", "europe.t2m", "europe.tp_1h"]);
    const t500 = catalog.layers[0];
    assert.equal(t500.level, 500);
    assert.equal(t500.kind, "global");
    assert.deepEqual(t500.bounds, [-180, -90, 180, 90]);
    assert.equal(t500.runs.length, 1, "--runs latest is the default");
    assert.equal(t500.runs[0].run, "2026-11-20T12:00:00");
    assert.deepEqual(
      t500.runs[0].leads.map((l) => [l.hours, l.valid_time]),
      [0, 1, 2, 3, 4, 5, 6].map((h) => [h, `2026-11-20T${String(12 + h).padStart(2, "0")}:00:00`]),
    );
    for (const layer of catalog.layers) {
      const legend = layer.legend;
      assert.ok(legend && existsSync(join(dir, legend.png)) && existsSync(join(dir, legend.json)), layer.id);
      for (const run of layer.runs) {
        for (const lead of run.leads) {
          assert.ok(existsSync(join(dir, lead.tilejson)), lead.tilejson);
          assert.ok(existsSync(join(dir, lead.tiles.replace("{z}/{x}/{y}", "0/0/0"))), lead.tiles);
          assert.equal(
            lead.route,
            `/api/forecast/tile/{z}/{x}/{y}?layer=${layer.id}&run=${run.token}&lead=${lead.hours}&drawing=${layer.drawing}`,
          );
        }
      }
    }
    assert.equal(
      catalog.tile_url_template,
      "/api/forecast/tile/{z}/{x}/{y}?layer={layer}&run={run}&lead={lead}&drawing={drawing}",
    );
  });

  test("accumulated variables are drawn as amounts and their legend says so", () => {
    const catalog = json(join(dir, "catalog.json")) as Catalog;
    const tp = catalog.layers.find((l) => l.id === "global.tp_1h")!;
    assert.deepEqual(tp.temporal, {
      kind: "accumulated",
      window: "fixed",
      interval: "PT1H",
      interval_hours: 1,
      source: "cell_methods", // the sample store says "time: sum (interval: 1 hour)"
      description: "amount over the previous 1 h",
    });
    const legend = json(join(dir, "legends", "global.tp_1h.json"));
    assert.equal(legend.temporal, "accumulated");
    assert.equal(legend.interval, "amount over the previous 1 h");
    assert.equal(legend.units, "m");
    assert.equal(json(join(dir, "legends", "global.t2m.json")).interval, undefined);
  });

  test("manifest, embedding indexes and viewer files", () => {
    const m = json(join(dir, "manifest.json"));
    assert.equal(m.build_id, report.build_id);
    assert.equal(m.max_zoom, 3);
    assert.equal(m.shards, 1);
    assert.equal(m.entries.length, 8 * 7, "8 layers × 7 leads of the latest run");
    const t2m0 = m.entries.find((e: { key: string }) => e.key === `global.t2m/${runOf(dir, "global.t2m")}/0`);
    assert.equal(t2m0.tiles, 1 + 4 + 16 + 64);
    assert.match(t2m0.fingerprint, /^[0-9a-f]{16}$/);
    assert.equal(new Set(m.entries.map((e: { fingerprint: string }) => e.fingerprint)).size, m.entries.length);
    assert.equal(m.totals.tiles, report.totals.tiles);
    assert.ok(json(join(dir, "embeddings", "items.json")).items.length > 50);
    assert.ok(listFiles(join(dir, "embeddings", "locate")).length > 0);
    assert.equal(readFileSync(join(dir, "index.html"), "utf8"), "<!doctype html><title>viewer</title>");
    assert.ok(existsSync(join(dir, "assets", "app.js")));
  });

  test("the reported files and bytes are what is on disk, hard links once (tile folders not walked)", () => {
    // An independent count of every file of the build.
    const seen = new Set<string>();
    const count = { files: 0, bytes: 0, tile_files: 0, tile_bytes: 0 };
    for (const ent of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!ent.isFile()) continue;
      const path = join(ent.parentPath, ent.name);
      const st = lstatSync(path);
      const tile = path.startsWith(join(dir, "tiles") + sep);
      count.files++;
      if (tile) count.tile_files++;
      if (seen.has(`${st.ino}`)) continue;
      seen.add(`${st.ino}`);
      count.bytes += st.size;
      if (tile) count.tile_bytes += st.size;
    }
    const o = report.output!;
    assert.ok(count.tile_files > 1000);
    assert.deepEqual({ files: o.files, bytes: o.bytes, tile_files: o.tile_files, tile_bytes: o.tile_bytes }, count);
  });
});

describe("the full pyramid", () => {
  test("one layer z0..7: 21,845 tiles and as many @2x, one-colour tiles hard-linked, pixels right at z7", async () => {
    const storeDir = await sampleStore();
    const out = tempDir();
    dirs.push(storeDir, out);
    const r = await build({ store: storeDir, out, groups: ["global"], vars: ["t2m"], leads: [2] });
    assert.equal(r.totals.tiles, 21845);
    const dir = realpathSync(join(out, "current"));
    const all = listFiles(join(dir, "tiles", "global.t2m", runOf(dir, "global.t2m"), "2"));
    const files = all.filter((f) => !f.endsWith("@2x.png"));
    assert.equal(files.length, 21845);
    // 512 px @2x tiles beside every tile of z0..7: below the top each is the four z+1 tiles below
    // it; at the top, the field sampled at z8.
    const hidpi = all.filter((f) => f.endsWith("@2x.png"));
    assert.equal(hidpi.length, 21845);
    assert.equal(hidpi.filter((f) => f.startsWith("7/")).length, 128 * 128);
    assert.equal(r.totals.hidpi, 21845);
    const tileDir = join(dir, "tiles/global.t2m", runOf(dir, "global.t2m"), "2");
    for (const [z, x, y] of [
      [6, 34, 22],
      [3, 4, 2],
      [0, 0, 0],
    ]) {
      const big = await decodeRgba(readFileSync(join(tileDir, `${z}/${x}/${y}@2x.png`)));
      assert.equal(big.width, 512);
      for (let q = 0; q < 4; q++) {
        const [dx, dy] = [q & 1, q >> 1];
        const child = await decodeRgba(readFileSync(join(tileDir, `${z + 1}/${2 * x + dx}/${2 * y + dy}.png`)));
        for (let row = 0; row < TILE_SIZE; row += 15) {
          for (let col = 0; col < TILE_SIZE; col += 15) {
            const a = pixel(big.data, (dy * TILE_SIZE + row) * 512 + dx * TILE_SIZE + col).join();
            assert.equal(
              a,
              pixel(child.data, row * TILE_SIZE + col).join(),
              `${z}/${x}/${y}@2x quadrant ${q} px ${col},${row}`,
            );
          }
        }
      }
    }
    // The top's @2x tile is the z7 tile at twice the resolution: each pixel of the 1x tile lies
    // between four @2x pixels, and (the field changing slowly across a 2° cell) shares the colour of
    // one of them nearly everywhere; a tile with class edges, so the agreement is not trivial.
    {
      const [z, x, y] = [7, 68, 44];
      const one = await decodeRgba(readFileSync(join(tileDir, `${z}/${x}/${y}.png`)));
      const two = await decodeRgba(readFileSync(join(tileDir, `${z}/${x}/${y}@2x.png`)));
      assert.equal(two.width, 512);
      let agree = 0;
      let total = 0;
      const colours = new Set<string>();
      for (let row = 0; row < TILE_SIZE; row += 3) {
        for (let col = 0; col < TILE_SIZE; col += 3) {
          const c = pixel(one.data, row * TILE_SIZE + col).join();
          colours.add(c);
          const block = [0, 1, 2, 3].map((q) => pixel(two.data, (2 * row + (q >> 1)) * 512 + 2 * col + (q & 1)).join());
          if (block.includes(c)) agree++;
          total++;
        }
      }
      assert.ok(colours.size > 1, `tile ${z}/${x}/${y} has class edges`);
      assert.ok(agree >= 0.98 * total, `${z}/${x}/${y}@2x agrees with the 1x tile at ${agree} of ${total} pixels`);
    }
    assert.equal(files.filter((f) => f.startsWith("7/")).length, 128 * 128);
    const m = json(join(dir, "manifest.json"));
    assert.ok(m.entries[0].uniform > 0 && m.entries[0].encoded < 21845 + m.entries[0].hidpi);
    // A 2° grid leaves many z7 tiles one colour: they share inodes.
    const z7 = files
      .filter((f) => f.startsWith("7/"))
      .map((f) => statSync(join(dir, "tiles/global.t2m", runOf(dir, "global.t2m"), "2", f)));
    assert.ok(z7.some((s) => s.nlink > 1));
    const store = new Store(storeDir);
    const f = await layerField(store, "forecast/global", "t2m", LATEST, 2);
    for (const [x, y] of [
      [68, 44],
      [0, 60],
      [127, 90],
    ]) {
      const img = await decodeRgba(
        readFileSync(join(dir, "tiles/global.t2m", runOf(dir, "global.t2m"), "2", `7/${x}/${y}.png`)),
      );
      for (const [col, row] of [
        [0, 0],
        [128, 77],
        [255, 255],
      ]) {
        const got = pixel(img.data, row * TILE_SIZE + col).join();
        assert.ok(
          expectedPixels(f, 7, x, y, col, row).some((w) => w.join() === got),
          `7/${x}/${y} px ${col},${row}`,
        );
      }
    }
  });
});
