// Overlays on a dense screen at the top of the pyramid: a real `gridcast build --max-zoom 7` of a
// regional store written by xarray + zarr-python 2 (test/python/overlay_patch_store.py: isobars
// round a low and wind turning round it), tiles fetched through the route:
//   - the catalog gives the isobars and the wind arrows @2x tiles up to zoom 7, and the route
//     serves their zoom-7 @2x tiles at 512 px;
//   - those @2x tiles are sharp: over the same tiles, at least 1.5 times as many pixels with a
//     strong step to a neighbour (the edges of lines, arrow heads and labels) as the 1x tile
//     scaled up twice as a browser would (bilinear), which smears each step over two pixels;
//   - and they draw what the 1x tiles draw at twice the scale, not thinner or denser: their ink
//     (alpha summed, a quarter per @2x pixel) is within a quarter of the 1x tiles'.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import sharp from "sharp";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
/** Zoom-7 tiles over the low at 48° N 2° E and round it. */
const TILES = [
  [64, 44],
  [65, 44],
  [64, 45],
  [65, 45],
];
/** A step of this much grey (0..255) between neighbours counts as a sharp edge. */
const STRONG = 64;

/** A tile's grey level over a white page (alpha composited), as a screen shows it. */
async function greyOf(url: string): Promise<{ grey: Float64Array; size: number; ink: number }> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  assert.equal(info.width, info.height);
  const grey = new Float64Array(info.width * info.height);
  let ink = 0;
  for (let i = 0; i < grey.length; i++) {
    const a = data[i * 4 + 3] / 255;
    ink += a;
    const g = (data[i * 4] + data[i * 4 + 1] + data[i * 4 + 2]) / 3;
    grey[i] = g * a + 255 * (1 - a);
  }
  return { grey, size: info.width, ink };
}

/** The image scaled up twice, bilinear at pixel centres (what a browser does with a 1x tile at DPR 2). */
function upscale({ grey, size }: { grey: Float64Array; size: number }): { grey: Float64Array; size: number } {
  const n = size * 2;
  const out = new Float64Array(n * n);
  const at = (x: number, y: number) =>
    grey[Math.min(size - 1, Math.max(0, y)) * size + Math.min(size - 1, Math.max(0, x))];
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; x++) {
      const u = (x + 0.5) / 2 - 0.5;
      const v = (y + 0.5) / 2 - 0.5;
      const x0 = Math.floor(u);
      const y0 = Math.floor(v);
      const fx = u - x0;
      const fy = v - y0;
      out[y * n + x] =
        (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) +
        (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
    }
  }
  return { grey: out, size: n };
}

/** Pixels whose grey differs from the right or lower neighbour by at least STRONG. */
function sharpEdges({ grey, size }: { grey: Float64Array; size: number }): number {
  let count = 0;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const g = grey[y * size + x];
      const right = x + 1 < size ? Math.abs(grey[y * size + x + 1] - g) : 0;
      const below = y + 1 < size ? Math.abs(grey[(y + 1) * size + x] - g) : 0;
      if (Math.max(right, below) >= STRONG) count++;
    }
  }
  return count;
}

describe("overlays' @2x tiles at zoom 7", () => {
  let root: string;
  let server: TestServer;
  const routes = new Map<string, { one: string; two: string; hidpi: number }>();

  before(async () => {
    root = tempDir("gridcast-overlays-hidpi-");
    const store = join(root, "store");
    await run(PYTHON, [join(ROOT, "test/python/overlay_patch_store.py"), store]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "7"];
    await run(process.execPath, ["bin/gridcast", ...args, "--vars", "isobars,wind_arrows", "--no-orientation"], {
      cwd: ROOT,
    });
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    for (const l of catalog.layers) {
      const lead = l.runs[0].leads[0];
      routes.set(l.id, { one: lead.route, two: lead.route_2x, hidpi: l.hidpi_maxzoom });
    }
  });

  after(async () => {
    await server?.close();
    if (root) cleanup(root);
  });

  const fill = (t: string, x: number, y: number) =>
    `${server.url}${t.replace("{z}", "7").replace("{x}", String(x)).replace("{y}", String(y))}`;

  for (const id of ["patch.isobars", "patch.wind_arrows"]) {
    test(`${id}: @2x tiles to zoom 7, with at least 1.5× the sharp edges of the 1x tile scaled up`, async (t) => {
      const layer = routes.get(id);
      assert.ok(layer, `${id} in the catalog (${[...routes.keys()].join(", ")})`);
      assert.equal(layer.hidpi, 7, "the catalog gives @2x tiles up to the top zoom");
      assert.ok(layer.two, "an @2x route per lead");
      let two = 0;
      let upscaled = 0;
      let ink2x = 0;
      let ink1x = 0;
      for (const [x, y] of TILES) {
        const hi = await greyOf(fill(layer.two, x, y));
        const lo = await greyOf(fill(layer.one, x, y));
        assert.deepEqual([hi.size, lo.size], [512, 256]);
        two += sharpEdges(hi);
        ink2x += hi.ink / 4;
        ink1x += lo.ink;
        upscaled += sharpEdges(upscale(lo));
      }
      t.diagnostic(
        `${id}: ${two} sharp pixels at @2x, ${upscaled} in the 1x scaled up (×${(two / upscaled).toFixed(2)}), ink ×${(ink2x / ink1x).toFixed(2)}`,
      );
      assert.ok(
        ink2x > 0.75 * ink1x && ink2x < 1.33 * ink1x,
        `${id}: ink of the @2x tiles ${ink2x.toFixed(0)} (a quarter per pixel) against ${ink1x.toFixed(0)} at 1x`,
      );
      assert.ok(upscaled > 100, `the 1x tiles hold drawn overlay (${upscaled} sharp pixels scaled up)`);
      assert.ok(
        two >= 1.5 * upscaled,
        `${id}: ${two} sharp pixels in the @2x tiles against ${upscaled} in the 1x tiles scaled up (×${(two / upscaled).toFixed(2)})`,
      );
    });
  }
});
