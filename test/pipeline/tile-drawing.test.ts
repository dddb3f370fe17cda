// Tiles drawn by another renderer come under other URLs: run tiles are cached for a year
// (immutable), so a build after a renderer upgrade must not publish new pixels under the paths a
// CDN keeps. The drawing segment (renderer version and style digest) is in every tile path of the
// catalog, TileJSON and WMTS, and the same renderer keeps the same URLs (tiles hard-linked).
import assert from "node:assert/strict";
import { readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { drawingOf, RENDERER_VERSION } from "../../src/pipeline/fingerprint.ts";
import type { BuildManifest } from "../../src/pipeline/layer-spec.ts";
import type { Catalog } from "../../src/published/layout.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

const dirs: string[] = [];
let store: string;
const small = { maxZoom: 1, groups: ["europe"], vars: ["t2m"], orientation: true };

before(async () => {
  store = await sampleStore();
  dirs.push(store);
});
after(() => cleanup(...dirs));

function outDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const published = (out: string) => realpathSync(join(out, "current"));
const catalogOf = (out: string) => JSON.parse(readFileSync(join(published(out), "catalog.json"), "utf8")) as Catalog;

/** Every tile URL a client is given for a layer's lead: static path, route, @2x, TileJSON's. */
function urlsOf(out: string, layer: string, hours: number): string[] {
  const l = catalogOf(out).layers.find((x) => x.id === layer)!;
  const lead = l.runs.at(-1)!.leads.find((x) => x.hours === hours)!;
  const tj = JSON.parse(readFileSync(join(published(out), lead.tilejson), "utf8")) as { tiles: string[] };
  return [lead.tiles, lead.route, lead.tiles_2x ?? "", lead.route_2x ?? "", ...tj.tiles];
}

describe("the drawing in tile URLs", () => {
  test("two builds of the same run by different renderers publish different tile URLs; the same renderer the same", async () => {
    const a = outDir();
    const b = outDir();
    await build({ store, out: a, ...small, leads: [0] });
    const upgraded = String(Number(RENDERER_VERSION) + 1);
    await build({ store, out: b, ...small, leads: [0], renderer: upgraded });
    for (const layer of ["europe.t2m", "orientation"]) {
      const before = urlsOf(a, layer, 0);
      const after = urlsOf(b, layer, 0);
      for (let i = 0; i < before.length; i++) {
        if (before[i] === "") continue;
        assert.notEqual(after[i], before[i], `${layer}: ${before[i]} is published again after the upgrade`);
      }
      const la = catalogOf(a).layers.find((l) => l.id === layer)!;
      const lb = catalogOf(b).layers.find((l) => l.id === layer)!;
      assert.match(la.drawing!, new RegExp(`^r${RENDERER_VERSION}-[0-9a-f]{8}$`));
      assert.match(lb.drawing!, new RegExp(`^r${upgraded}-[0-9a-f]{8}$`));
      // The files are where the catalog says.
      for (const [out, l] of [
        [a, la],
        [b, lb],
      ] as const) {
        const tiles = l.runs.at(-1)!.leads[0].tiles;
        assert.ok(tiles.includes(`.${l.drawing}/`), tiles);
        assert.ok(statSync(join(published(out), tiles.replace("{z}/{x}/{y}", "0/0/0"))).isFile(), tiles);
      }
    }
    // WMTS names the drawing in its resource template, so its tiles are pinned under it too.
    const wmts = readFileSync(join(published(b), "wmts/1.0.0/WMTSCapabilities.xml"), "utf8");
    const drawing = catalogOf(b).layers.find((l) => l.id === "europe.t2m")!.drawing!;
    assert.ok(wmts.includes(`layer=europe.t2m&amp;run=`) && wmts.includes(`drawing=${drawing}`), "WMTS template");

    // The same renderer again, with a lead more: the lead published before keeps every URL, and its
    // tiles are the same files (hard links), not drawn again.
    const before0 = urlsOf(a, "europe.t2m", 0);
    const tileOf = (out: string) => statSync(join(published(out), before0[0].replace("{z}/{x}/{y}", "0/0/0")));
    const inode = tileOf(a).ino;
    await build({ store, out: a, ...small, leads: [0, 1] });
    const first = urlsOf(a, "europe.t2m", 0);
    assert.deepEqual(first, before0, "a later build by the same renderer keeps the lead's URLs");
    assert.equal(tileOf(a).ino, inode, "and links the same file");
    const c = outDir();
    await build({ store, out: c, ...small, leads: [0] });
    assert.deepEqual(urlsOf(c, "europe.t2m", 0), first, "same renderer, same URLs in another output");
  });

  test("a build published before paths held the drawing: the next one links its tiles under the new paths, nothing drawn again", async () => {
    const out = outDir();
    const first = await build({ store, out, ...small, leads: [0, 1] });
    // That build as one made before the drawing was recorded: bare run tokens in its paths and
    // manifest keys, no drawing in its layers.
    const dir = published(out);
    const manifestPath = join(dir, "manifest.json");
    const m = JSON.parse(readFileSync(manifestPath, "utf8")) as BuildManifest;
    for (const l of m.layers) {
      for (const r of l.runs)
        renameSync(join(dir, "tiles", l.id, `${r.token}.${l.drawing}`), join(dir, "tiles", l.id, r.token));
      for (const e of m.entries) e.key = e.key.replace(`.${l.drawing}/`, "/");
      delete l.drawing;
    }
    writeFileSync(manifestPath, JSON.stringify(m));
    const l0 = m.layers.find((l) => l.id === "europe.t2m")!;
    const legacyTile = join(dir, "tiles", l0.id, l0.runs[0].token, "0", "0", "0", "0.png");
    const inode = statSync(legacyTile).ino;

    const next = await build({ store, out, ...small, leads: [0, 1] });
    assert.notEqual(next.unchanged, first.build_id, "new paths are something new to publish");
    assert.equal(next.totals.rendered, 0, "every lead linked, none drawn again");
    assert.equal(next.totals.reused, first.totals.entries);
    const tiles = catalogOf(out).layers.find((l) => l.id === "europe.t2m")!.runs[0].leads[0].tiles;
    assert.ok(/\.r\d+-[0-9a-f]{8}\//.test(tiles), tiles);
    assert.equal(statSync(join(published(out), tiles.replace("{z}/{x}/{y}", "0/0/0"))).ino, inode);
  });

  test("a restyle is another drawing; the same style and renderer the same", () => {
    const style = { colormap: "thermal", min: 230, max: 320 };
    const recipe = { kind: "field", sources: ["t2m"], resample: "bilinear" };
    assert.equal(drawingOf(style, recipe, "6"), drawingOf({ ...style }, { ...recipe }, "6"));
    assert.notEqual(drawingOf(style, recipe, "6"), drawingOf(style, recipe, "7"));
    assert.notEqual(drawingOf(style, recipe, "6"), drawingOf({ ...style, max: 310 }, recipe, "6"));
  });
});
