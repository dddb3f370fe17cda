// Ramps, high-DPI tiles and regional patches in a real browser (Debian's Chromium through
// playwright-core) against a real server and a real `gridcast build` of a store written by
// xarray + zarr-python 2 (test/python/ramps_store.py) whose fields are flat where it matters:
//   - +5 °C and +10 °C show the stepped ramp's own, clearly different colours; 0.2 mm of rain is
//     drawn and 0 mm is not;
//   - at device pixel ratio 3 the viewer asks for and draws the 512 px @2x tiles, with no hairline
//     of the background between tiles; at ratio 1 it asks for 256 px tiles;
//   - a regional patch sits on the global field: just outside its edge the global colour, just
//     inside a blend (the feathered edge), deep inside the patch's own colour;
//   - times in UTC and the reader's zone; legend labels inside the legend;
//   - overcast cloud, and 20 % cover too, stand out from clear sky on the land (ΔE*ab, DPR 1 and 2), and the
//     translucent cloud layer's tiles meet without a seam at DPR 2 and 3.
// The land fill and outlines are hidden before pixels are read, so "nothing drawn" is the map's
// own background colour.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { registry } from "../../src/registry/registry.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { cleanup, PYTHON, type TestServer, tempDir, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
const ARGS = CHROMIUM_ARGS;
const run = promisify(execFile);
const WIDTH = 900;
const HEIGHT = 600;

type Rgb = [number, number, number];

/** The colour a tile draws for a stored value, straight from the layer's palette. */
function rampColour(variable: string, value: number): Rgb {
  const p = buildPalette(registry.resolve(variable).style!);
  const i = p.lut(Math.fround(value)) * 4;
  assert.equal(p.rgba[i + 3], 255, `${variable} ${value} is drawn opaque`);
  return [p.rgba[i], p.rgba[i + 1], p.rgba[i + 2]];
}

/**
 * Overcast against clear sky on the land, in CIE 1976 ΔE*ab: the old pale ramp measured 8.3 here
 * (barely told apart); this ramp 41.7. Above 35 no one misses the difference.
 */
const CLOUD_DELTA_E = 35;
/** 20 % cover against clear sky on the land (issue 56): the pale veil gave 4, this ramp about 14. */
const LOW_CLOUD_DELTA_E = 10;

/** sRGB (0–255) to CIE L*a*b* (D65). */
function lab([r, g, b]: Rgb): Rgb {
  const lin = (c: number) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const X = (0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047;
  const Y = 0.2126 * R + 0.7152 * G + 0.0722 * B;
  const Z = (0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 / 116) * t + 16 / 116);
  return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
}

const deltaE = (a: Rgb, b: Rgb) => distance(lab(a), lab(b));

/** The median colour of the 9×9 CSS px around a place: a border line through it does not decide. */
function median(shot: Shot, lat: number, lon: number): Rgb {
  const px: Rgb[] = [];
  for (let dy = -4; dy <= 4; dy++) for (let dx = -4; dx <= 4; dx++) px.push(shot.at(lat, lon, dx, dy));
  return [0, 1, 2].map((k) => px.map((p) => p[k]).sort((a, b) => a - b)[px.length >> 1]) as Rgb;
}

const distance = (a: Rgb, b: Rgb) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/** Pixel position at zoom z in Leaflet's EPSG:3857 with 256-pixel tiles. */
function mercator(lat: number, lon: number, z: number): { x: number; y: number } {
  const size = 256 * 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return {
    x: ((lon + 180) / 360) * size,
    y: ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * size,
  };
}

interface Shot {
  data: Buffer;
  width: number;
  height: number;
  scale: number;
  view: { z: number; lat: number; lon: number };
  /** Colour at a CSS offset from a place (dx, dy in CSS px). */
  at(lat: number, lon: number, dx?: number, dy?: number): Rgb;
}

async function shoot(page: Page, view: Shot["view"], scale: number): Promise<Shot> {
  const png = await page.locator("#map").screenshot();
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, `ramps-${view.z}-${view.lat}-${view.lon}@${scale}x.png`), png);
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const c = mercator(view.lat, view.lon, view.z);
  return {
    data,
    width: info.width,
    height: info.height,
    scale,
    view,
    at(lat, lon, dx = 0, dy = 0) {
      const p = mercator(lat, lon, view.z);
      // The map's centre is the view's centre (the control bar takes the top of the page).
      const x = Math.round((info.width / scale / 2 + p.x - c.x + dx) * scale);
      const y = Math.round((info.height / scale / 2 + p.y - c.y + dy) * scale);
      assert.ok(x >= 0 && y >= 0 && x < info.width && y < info.height, `${lat},${lon} on screen`);
      const i = (y * info.width + x) * 3;
      return [data[i], data[i + 1], data[i + 2]];
    },
  };
}

describe("ramps, @2x tiles and patches in Chromium", () => {
  let browser: Browser;
  let root: string;
  let server: TestServer;
  let background: Rgb;

  before(async () => {
    requireChromium();
    root = tempDir("gridcast-ramps-");
    const store = join(root, "store");
    await run(PYTHON, [join(import.meta.dirname, "../python/ramps_store.py"), store]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "5"];
    args.push(
      "--groups",
      "global,alps",
      "--vars",
      "t2m,tp_1h,tcc",
      "--leads",
      "1",
      "--runs",
      "all",
      "--no-orientation",
    );
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (root) cleanup(root);
  });

  /** A page on a view, land and outlines hidden once the base tiles (and the global ones under a patch) are in. */
  async function open(hash: string, scale: number, extra: { timezoneId?: string } = {}, keepLand = false) {
    const ctx = await browser.newContext({
      viewport: { width: WIDTH, height: HEIGHT },
      deviceScaleFactor: scale,
      ...extra,
    });
    const page = await ctx.newPage();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#${hash}`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    if (keepLand) {
      // The land fill comes from its own fetch: without it, "clear sky on land" is the sea colour.
      await page.waitForFunction(() =>
        performance.getEntriesByType("mark").some((m) => m.name.startsWith("gridcast:outlines-")),
      );
    } else {
      await page.addStyleTag({ content: ".leaflet-land-pane, .leaflet-outlines-pane { display: none !important; }" });
    }
    // Every tile image in the tile pane decoded (the global field under a patch loads on its own).
    await page.waitForFunction(() => {
      const imgs = Array.from(document.querySelectorAll(".leaflet-tile-pane img")) as HTMLImageElement[];
      return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0);
    });
    // A frame drawn after the style change (the screenshot renders one too; this says so, not a guess).
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    return { ctx, page, requests, errors };
  }

  /** Where the map's controls are, in device pixels of a map screenshot, with room for their shadows. */
  async function controlsOf(page: Page, scale: number) {
    const boxes = await page.evaluate(() =>
      [".leaflet-control-zoom", ".legend", ".leaflet-control-attribution"].map((q) => {
        const r = document.querySelector(q)!.getBoundingClientRect();
        const m = document.getElementById("map")!.getBoundingClientRect();
        return [r.left - m.left, r.top - m.top, r.right - m.left, r.bottom - m.top];
      }),
    );
    const m = 8 * scale;
    return (x: number, y: number) =>
      boxes.some(
        ([l, t, r, b]) => x >= l * scale - m && x <= r * scale + m && y >= t * scale - m && y <= b * scale + m,
      );
  }

  for (const scale of [1, 2]) {
    test(`clouds at DPR ${scale}: overcast stands out from clear sky on the land by ΔE*ab ≥ ${CLOUD_DELTA_E}`, async () => {
      const view = { z: 4, lat: 48, lon: 20 };
      const { ctx, page } = await open(
        `layer=global.tcc&lead=1&map=${view.z}/${view.lat}/${view.lon}`,
        scale,
        {},
        true,
      );
      const shot = await shoot(page, view, scale);
      // Land in both: France under a clear sky, Ukraine under overcast (the store's 10..60° E box).
      const clear = median(shot, 47, 2);
      const overcast = median(shot, 50, 30);
      const dE = deltaE(clear, overcast);
      assert.ok(dE >= CLOUD_DELTA_E, `clear ${clear} overcast ${overcast}: ΔE*ab ${dE.toFixed(1)}`);
      // Low cover is seen too: 20 % over Spain against the clear sky over France, both land.
      const thin = median(shot, 39.5, -4.5);
      const dThin = deltaE(clear, thin);
      assert.ok(dThin >= LOW_CLOUD_DELTA_E, `clear ${clear} 20 % cover ${thin}: ΔE*ab ${dThin.toFixed(1)}`);
      assert.ok(deltaE(thin, overcast) >= LOW_CLOUD_DELTA_E, "20 % is not drawn as overcast");
      await ctx.close();
    });
  }

  for (const scale of [2, 3]) {
    test(`clouds at DPR ${scale}: no seam between the translucent layer's tiles`, async () => {
      // All of this view is inside the overcast box: one flat colour over the map's background.
      const view = { z: 5, lat: 50, lon: 35 };
      const { ctx, page } = await open(`layer=global.tcc&lead=1&map=${view.z}/${view.lat}/${view.lon}`, scale);
      const shot = await shoot(page, view, scale);
      const flat = shot.at(view.lat, view.lon);
      const covered = await controlsOf(page, scale);
      let seams = 0;
      // The outermost CSS pixel aside: the element screenshot's rounded edge may take in the bar.
      for (let y = scale; y < shot.height - scale; y++) {
        for (let x = scale; x < shot.width - scale; x++) {
          if (covered(x, y)) continue;
          const i = (y * shot.width + x) * 3;
          if (distance([shot.data[i], shot.data[i + 1], shot.data[i + 2]], flat) > 2) seams++;
        }
      }
      assert.equal(seams, 0, `${seams} device pixels off the flat cloud colour ${flat} (a seam between tiles)`);
      await ctx.close();
    });
  }

  test("the map's own background, for 'nothing drawn'", async () => {
    const ctx = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
    const page = await ctx.newPage();
    await page.goto(`${server.url}/#layer=global.t2m&lead=1&map=4/48/10`);
    await page.locator("#map").waitFor();
    background = await page.evaluate(() => {
      const c = getComputedStyle(document.getElementById("map")!).backgroundColor.match(/\d+/g)!.map(Number);
      return [c[0], c[1], c[2]] as [number, number, number];
    });
    await ctx.close();
  });

  test("temperature: +5 °C and +10 °C in the stepped ramp's colours, far apart", async () => {
    const view = { z: 4, lat: 48, lon: 10 };
    const { ctx, page, errors } = await open(`layer=global.t2m&lead=1&map=${view.z}/${view.lat}/${view.lon}`, 1);
    const shot = await shoot(page, view, 1);
    const five = rampColour("t2m", 278.15);
    const ten = rampColour("t2m", 283.15);
    // Two colour classes a reader tells apart at a glance, not two shades of one.
    assert.ok(distance(five, ten) > 60, `ramp: ${five} vs ${ten}`);
    for (const [lat, lon, want] of [
      [48, 2, five],
      [52, -4, five],
      [48, 18, ten],
      [44, 22, ten],
    ] as const) {
      const got = shot.at(lat, lon);
      assert.ok(distance(got, want) <= 3, `${lat},${lon}: ${got} vs ramp ${want}`);
    }
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  test("precipitation: 0.2 mm is drawn, 0 mm is not", async () => {
    const view = { z: 4, lat: 45, lon: 5 };
    const { ctx, page } = await open(`layer=global.tp_1h&lead=1&map=${view.z}/${view.lat}/${view.lon}`, 1);
    const shot = await shoot(page, view, 1);
    const wet = rampColour("tp_1h", 0.0002);
    const got = shot.at(50, 5);
    assert.ok(distance(got, wet) <= 3, `0.2 mm: ${got} vs ramp ${wet}`);
    // Light rain stands out at a glance (the smooth ramp before drew it 43 apart from the sea colour).
    assert.ok(distance(got, background) > 60, `0.2 mm stands out from the background: ${got} vs ${background}`);
    const dry = shot.at(33, 5);
    assert.ok(distance(dry, background) <= 3, `0 mm draws nothing: ${dry} vs ${background}`);
    await ctx.close();
  });

  test("@2x tiles: catalogued, served as files and through the route up to hidpi_maxzoom, 404 above", async () => {
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    const layer = catalog.layers.find((l: { id: string }) => l.id === "global.t2m");
    assert.equal(layer.hidpi_maxzoom, 5, "the build's top (5)");
    const lead = layer.runs[0].leads[0];
    const fill = (t: string, z: number, x: number, y: number) =>
      `${server.url}${t.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y))}`;
    for (const url of [fill(lead.route_2x, 5, 16, 10), fill(lead.tiles_2x, 5, 16, 10)]) {
      const r = await fetch(url);
      assert.equal(r.status, 200, url);
      const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
      assert.deepEqual([meta.width, meta.height], [512, 512], url);
    }
    const one = await fetch(fill(lead.route, 5, 16, 10));
    assert.equal((await sharp(Buffer.from(await one.arrayBuffer())).metadata()).width, 256);
    const above = await fetch(fill(lead.route_2x, 6, 32, 20));
    assert.equal(above.status, 404);
    assert.match(above.headers.get("content-type") ?? "", /problem\+json/);
    const bad = await fetch(fill(lead.route, 4, 8, 5).replace("lead=1", "lead=1&scale=3"));
    assert.equal(bad.status, 400);
  });

  test("device pixel ratio 3: @2x tiles asked for and drawn, no seam between tiles", async () => {
    // North of the Alps patch (44..50° N), which the temperature layer draws over the global field.
    const view = { z: 4, lat: 66, lon: 10 };
    const hash = `layer=global.t2m&lead=1&map=${view.z}/${view.lat}/${view.lon}`;
    const dense = await open(hash, 3);
    const base = (rs: string[]) => rs.filter((u) => u.includes("/api/forecast/tile/") && u.includes("global.t2m"));
    const asked = base(dense.requests);
    assert.ok(asked.length >= 4, `${asked.length} tile requests`);
    assert.ok(
      asked.every((u) => new URL(u).searchParams.get("scale") === "2"),
      `all @2x: ${asked.filter((u) => !u.includes("scale=2")).join(" ")}`,
    );
    const sizes = await dense.page.evaluate(() =>
      Array.from(document.querySelectorAll(".forecast-tiles img")).map((i) => (i as HTMLImageElement).naturalWidth),
    );
    assert.ok(sizes.length >= 4 && sizes.every((w) => w === 512), `natural widths ${sizes.join(",")}`);
    // Drawn: the ramp's colours at device resolution.
    const shot = await shoot(dense.page, view, 3);
    assert.equal(shot.width, WIDTH * 3);
    assert.ok(distance(shot.at(66, 2), rampColour("t2m", 278.15)) <= 3, `${shot.at(66, 2)}`);
    assert.ok(distance(shot.at(66, 18), rampColour("t2m", 283.15)) <= 3, `${shot.at(66, 18)}`);
    // The map is covered by two flat colours (their bilinear step at 10° E aside): a seam between
    // tiles, darker (the background through a gap) or lighter (two tiles added where they overlap),
    // would be a line of device pixels in neither colour.
    const five = rampColour("t2m", 278.15);
    const ten = rampColour("t2m", 283.15);
    const step = shot.at(66, 10);
    const controls = await dense.page.evaluate(() =>
      [".leaflet-control-zoom", ".legend", ".leaflet-control-attribution"].map((q) => {
        const r = document.querySelector(q)!.getBoundingClientRect();
        const m = document.getElementById("map")!.getBoundingClientRect();
        return [r.left - m.left, r.top - m.top, r.right - m.left, r.bottom - m.top];
      }),
    );
    // Controls and their shadows (8 CSS px) aside.
    const m = 24;
    const covered = (x: number, y: number) =>
      !controls.some(([l, t, r, b]) => x >= l * 3 - m && x <= r * 3 + m && y >= t * 3 - m && y <= b * 3 + m);
    const stepX = (shot.width / 3 / 2 + mercator(66, 10, 4).x - mercator(view.lat, view.lon, 4).x) * 3;
    let seams = 0;
    for (let y = 0; y < shot.height; y++) {
      for (let x = 0; x < shot.width; x++) {
        if (Math.abs(x - stepX) < 3 * 24 || !covered(x, y)) continue;
        const i = (y * shot.width + x) * 3;
        const c: Rgb = [shot.data[i], shot.data[i + 1], shot.data[i + 2]];
        if (distance(c, five) > 3 && distance(c, ten) > 3) seams++;
      }
    }
    assert.equal(seams, 0, `${seams} device pixels in neither colour (a seam between tiles); step at ${step}`);
    await dense.ctx.close();

    // At ratio 1 the same view takes 256 px tiles.
    const plain = await open(hash, 1);
    const askedPlain = base(plain.requests);
    assert.ok(askedPlain.length >= 4 && askedPlain.every((u) => !u.includes("scale=2")), askedPlain.join(" "));
    await plain.ctx.close();
  });

  test("a regional patch sits on the global field, its edge feathered", async () => {
    const view = { z: 5, lat: 47, lon: 10 };
    const { ctx, page, errors } = await open(`layer=alps.t2m&lead=1&map=${view.z}/${view.lat}/${view.lon}`, 1);
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    const [west, south, east, north] = catalog.layers.find((l: { id: string }) => l.id === "alps.t2m").bounds;
    const shot = await shoot(page, view, 1);
    const patch = rampColour("t2m", 293.15);
    const five = rampColour("t2m", 278.15);
    const ten = rampColour("t2m", 283.15);
    // Deep inside: the patch's own colour.
    assert.ok(distance(shot.at(47, 10), patch) <= 3, `inside ${shot.at(47, 10)} vs ${patch}`);
    // Just outside each edge: the global field (west of 10° E +5 °C, east of it +10 °C), not a hole.
    for (const [what, lat, lon, dx, dy, want] of [
      ["west", 47, west, -3, 0, five],
      ["east", 47, east, 3, 0, ten],
      ["north", north, 7, 0, -3, five],
      ["south", south, 13, 0, 3, ten],
    ] as const) {
      const got = shot.at(lat, lon, dx, dy);
      assert.ok(distance(got, background) > 30, `${what} of the patch is not empty: ${got}`);
      assert.ok(distance(got, want) <= 3, `${what} of the patch shows the global field: ${got} vs ${want}`);
    }
    // Just inside the west edge: neither the global colour nor the patch's, a blend of the two.
    const edge = shot.at(47, west, 8, 0);
    assert.ok(
      distance(edge, patch) > 10 && distance(edge, five) > 10,
      `feathered: ${edge} between ${five} and ${patch}`,
    );
    assert.ok(distance(edge, patch) + distance(edge, five) < distance(patch, five) * 1.3, `a blend: ${edge}`);
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  test("times in UTC and the reader's zone; legend labels inside the legend", async () => {
    const { ctx, page } = await open("layer=global.t2m&lead=1&map=4/48/10", 1, { timezoneId: "Europe/Berlin" });
    const lead = (await page.locator("#lead-text").textContent()) ?? "";
    // 2026-11-20T01:00 UTC is 02:00 in Berlin (CET, UTC+1).
    assert.match(lead, /01:00 UTC \(.*02:00 (CET|GMT\+1)\)/, lead);
    await page.locator(".legend-ticks span").nth(2).waitFor();
    const inside = await page.evaluate(() => {
      const box = document.querySelector(".legend-ticks")!.getBoundingClientRect();
      return Array.from(document.querySelectorAll(".legend-ticks span")).map((s) => {
        const r = s.getBoundingClientRect();
        return { text: s.textContent, ok: r.left >= box.left && r.right <= box.right };
      });
    });
    assert.ok(inside.length >= 4 && inside.every((t) => t.ok), JSON.stringify(inside));
    await ctx.close();
  });
});
