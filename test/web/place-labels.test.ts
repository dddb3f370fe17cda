// One label placement for the whole map, in Chromium against a real server and a real `gridcast
// build` of a store written by xarray + zarr-python 2 (test/python/overlay_store.py: a deep low
// over central Europe, so isobars 4 hPa apart run through the cities round it):
//   - contour tiles carry the boxes of their line labels and H/L marks, and each box holds ink of
//     the tile (the boxes are what is drawn);
//   - with isobars shown, no place label the page draws meets a line label or H/L box of the
//     overlay tiles the server sends, at DPR 1 (z5, 1x tiles) and DPR 2 (z4, @2x orientation
//     tiles; z2, @2x isobar tiles too); names that would are hidden, their box clear on the page's tile, on every tile the
//     label spans (one decision per label, so no half label at a seam);
//   - wind-arrow tiles carry the boxes of their arrow heads, and with the arrows shown no place
//     label meets an arrow head, at DPR 1 (z5) and DPR 2 (z3, @2x arrow tiles), decided alike on
//     every tile a label spans;
//   - without the overlay every name is drawn.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { keptLabels } from "../../src/render/label-rank.ts";
import { type TileBoxes, tileBoxes } from "../../src/render/png.ts";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const MAX_ZOOM = 5;
const LOW = { lat: 50, lon: 12 };
type Box = TileBoxes[number];

interface DrawnTile {
  z: number;
  x: number;
  y: number;
  src: string;
  shown: Box[];
  hidden: Box[];
  /** Largest alpha inside each hidden box (shrunk by a pixel), in the canvas's own pixels. */
  hiddenInk: number[];
  /** Pixels with alpha inside each shown box. */
  shownInk: number[];
}

describe("place names yield to the weather's marks", () => {
  let browser: Browser;
  let root: string;
  let server: TestServer;

  before(async () => {
    requireChromium();
    root = tempDir("gridcast-place-labels-");
    const store = join(root, "store");
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      run(PYTHON, [join(ROOT, "test/python/overlay_store.py"), store, String(LOW.lat), String(LOW.lon)]),
    ]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", String(MAX_ZOOM)];
    await run(process.execPath, ["bin/gridcast", ...args, "--vars", "msl,isobars,wind_arrows"], { cwd: ROOT });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (root) cleanup(root);
  });

  type Overlay = "isobars" | "wind_arrows";
  const overlayTiles = new Map<string, Promise<{ boxes: Box[]; alpha: Buffer; k: number }>>();
  /** An overlay tile as any client gets it (`k` 2: its @2x tile): its boxes and its alpha channel. */
  function overlayTile(over: Overlay, z: number, x: number, y: number, k: number) {
    const n = 2 ** z;
    const wx = ((x % n) + n) % n;
    const key = `${z}/${wx}/${y}`;
    let got = overlayTiles.get(`${over} ${key}@${k}`);
    if (!got) {
      got = (async () => {
        const scale = k === 2 ? "&scale=2" : "";
        const res = await fetch(`${server.url}/api/forecast/tile/${key}?layer=global.${over}${scale}`);
        assert.equal(res.status, 200, key);
        const png = Buffer.from(await res.arrayBuffer());
        const { data, info } = await sharp(png)
          .ensureAlpha()
          .extractChannel(3)
          .raw()
          .toBuffer({ resolveWithObject: true });
        assert.equal(info.width, 256 * k);
        return { boxes: tileBoxes(png) ?? [], alpha: data, k };
      })();
      overlayTiles.set(`${over} ${key}@${k}`, got);
    }
    return got;
  }

  /** Opens the viewer and answers the orientation tiles of zoom z as drawn, once all are painted. */
  async function drawnTiles(page: Page, hash: string, z: number, overlay: Overlay | null): Promise<DrawnTile[]> {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/${hash}`);
    await page.waitForFunction(
      ({ overlay }) => {
        const tiles = document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile");
        const iso = document.querySelectorAll<HTMLImageElement>(`.overlay-${overlay} img.leaflet-tile`);
        return (
          tiles.length > 0 &&
          (!overlay || (iso.length > 0 && Array.from(iso).every((i) => i.classList.contains("leaflet-tile-loaded")))) &&
          Array.from(tiles).every(
            (t) => t.classList.contains("leaflet-tile-loaded") && t.dataset.painted === (overlay ? "weather" : "plain"),
          )
        );
      },
      { overlay },
      { timeout: 180_000 }, // a hang detector: a loaded two-core machine has taken minutes
    );
    const tiles = await page.evaluate((zoom) => {
      const out = [];
      for (const c of Array.from(
        document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile"),
      )) {
        const m = /\/tile\/(\d+)\/(\d+)\/(\d+)\?/.exec(c.dataset.src ?? "");
        if (!m || Number(m[1]) !== zoom) continue;
        const k = c.width / 256;
        const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
        const ink = (b: number[], shrink: number, count: boolean) => {
          let max = 0;
          let n = 0;
          for (let y = Math.max(0, Math.ceil((b[1] + shrink) * k)); y < Math.min(c.height, (b[3] - shrink) * k); y++) {
            for (let x = Math.max(0, Math.ceil((b[0] + shrink) * k)); x < Math.min(c.width, (b[2] - shrink) * k); x++) {
              const a = data[(y * c.width + x) * 4 + 3];
              if (a > max) max = a;
              if (a > 0) n++;
            }
          }
          return count ? n : max;
        };
        const shown = JSON.parse(c.dataset.labels ?? "[]");
        const hidden = JSON.parse(c.dataset.hidden ?? "[]");
        out.push({
          z: Number(m[1]),
          x: Number(m[2]),
          y: Number(m[3]),
          src: c.dataset.src ?? "",
          shown,
          hidden,
          hiddenInk: hidden.map((b: number[]) => ink(b, 1, false)),
          // Checked on the tile holding the label's centre (-1 elsewhere): there the text is.
          shownInk: shown.map((b: number[]) => {
            const [cx, cy] = [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
            return cx >= 0 && cx < 256 && cy >= 0 && cy < 256 ? ink(b, 2, true) : -1;
          }),
        });
      }
      return out;
    }, z);
    assert.deepEqual(errors, []);
    assert.ok(tiles.length >= 4, `${tiles.length} orientation tiles of zoom ${z} on the page`);
    return tiles;
  }

  const world = (t: { x: number; y: number }, b: Box): Box => [
    b[0] + t.x * 256,
    b[1] + t.y * 256,
    b[2] + t.x * 256,
    b[3] + t.y * 256,
  ];
  const meets = (a: Box, b: Box) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

  /** The overlay's marks in world pixels of zoom z around a world box, each checked to hold ink. */
  async function marksNear(over: Overlay, z: number, b: Box, k: number): Promise<Box[]> {
    const out: Box[] = [];
    for (let ty = Math.floor(b[1] / 256) - 1; ty <= Math.floor(b[3] / 256) + 1; ty++) {
      if (ty < 0 || ty >= 2 ** z) continue;
      for (let tx = Math.floor(b[0] / 256) - 1; tx <= Math.floor(b[2] / 256) + 1; tx++) {
        const { boxes, alpha } = await overlayTile(over, z, tx, ty, k);
        const size = 256 * k;
        for (const m of boxes) {
          let ink = 0;
          for (let y = Math.max(0, m[1] * k); y < Math.min(size, m[3] * k); y++)
            for (let x = Math.max(0, m[0] * k); x < Math.min(size, m[2] * k); x++) if (alpha[y * size + x] > 0) ink++;
          assert.ok(ink > 0, `mark box ${m} of ${over} tile ${z}/${tx}/${ty} holds ink`);
          out.push(world({ x: tx, y: ty }, m));
        }
      }
    }
    return out;
  }

  /**
   * `big`: names that must be drawn (kept against the weather, label-rank.ts). With the arrows on,
   * no name of that rank is ever hidden, and `minHidden` smaller names yield.
   */
  async function check(
    dpr: number,
    z: number,
    overlay2x: boolean,
    minShown = 3,
    over: Overlay = "isobars",
    big: string[] = [],
    minHidden = 1,
  ) {
    const k = overlay2x ? 2 : 1;
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 }, deviceScaleFactor: dpr });
    const page = await context.newPage();
    const tiles = await drawnTiles(page, `#layer=global.msl&over=${over}&map=${z}/${LOW.lat}/${LOW.lon}`, z, over);
    let shown = 0;
    let hidden = 0;
    const hiddenWorld = new Set<string>();
    const shownWorld = new Set<string>();
    // A label's ink on the tile holding its centre (-1: that tile is off the page).
    const shownInk = new Map<string, number>();
    for (const t of tiles) {
      if (dpr >= 2 && z <= 4) assert.match(t.src, /scale=2/, "the @2x orientation tile on a dense screen");
      for (const [i, b] of t.shown.entries()) {
        const w = world(t, b);
        shownWorld.add(w.join());
        for (const m of await marksNear(over, z, w, k)) {
          assert.ok(!meets(w, m), `place label ${w} meets mark ${m} at z${z}, DPR ${dpr}`);
        }
        shownInk.set(w.join(), Math.max(shownInk.get(w.join()) ?? -1, t.shownInk[i]));
        shown++;
      }
      for (const [i, b] of t.hidden.entries()) {
        const w = world(t, b);
        hiddenWorld.add(w.join());
        const near = await marksNear(over, z, w, k);
        assert.ok(
          near.some((m) => meets([w[0] - 1, w[1] - 1, w[2] + 1, w[3] + 1], m)),
          `hidden label ${w} meets a mark`,
        );
        assert.equal(t.hiddenInk[i], 0, `hidden label ${w} is cleared from tile ${t.z}/${t.x}/${t.y}`);
        hidden++;
      }
    }
    for (const [w, ink] of shownInk) assert.ok(ink !== 0, `shown label ${w} is drawn`);
    for (const w of hiddenWorld) assert.ok(!shownWorld.has(w), `label ${w} hidden on one tile and shown on another`);
    if (over === "wind_arrows") {
      // The arrows give way to the big places' names: none of those is hidden, the named ones are drawn.
      const kept = new Map((await keptLabels(z)).map((b) => [[b.x, b.y, b.x + b.w, b.y + b.h].join(), b.place.name]));
      for (const w of hiddenWorld) assert.ok(!kept.has(w), `${kept.get(w)} (kept against the weather) hidden at z${z}`);
      const drawn = new Set([...shownWorld].map((w) => kept.get(w)));
      for (const name of big) assert.ok(drawn.has(name), `${name} is drawn with the arrows on at z${z}, DPR ${dpr}`);
    }
    assert.ok(hidden >= minHidden, `names yield to the weather at z${z} (${hidden} hidden, ${shown} shown)`);
    assert.ok(shown >= minShown, `names away from the marks stay (${shown} shown)`);
    if (overlay2x) {
      const srcs = await page.evaluate(
        (over) =>
          Array.from(document.querySelectorAll<HTMLImageElement>(`.overlay-${over} img.leaflet-tile-loaded`)).map(
            (i) => `${i.naturalWidth} ${i.src}`,
          ),
        over,
      );
      assert.ok(srcs.length > 0);
      for (const s of srcs) assert.match(s, /^512 .*scale=2/, `the @2x ${over} tiles on a dense screen`);
    }
    await context.close();
  }

  test("DPR 1, zoom 5: no place label meets a line label or H/L", async () => {
    await check(1, 5, false);
  });

  test("DPR 2, zoom 4 (@2x orientation tiles): no place label meets a line label or H/L", async () => {
    await check(2, 4, false);
  });

  // With --max-zoom 5 the isobars and the arrows have @2x tiles to z5, as the orientation layer.
  test("DPR 2, zoom 2 (@2x orientation and isobar tiles): no place label meets a line label or H/L", async () => {
    await check(2, 2, true, 1);
  });

  test("DPR 1, zoom 5: no place label meets a wind-arrow head; the big cities stay", async () => {
    await check(1, 5, false, 3, "wind_arrows", ["Munich", "Prague", "Vienna", "Berlin", "Hamburg"]);
  });

  // At z3 every name shown is a city of two million or more: the arrows give way to all of them.
  test("DPR 2, zoom 3 (@2x orientation and arrow tiles): arrows give way to every name", async () => {
    await check(2, 3, true, 1, "wind_arrows", ["Berlin"], 0);
  });

  /** A tile's alpha over HTTP (`scale=2`: its @2x tile), as a square of side `size`. */
  async function alphaOf(layer: string, z: number, x: number, y: number, hidpi: boolean) {
    const res = await fetch(`${server.url}/api/forecast/tile/${z}/${x}/${y}?layer=${layer}${hidpi ? "&scale=2" : ""}`);
    assert.equal(res.status, 200);
    const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
      .ensureAlpha()
      .extractChannel(3)
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { a: data, size: info.width };
  }

  /** Bilinear ×2 (pixel centres), what a browser does with a 256 px tile on a DPR 2 screen. */
  function upscale(a: Buffer, n: number): Float64Array {
    const out = new Float64Array(4 * n * n);
    const at = (x: number, y: number) => a[Math.min(n - 1, Math.max(0, y)) * n + Math.min(n - 1, Math.max(0, x))];
    for (let Y = 0; Y < 2 * n; Y++) {
      for (let X = 0; X < 2 * n; X++) {
        const u = (X + 0.5) / 2 - 0.5;
        const v = (Y + 0.5) / 2 - 0.5;
        const x0 = Math.floor(u);
        const y0 = Math.floor(v);
        const fx = u - x0;
        const fy = v - y0;
        out[Y * 2 * n + X] =
          (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) +
          (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
      }
    }
    return out;
  }

  /** Neighbouring pixel pairs whose alpha differs by at least half the range: sharp edges. */
  function sharpEdges(a: ArrayLike<number>, n: number): number {
    let count = 0;
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const v = a[y * n + x];
        if (x + 1 < n && Math.abs(v - a[y * n + x + 1]) >= 128) count++;
        if (y + 1 < n && Math.abs(v - a[(y + 1) * n + x]) >= 128) count++;
      }
    }
    return count;
  }

  test("@2x isobars and arrows: the same marks as the 1x tile, with more sharp edges than it scaled up", async () => {
    for (const [layer, z] of [
      ["global.isobars", 2],
      ["global.wind_arrows", 3],
    ] as const) {
      // The tile with the low, at each layer's highest @2x zoom.
      const phi = (LOW.lat * Math.PI) / 180;
      const lx = Math.floor(((LOW.lon + 180) / 360) * 2 ** z);
      const ly = Math.floor(((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 2 ** z);
      const one = await alphaOf(layer, z, lx, ly, false);
      const two = await alphaOf(layer, z, lx, ly, true);
      assert.equal(one.size, 256);
      assert.equal(two.size, 512);
      const up = upscale(one.a, 256);
      const hi = sharpEdges(two.a, 512);
      const lo = sharpEdges(up, 512);
      assert.ok(hi >= 1.5 * lo && hi > 500, `${layer}: ${hi} sharp edges at @2x, ${lo} in the 1x scaled up`);
      // As much drawn: lines and text as wide on screen, not twice as heavy or missing.
      const ink = (a: ArrayLike<number>) => {
        let t = 0;
        for (let i = 0; i < a.length; i++) t += a[i];
        return t;
      };
      const ratio = ink(two.a) / ink(up);
      assert.ok(ratio > 0.6 && ratio < 1.6, `${layer}: ink ratio ${ratio.toFixed(2)}`);
    }
  });

  test("without the overlay every name is drawn", async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
    const page = await context.newPage();
    const tiles = await drawnTiles(page, `#layer=global.msl&over=&map=5/${LOW.lat}/${LOW.lon}`, 5, null);
    assert.ok(tiles.every((t) => t.hidden.length === 0));
    assert.ok(tiles.reduce((n, t) => n + t.shown.length, 0) >= 5);
    await context.close();
  });
});
