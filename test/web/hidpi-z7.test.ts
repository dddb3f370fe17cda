// Base layers at the top of the pyramid on a dense screen, in a real browser (Debian's Chromium
// through playwright-core) against a real server and a real `gridcast build --max-zoom 7` of a
// store written by xarray + zarr-python 2 (test/python/city_store.py: a regional patch whose
// temperature crosses a 1 °C class edge every few pixels at zoom 7):
//   - the catalog gives the layer @2x tiles up to zoom 7, and the route serves them at 512 px;
//   - at device pixel ratio 2 and zoom 7 the viewer asks for the @2x tiles only and draws them:
//     where the @2x tile and the 1x tile scaled up by the browser differ (the class edges), the
//     screen's device pixels are the @2x tile's.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium } from "playwright-core";
import sharp from "sharp";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const LAYER = "city.t2m";
const VIEW = { z: 7, lat: 48, lon: 2 };

type Rgb = [number, number, number];

async function rgbOf(url: string): Promise<{ data: Buffer; size: number }> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  assert.equal(info.width, info.height);
  return { data, size: info.width };
}

/** Bilinear sample at pixel-centre coordinates (u, v) of a square RGB image: a browser's upscale. */
function bilinear(img: { data: Buffer; size: number }, u: number, v: number): Rgb {
  const n = img.size;
  const at = (x: number, y: number, k: number) =>
    img.data[(Math.min(n - 1, Math.max(0, y)) * n + Math.min(n - 1, Math.max(0, x))) * 3 + k];
  const x0 = Math.floor(u);
  const y0 = Math.floor(v);
  const fx = u - x0;
  const fy = v - y0;
  return [0, 1, 2].map(
    (k) =>
      (at(x0, y0, k) * (1 - fx) + at(x0 + 1, y0, k) * fx) * (1 - fy) +
      (at(x0, y0 + 1, k) * (1 - fx) + at(x0 + 1, y0 + 1, k) * fx) * fy,
  ) as Rgb;
}

const diff = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]);

describe("base layers' @2x tiles at zoom 7 in Chromium", () => {
  let browser: Browser;
  let root: string;
  let server: TestServer;
  let route: string;
  let route2x: string;

  before(async () => {
    requireChromium();
    root = tempDir("gridcast-hidpi-z7-");
    const store = join(root, "store");
    [browser] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      run(PYTHON, [join(ROOT, "test/python/city_store.py"), store]),
    ]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "7"];
    await run(process.execPath, ["bin/gridcast", ...args, "--leads", "1", "--no-orientation"], { cwd: ROOT });
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    const layer = catalog.layers.find((l: { id: string }) => l.id === LAYER);
    assert.ok(layer, `${LAYER} in the catalog`);
    assert.equal(layer.maxzoom, 7);
    assert.equal(layer.hidpi_maxzoom, 7, "base layers have @2x tiles at the top zoom");
    route = layer.runs[0].leads[0].route;
    route2x = layer.runs[0].leads[0].route_2x;
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (root) cleanup(root);
  });

  const fill = (t: string, z: number, x: number, y: number) =>
    `${server.url}${t.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y))}`;

  test("the route serves a zoom-7 @2x tile at 512 px", async () => {
    const x = Math.floor(((VIEW.lon + 180) / 360) * 128);
    const two = await rgbOf(fill(route2x, 7, x, 44));
    const one = await rgbOf(fill(route, 7, x, 44));
    assert.deepEqual([two.size, one.size], [512, 256]);
  });

  test("device pixel ratio 2, zoom 7: the @2x tiles asked for and drawn, sharper than the 1x scaled up", async () => {
    const ctx = await browser.newContext({ viewport: { width: 600, height: 400 }, deviceScaleFactor: 2 });
    const page = await ctx.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#layer=${LAYER}&lead=1&map=${VIEW.z}/${VIEW.lat}/${VIEW.lon}`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    // Land and outlines off: the screen's pixels are the tiles'.
    await page.addStyleTag({ content: ".leaflet-land-pane, .leaflet-outlines-pane { display: none !important; }" });
    await page.waitForFunction(() => {
      const imgs = Array.from(document.querySelectorAll(".forecast-tiles img")) as HTMLImageElement[];
      return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0);
    });
    // A frame drawn after the style change (the screenshot renders one too; this says so, not a guess).
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    assert.deepEqual(errors, []);

    const asked = requests.filter((u) => u.includes("/api/forecast/tile/") && u.includes(`layer=${LAYER}`));
    assert.ok(asked.length >= 2, `${asked.length} tile requests`);
    for (const u of asked) {
      assert.match(new URL(u).pathname, /\/tile\/7\//, u);
      assert.equal(new URL(u).searchParams.get("scale"), "2", `the @2x tile at zoom 7: ${u}`);
    }
    const tiles = await page.evaluate(() =>
      Array.from(document.querySelectorAll(".forecast-tiles img")).map((i) => {
        const img = i as HTMLImageElement;
        const r = img.getBoundingClientRect();
        return { src: img.src, natural: img.naturalWidth, box: [r.left, r.top, r.width, r.height] };
      }),
    );
    assert.ok(
      tiles.every((t) => t.natural === 512),
      `natural widths ${tiles.map((t) => t.natural).join(",")}`,
    );

    // Device pixels of the map's middle (away from the controls and the patch's feathered edge),
    // each against the @2x tile's pixel there and the 1x tile scaled up as a browser would.
    const map = await page.locator("#map").boundingBox();
    assert.ok(map);
    const shot = await sharp(await page.screenshot())
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const W = shot.info.width;
    const [cx, cy] = [map.x + map.width / 2, map.y + map.height / 2];
    let edges = 0;
    let sharper = 0;
    for (const t of tiles) {
      const m = /\/tile\/7\/(\d+)\/(\d+)\?/.exec(t.src);
      assert.ok(m, t.src);
      const [x, y] = [Number(m[1]), Number(m[2])];
      const two = await rgbOf(fill(route2x, 7, x, y));
      const one = await rgbOf(fill(route, 7, x, y));
      const [left, top, w, h] = t.box;
      for (let Y = Math.ceil(Math.max(top, cy - 120) * 2); Y < Math.min(top + h, cy + 120) * 2; Y++) {
        for (let X = Math.ceil(Math.max(left, cx - 200) * 2); X < Math.min(left + w, cx + 200) * 2; X++) {
          // Where in the tile this device pixel's centre falls (the tile drawn w CSS px wide).
          const fu = ((X + 0.5) / 2 - left) / w;
          const fv = ((Y + 0.5) / 2 - top) / h;
          const hi = Math.min(511, Math.floor(fu * 512)) + Math.min(511, Math.floor(fv * 512)) * 512;
          const sharp2x = two.data.subarray(hi * 3, hi * 3 + 3);
          const scaled = bilinear(one, fu * 256 - 0.5, fv * 256 - 0.5);
          if (diff(sharp2x, scaled) < 30) continue;
          edges++;
          const i = (Y * W + X) * 3;
          const screen = shot.data.subarray(i, i + 3);
          if (diff(screen, sharp2x) < diff(screen, scaled)) sharper++;
        }
      }
    }
    assert.ok(edges >= 200, `${edges} device pixels where the @2x tile and the 1x scaled up differ`);
    assert.ok(sharper >= 0.8 * edges, `the screen shows the @2x tile at ${sharper} of ${edges} such pixels`);
    await ctx.close();
  });
});
