// Missing nodes are hatched: a store whose chunk of t2m was never written (its fill value, NaN,
// everywhere in that block) builds tiles with diagonal stripes over the block and the ramp's
// colours beyond it; a field with no missing node (msl) has no stripe anywhere; legends of base
// layers name "no data".
import assert from "node:assert/strict";
import { existsSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Catalog } from "../../src/published/layout.ts";
import { pixelLat, pixelLon, TILE_SIZE } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { decodeRgba, pixel } from "../render/decode.ts";
import { build } from "./build-fixture.ts";

const RUN_TOKEN = "20261120T1200"; // the tiny store's latest run (time index 1)
const Z = 2;
const dirs: string[] = [];
after(() => cleanup(...dirs));

describe("missing nodes are hatched", () => {
  let dir: string;
  /** The block of the deleted chunk, shrunk by two nodes on each side (bilinear reaches one node). */
  let inside: (lat: number, lon: number) => boolean;
  /** Well away from the block: the other chunks' nodes. */
  let outside: (lat: number, lon: number) => boolean;

  before(async () => {
    const storeDir = await sampleStore();
    const out = tempDir();
    dirs.push(storeDir, out);
    const group = await new Store(storeDir).forecastGroup("forecast/global");
    const v = group.variables.get("t2m")!;
    const [, , ch, cw] = v.array.chunks;
    // The first spatial chunk of the latest run, all leads: never written, read as the fill value.
    const chunk = join(storeDir, "forecast", "global", "t2m", "c", "1", "0", "0", "0");
    assert.ok(existsSync(chunk), chunk);
    rmSync(chunk);
    const lat = Array.from(group.grid.lat as ArrayLike<number>);
    const lon = Array.from(group.grid.lon as ArrayLike<number>);
    const span = (axis: number[], from: number, to: number) => {
      const vals = axis.slice(from, to + 1);
      return [Math.min(...vals), Math.max(...vals)];
    };
    const [lat0, lat1] = span(lat, 2, ch - 3);
    const [lon0, lon1] = span(lon, 2, cw - 3);
    const [olat0, olat1] = span(lat, 1, ch - 2);
    const [olon0, olon1] = span(lon, 1, cw - 2);
    const wrap = (l: number) => ((l % 360) + 360) % 360;
    const inLon = (l: number, a: number, b: number) => (a < 0 ? l >= a && l <= b : wrap(l) >= a && wrap(l) <= b);
    inside = (la, lo) => la >= lat0 && la <= lat1 && inLon(lo, lon0, lon1);
    outside = (la, lo) => Math.abs(la) < 80 && !(la >= olat0 - 4 && la <= olat1 + 4 && inLon(lo, olon0 - 4, olon1 + 4));
    await build({ store: storeDir, out, maxZoom: Z, groups: ["forecast/global"], vars: ["t2m", "msl"], leads: [0] });
    dir = realpathSync(join(out, "current"));
  });

  /** Tile z/x/y of lead 0 of the latest run, where the catalog says it lies. */
  const tile = async (layer: string, x: number, y: number) => {
    const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8")) as Catalog;
    const run = catalog.layers.find((l) => l.id === layer)!.runs.find((r) => r.token === RUN_TOKEN)!;
    const path = run.leads.find((l) => l.hours === 0)!.tiles.replace("{z}/{x}/{y}", `${Z}/${x}/${y}`);
    return decodeRgba(readFileSync(join(dir, path)));
  };

  test("the missing block is drawn in diagonal stripes, the rest in the ramp's colours", async () => {
    let inked = 0;
    let clear = 0;
    let drawn = 0;
    const inks = new Set<string>();
    for (let x = 0; x < 2 ** Z; x++) {
      for (let y = 0; y < 2 ** Z; y++) {
        const img = await tile("global.t2m", x, y);
        for (let row = 0; row < TILE_SIZE; row++) {
          for (let col = 0; col < TILE_SIZE; col++) {
            const la = pixelLat(Z, y, row);
            const lo = pixelLon(Z, x, col);
            const p = pixel(img.data, row * TILE_SIZE + col);
            if (inside(la, lo)) {
              // Stripes fixed to the world's pixels, 3 inked in every 8 along a row, one pixel
              // further on each row down: lines from lower left to upper right, across tile seams.
              const wx = x * TILE_SIZE + col;
              const wy = y * TILE_SIZE + row;
              const stripe = (wx + wy) % 8 < 3;
              if (stripe) {
                assert.ok(p[3] > 0, `stripe pixel ${wx},${wy} (${la.toFixed(1)}, ${lo.toFixed(1)}) is empty`);
                inks.add(p.join());
                inked++;
              } else {
                assert.equal(p[3], 0, `between stripes ${wx},${wy} shows the map, got ${p}`);
                clear++;
              }
            } else if (outside(la, lo)) {
              // t2m is never below the ramp's range: every pixel with a value is drawn opaque.
              assert.equal(p[3], 255, `valued pixel ${la.toFixed(1)}, ${lo.toFixed(1)}: ${p}`);
              drawn++;
            }
          }
        }
      }
    }
    assert.ok(inked > 1000 && clear > inked, `inked ${inked}, clear ${clear}`);
    assert.ok(drawn > 1000, `drawn ${drawn}`);
    assert.equal(inks.size, 1, `one hatch colour: ${[...inks].join(" | ")}`);
  });

  test("a field with no missing node has no stripe", async () => {
    // Sea-level pressure has no hole (the sample's cloud cover has scattered ones, so not it).
    const hatch = (await tile("global.t2m", 2, 1)).data; // t2m's hatch colour, read from a tile
    const legend = JSON.parse(readFileSync(join(dir, "legends", "global.msl.json"), "utf8"));
    const ink = legend.no_data.color as string;
    const rgb = [1, 3, 5].map((k) => Number.parseInt(ink.slice(k, k + 2), 16));
    let seen = 0;
    for (let i = 0; i < hatch.length / 4; i++) if (pixel(hatch, i).slice(0, 3).join() === rgb.join()) seen++;
    assert.ok(seen > 0, "the legend's hatch colour is the one the t2m tiles ink");
    for (let x = 0; x < 2 ** Z; x++) {
      for (let y = 0; y < 2 ** Z; y++) {
        const img = await tile("global.msl", x, y);
        for (let i = 0; i < TILE_SIZE * TILE_SIZE; i++) {
          const p = pixel(img.data, i);
          assert.ok(p[3] === 255 && p.slice(0, 3).join() !== rgb.join(), `msl ${x}/${y} px ${i}: ${p}`);
        }
      }
    }
  });

  test("base layers' legends name no data; the catalog points at them", () => {
    const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8")) as Catalog;
    for (const id of ["global.t2m", "global.msl"]) {
      const layer = catalog.layers.find((l) => l.id === id)!;
      const legend = JSON.parse(readFileSync(join(dir, layer.legend!.json), "utf8"));
      assert.equal(legend.no_data.label, "no data", id);
      assert.equal(legend.no_data.pattern, "hatch", id);
    }
  });
});
