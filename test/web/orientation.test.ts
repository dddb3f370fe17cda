// The orientation layer in a real browser (Debian's Chromium through playwright-core) against a
// real server and a real `gridcast build`: at zoom 6 the viewer shows the layer's tiles over the
// forecast, with a place label at a known city and a state border at a known line, read back
// from the tiles the page drew; a label that runs over a tile seam is the same label on both
// sides of it (drawn once, not cut, not doubled); and at device pixel ratio 3 the viewer draws the
// layer's @2x tiles, drawn at twice the scale: labels and lines as large as at 1x, but sharper
// than the 1x tile scaled up.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { worldPixel, zoomLayout } from "../../src/render/orientation.ts";
import { TILE_SIZE } from "../../src/render/tiles.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const ARGS = CHROMIUM_ARGS;
const Z = 6;
const run = promisify(execFile);

/** One 256 px tile as the page drew it, RGBA (read back through a canvas). */
/** A tile's RGBA bytes, 256 × 256 × 4. */
type Tile = Uint8Array;

/** Bytes the page sends as base64: a JSON array of numbers is ~4× larger and minutes to pass on a loaded machine. */
const bytesOf = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, "base64"));

describe("orientation layer in Chromium", () => {
  let browser: Browser;
  let store: string;
  let server: TestServer;

  before(async () => {
    requireChromium();
    [browser, store] = await Promise.all([chromium.launch({ executablePath: CHROMIUM, args: ARGS }), sampleStore()]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", String(Z)];
    args.push("--groups", "global", "--vars", "t2m", "--leads", "0");
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (store) cleanup(resolve(store, ".."));
  });

  /** Opens the viewer at (lat, lon), zoom 6, and returns the orientation tiles it drew, by "x/y". */
  async function tilesAt(lat: number, lon: number): Promise<{ page: Page; tiles: Map<string, Tile> }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#map=${Z}/${lat}/${lon}`);
    await page.waitForFunction(
      () => {
        const imgs = document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile");
        const base = document.querySelectorAll(".forecast-tiles img.leaflet-tile-loaded");
        return (
          base.length > 0 &&
          imgs.length > 0 &&
          Array.from(imgs).every((i) => i.classList.contains("leaflet-tile-loaded"))
        );
      },
      null,
      { timeout: 120_000 }, // a hang detector: a loaded two-core machine has taken a minute
    );
    const drawn = await page.evaluate(() => {
      const pane = document.querySelector(".leaflet-orientation-pane") as HTMLElement;
      const tilePane = document.querySelector(".leaflet-tile-pane") as HTMLElement;
      const canvas = document.createElement("canvas");
      canvas.width = canvas.height = 256;
      const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
      const b64 = (d: Uint8ClampedArray) => {
        let s = "";
        for (let i = 0; i < d.length; i += 0x8000) s += String.fromCharCode(...d.subarray(i, i + 0x8000));
        return btoa(s);
      };
      const out: [string, string][] = [];
      for (const img of Array.from(
        document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile-loaded"),
      )) {
        const m = /\/tile\/(\d+)\/(\d+)\/(\d+)\?/.exec(img.dataset.src ?? "");
        if (!m || Number(m[1]) !== 6) continue;
        ctx.clearRect(0, 0, 256, 256);
        ctx.drawImage(img, 0, 0);
        out.push([`${m[2]}/${m[3]}`, b64(ctx.getImageData(0, 0, 256, 256).data)]);
      }
      return {
        tiles: out,
        above: Number(getComputedStyle(pane).zIndex) > Number(getComputedStyle(tilePane).zIndex),
      };
    });
    assert.deepEqual(errors, []);
    assert.ok(drawn.above, "the orientation pane is over the forecast tiles");
    return { page, tiles: new Map(drawn.tiles.map(([k, b]) => [k, bytesOf(b)])) };
  }

  /** Tile key and pixel of (lon, lat) at zoom 6. */
  function locate(lon: number, lat: number): { key: string; px: number; py: number } {
    const [wx, wy] = worldPixel(lon, lat, Z);
    const tx = Math.floor(wx / TILE_SIZE);
    const ty = Math.floor(wy / TILE_SIZE);
    return { key: `${tx}/${ty}`, px: Math.floor(wx) - tx * TILE_SIZE, py: Math.floor(wy) - ty * TILE_SIZE };
  }

  test("the catalog lists the layer, with one static run and no legend", async () => {
    const catalog = (await get(`${server.url}/api/forecast/catalog`)).json();
    const o = catalog.layers.find((l: { id: string }) => l.id === "orientation");
    assert.ok(o, "orientation layer in the catalog");
    assert.equal(o.role, "orientation");
    assert.equal(o.legend, null);
    assert.equal(o.maxzoom, Z);
    assert.deepEqual(
      o.runs.map((r: { leads: unknown[] }) => r.leads.length),
      [1],
    );
    // @2x tiles up to the top, as base layers and overlays.
    assert.equal(o.hidpi_maxzoom, Z);
    assert.match(o.runs[0].leads[0].tiles_2x, /@2x\.png$/);
    assert.match(o.runs[0].leads[0].route_2x, /scale=2/);
  });

  /** The page opened on Berlin, shared by the label and the seam checks (one page load on a busy machine). */
  let europe: Promise<{ page: Page; tiles: Map<string, Tile> }> | undefined;
  const berlinView = () => {
    europe ??= tilesAt(52.524, 13.405);
    return europe;
  };

  test("a place label at Berlin and state borders in Colorado at zoom 6", async () => {
    const berlin = locate(13.405, 52.524);
    const { tiles } = await berlinView();
    const tile = tiles.get(berlin.key);
    assert.ok(tile, `tile ${berlin.key} drawn by the page (have ${[...tiles.keys()].join(" ")})`);
    // Dark text pixels and light halo pixels in the 40×14 px around the city's point.
    let text = 0;
    let halo = 0;
    for (let y = berlin.py - 7; y <= berlin.py + 7; y++) {
      for (let x = berlin.px - 20; x <= berlin.px + 20; x++) {
        const i = (y * 256 + x) * 4;
        if (tile[i + 3] > 200 && tile[i] < 70 && tile[i + 1] < 70) text++;
        if (tile[i + 3] > 120 && tile[i] > 200 && tile[i + 1] > 200) halo++;
      }
    }
    assert.ok(text > 25, `text pixels at Berlin: ${text}`);
    assert.ok(halo > 25, `halo pixels at Berlin: ${halo}`);

    // The Utah–Colorado line (109.05° W) at 38° N: border ink in its column, none 12 px east.
    const line = locate(-109.05, 38);
    const west = await tilesAt(38, -109.05);
    const t = west.tiles.get(line.key);
    assert.ok(t, `tile ${line.key} drawn`);
    let best = 0;
    for (let x = line.px - 2; x <= line.px + 2; x++) best = Math.max(best, t[(line.py * 256 + x) * 4 + 3]);
    assert.ok(best > 60, `border alpha ${best}`);
    assert.equal(t[(line.py * 256 + line.px + 12) * 4 + 3], 0, "nothing beside the border");
    await west.page.close();
  });

  test("a label over a tile seam is one label, whole, split between the two tiles", async () => {
    // Where a label's text crosses a seam between two tiles the page drew (the build's own
    // placement says where to look; the pixels are the page's).
    const [layout, { page, tiles }] = await Promise.all([zoomLayout(Z), berlinView()]);
    const seam = layout.labels.find((l) => {
      const cut = (Math.floor(l.x / TILE_SIZE) + 1) * TILE_SIZE;
      const tx = cut / TILE_SIZE - 1;
      const ty = Math.floor(l.y / TILE_SIZE);
      return (
        l.x + l.mask.pad + 8 < cut &&
        cut < l.x + l.w - 8 &&
        ty === Math.floor((l.y + l.h - 1) / TILE_SIZE) &&
        tiles.has(`${tx}/${ty}`) &&
        tiles.has(`${tx + 1}/${ty}`)
      );
    });
    assert.ok(seam, "a label crossing a vertical seam in view");
    const tx = Math.floor(seam.x / TILE_SIZE);
    const ty = Math.floor(seam.y / TILE_SIZE);
    const left = tiles.get(`${tx}/${ty}`);
    const right = tiles.get(`${tx + 1}/${ty}`);
    assert.ok(left && right, "both tiles drawn");
    const at = (x: number, y: number): number[] => {
      const t = x < TILE_SIZE ? left : right;
      const i = (y * TILE_SIZE + (x % TILE_SIZE)) * 4;
      return Array.from(t.subarray(i, i + 4));
    };
    // Over the label's box in the stitched pair: text where the label's own mask has text, halo
    // where it has only halo. A cut label lacks the text on one side; a doubled one puts text
    // where this one has halo.
    const x0 = seam.x - tx * TILE_SIZE;
    const y0 = seam.y - ty * TILE_SIZE;
    const { mask } = seam;
    const counts = { textLeft: 0, textRight: 0, halo: 0 };
    for (let my = 0; my < mask.height; my++) {
      for (let mx = 0; mx < mask.width; mx++) {
        const m = my * mask.width + mx;
        const [r, g, , a] = at(x0 + mx, y0 + my);
        if (mask.alpha[m] >= 250) {
          assert.ok(a > 200 && r < 70 && g < 70, `text at ${mx},${my} of ${seam.place.name}: ${[r, g, a]}`);
          if (x0 + mx < TILE_SIZE) counts.textLeft++;
          else counts.textRight++;
        } else if (mask.alpha[m] === 0 && mask.halo[m] === 255) {
          assert.ok(r > 150 && g > 150, `halo at ${mx},${my} of ${seam.place.name}: ${[r, g, a]}`);
          counts.halo++;
        }
      }
    }
    assert.ok(counts.textLeft > 10 && counts.textRight > 10 && counts.halo > 5, JSON.stringify(counts));
    await page.close();
  });

  test("device pixel ratio 3: the @2x tiles, as large as the 1x ones on screen and sharper", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 }, deviceScaleFactor: 3 });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const z = Z - 1;
    await page.goto(`${server.url}/#map=${z}/50.5/10.5`);
    await page.waitForFunction(
      () => {
        const imgs = document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile");
        return imgs.length > 0 && Array.from(imgs).every((i) => i.classList.contains("leaflet-tile-loaded"));
      },
      null,
      { timeout: 120_000 }, // a hang detector, as above
    );
    // Each @2x tile as the page drew it, and the 1x tile of the same place scaled up to 512 px by
    // the browser (what a dense screen showed before): alpha of both, by tile.
    const pairs = await page.evaluate(async () => {
      const imgs = Array.from(
        document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile-loaded"),
      );
      const canvas = document.createElement("canvas");
      canvas.width = canvas.height = 512;
      const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
      const alpha = (img: HTMLImageElement | HTMLCanvasElement) => {
        ctx.clearRect(0, 0, 512, 512);
        ctx.imageSmoothingEnabled = true;
        ctx.imageSmoothingQuality = "high";
        ctx.drawImage(img, 0, 0, 512, 512);
        const d = ctx.getImageData(0, 0, 512, 512).data;
        const a = new Uint8Array(512 * 512);
        for (let i = 0; i < a.length; i++) a[i] = d[i * 4 + 3];
        let s = "";
        for (let i = 0; i < a.length; i += 0x8000) s += String.fromCharCode(...a.subarray(i, i + 0x8000));
        return btoa(s);
      };
      const out: { src: string; natural: number; hi: string; lo: string }[] = [];
      for (const img of imgs) {
        const one = new Image();
        const src = img.dataset.src ?? "";
        one.src = src.replace("&scale=2", "");
        await one.decode();
        out.push({ src, natural: img.width, hi: alpha(img), lo: alpha(one) });
      }
      return out;
    });
    await page.close();
    assert.deepEqual(errors, []);
    assert.ok(pairs.length > 0);
    for (const p of pairs) {
      assert.match(p.src, new RegExp(`/tile/${z}/\\d+/\\d+\\?.*scale=2`), p.src);
      assert.equal(p.natural, 512, p.src);
    }
    // Strong steps between neighbouring pixels (edges), total ink and its centre, over the tiles with ink.
    const measure = (a: Uint8Array) => {
      let edges = 0;
      let ink = 0;
      let cx = 0;
      let cy = 0;
      for (let y = 0; y < 512; y++) {
        for (let x = 0; x < 512; x++) {
          const v = a[y * 512 + x];
          if (x > 0 && Math.abs(v - a[y * 512 + x - 1]) >= 96) edges++;
          ink += v;
          cx += v * x;
          cy += v * y;
        }
      }
      return { edges, ink, cx: cx / (ink || 1), cy: cy / (ink || 1) };
    };
    let hiEdges = 0;
    let loEdges = 0;
    let inked = 0;
    for (const p of pairs) {
      const hi = measure(bytesOf(p.hi));
      const lo = measure(bytesOf(p.lo));
      if (lo.ink < 255 * 200) continue; // nearly empty tiles say nothing
      inked++;
      // The same drawing at the same size: ink in the same place, about as much of it.
      assert.ok(
        Math.abs(hi.cx - lo.cx) < 6 && Math.abs(hi.cy - lo.cy) < 6,
        `${p.src}: centre ${JSON.stringify([hi, lo])}`,
      );
      const ratio = hi.ink / lo.ink;
      assert.ok(ratio > 0.6 && ratio < 1.5, `${p.src}: ink ratio ${ratio.toFixed(2)}`);
      hiEdges += hi.edges;
      loEdges += lo.edges;
    }
    assert.ok(inked >= 4, `${inked} tiles with ink`);
    // Sharper: an anti-aliased edge one device pixel wide, where the scaled-up tile spreads it over two.
    assert.ok(hiEdges > 3 * loEdges, `strong edges: @2x ${hiEdges}, 1x scaled up ${loEdges}`);
  });
});
