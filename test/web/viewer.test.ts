// The map viewer in a real browser (Debian's Chromium through playwright-core) against a real
// server and a real `gridcast build`: base layers and overlays that are drawn (not blank, not
// flat), legends with labelled ticks in display units, accumulated layers opening on a lead with
// data, the popup following the lead and the unit choice, the slider growing while a build
// publishes more leads, a 390 px wide phone view, and no character a font may lack.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import sharp from "sharp";
import { runBuild } from "../../src/pipeline/run.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
/**
 * Catches a page that hangs, not a slow machine: two test runs at once on two cores have
 * taken seconds here. The measured time is printed; speed belongs in bench/.
 */
const LOAD_BUDGET_MS = 20_000;
const ARGS = CHROMIUM_ARGS;
/** Characters every common UI font has: printable ASCII, Latin-1, a little punctuation and the minus sign (Leaflet's zoom out). */
const SAFE_TEXT = /^[\x20-\x7e\u00a0-\u00ff\n\t–—…“”‘’·→−]*$/u;

const run = promisify(execFile);

describe("map viewer in Chromium", () => {
  let browser: Browser;
  let store: string;
  const servers: TestServer[] = [];

  before(async () => {
    requireChromium();
    [browser, store] = await Promise.all([chromium.launch({ executablePath: CHROMIUM, args: ARGS }), sampleStore()]);
  });

  after(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
    if (store) cleanup(resolve(store, ".."));
  });

  async function serve(): Promise<TestServer> {
    const s = await testServer(store);
    servers.push(s);
    return s;
  }

  async function build(server: TestServer, leads: string): Promise<void> {
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "3"];
    args.push("--groups", "global,europe", "--vars", "t2m,tp_1h,u10,v10,msl", "--leads", leads, "--runs", "all");
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  }

  async function open(url: string, width = 1200, height = 800): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width, height } });
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`page: ${e.message}`));
    await page.goto(url);
    return { page, errors };
  }

  test("layers, overlays, legends, popups and a catalog that grows while a build publishes", async (t) => {
    const server = await serve();
    await build(server, "0,1");
    const view = { z: 4, lat: 48, lon: 10 };
    const { page, errors } = await open(`${server.url}/?refresh=1#map=${view.z}/${view.lat}/${view.lon}`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const timing = await page.evaluate(() => {
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      const at = (name: string) => performance.getEntriesByName(name)[0].startTime - nav.domContentLoadedEventStart;
      return { firstTile: at("gridcast:first-tile"), allTiles: at("gridcast:tiles-loaded") };
    });
    t.diagnostic(
      `DOMContentLoaded → first tile ${timing.firstTile.toFixed(0)} ms, → loaded ${timing.allTiles.toFixed(0)} ms`,
    );
    assert.ok(timing.firstTile < LOAD_BUDGET_MS, `first tile after ${timing.firstTile} ms`);

    // Opens on global 2 m temperature, in °C with several labelled ticks, drawn and not flat.
    assert.equal(await page.locator("#layer").inputValue(), "global.t2m");
    const legend = page.locator(".legend");
    await legend.locator(".legend-ticks span").nth(3).waitFor();
    assert.match(await text(legend.locator(".legend-title")), /\(°C\)$/);
    const ticks = await legend.locator(".legend-ticks span").allTextContents();
    assert.ok(ticks.length >= 4 && ticks.every((s) => /^-?\d+$/.test(s)), ticks.join(" "));
    assert.ok(ticks.includes("0"));
    await assertDrawn(page, "forecast-tiles", "2 m temperature");

    // The slider grows when the build publishes more leads, without a reload.
    const slider = page.getByRole("slider", { name: "Lead time" });
    assert.equal(await slider.getAttribute("max"), "1");
    await build(server, "0,1,2,3");
    await page.waitForFunction(() => (document.getElementById("lead") as HTMLInputElement).max === "3", null, {
      timeout: 30_000,
    });
    const catalog = (await get(`${server.url}/api/forecast/catalog`)).json();
    // Derived layers are in the catalog with their TileJSON, overlays marked as such.
    for (const [id, role, from] of [
      ["europe.wind_speed", "base", ["u10", "v10"]],
      ["europe.wind_arrows", "overlay", ["u10", "v10"]],
      ["europe.isobars", "overlay", ["msl"]],
    ] as const) {
      const l = catalog.layers.find((x: { id: string }) => x.id === id);
      assert.deepEqual([l?.role, l?.derived_from], [role, from], id);
      const tj = (await get(`${server.url}${l.runs[0].leads[1].tilejson}`)).json();
      assert.equal(tj.tilejson, "3.0.0");
      assert.equal(tj.role, role);
      assert.equal(tj.tiles[0], l.runs[0].leads[1].tiles);
    }
    assert.deepEqual(catalog.layers.find((x: { id: string }) => x.id === "global.t2m").display, {
      units: "°C",
      scale: 1,
      offset: -273.15,
    });

    // Accumulated precipitation opens on the first lead with an amount (+1 h), in mm.
    await page.getByRole("combobox", { name: /^Layer/ }).selectOption("global.tp_1h"); // the parameter: the Europe patch over the global field
    const tp = catalog.layers.find((l: { id: string }) => l.id === "europe.tp_1h");
    const newest = tp.runs.toSorted((a: { run: string }, b: { run: string }) => b.run.localeCompare(a.run))[0];
    assert.match(await text(page.locator("#lead-text")), /^\+1 h · /);
    assert.equal(await slider.inputValue(), "1");
    await legend.locator(".legend-title", { hasText: "(mm)" }).waitFor();
    assert.equal(await text(legend.locator(".legend-interval")), "amount over the previous 1 h");
    await assertDrawn(page, "forecast-tiles", "precipitation", 0.02, 4);

    // Click a wet place: the popup shows the display value of exactly that layer, run and lead.
    const target = { lat: 52, lon: 6 };
    await clickAt(page, view, target);
    const shown = page.locator(".value-popup .value");
    await shown.waitFor();
    await checkValue(server, page, "europe.tp_1h", newest.token, 1, target, "mm");
    // The popup follows the lead time.
    await slider.focus();
    await slider.press("ArrowRight");
    await slider.press("ArrowRight");
    await page.locator(".value-popup", { hasText: "(+3 h)" }).waitFor();
    await checkValue(server, page, "europe.tp_1h", newest.token, 3, target, "mm");
    assert.match(
      await text(page.locator(".value-popup .value-interval")),
      /^amount over the previous 1 h \(\d\d:00–\d\d:00 UTC\)$/,
    );
    // And the run: the older run's value at the same lead.
    const older = tp.runs.find((r: { token: string }) => r.token !== newest.token);
    await page.getByRole("combobox", { name: /^Run/ }).selectOption(older.token);
    await page.waitForFunction(
      (want) => document.querySelector(".value-popup .value-valid")?.textContent?.includes(want),
      `${Number(older.run.slice(11, 13)) + 3}`.padStart(2, "0") + ":00 UTC",
    );
    await checkValue(server, page, "europe.tp_1h", older.token, 3, target, "mm");
    await page.getByRole("combobox", { name: /^Run/ }).selectOption(newest.token);
    // At +0 h an accumulation covers no time: no bare zero with an empty window.
    await slider.focus();
    await slider.press("Home");
    await page.locator(".value-popup", { hasText: "(+0 h)" }).waitFor();
    assert.equal(await text(page.locator(".value-popup .value")), "nothing accumulated yet");
    assert.equal(await page.locator(".value-popup .value-interval").count(), 0);
    await slider.press("End");

    // Wind speed: the arrows overlay comes with it, drawn over the colour field.
    await page.getByRole("combobox", { name: /^Layer/ }).selectOption("global.wind_speed");
    const arrows = page.getByRole("checkbox", { name: "Wind arrows" });
    assert.equal(await arrows.isChecked(), true);
    await assertDrawn(page, "forecast-tiles", "wind speed", 0.3, 5); // Beaufort classes
    await assertOverlay(page, "overlay-wind_arrows");
    mkdirSync(ARTIFACTS, { recursive: true });
    const withArrows = await page.locator("#map").screenshot({ path: join(ARTIFACTS, "viewer-wind.png") });
    await arrows.uncheck();
    await page.waitForFunction(() => !document.querySelector(".overlay-wind_arrows"));
    const without = await page.locator("#map").screenshot();
    const changed = await differingFraction(withArrows, without);
    assert.ok(changed > 0.01 && changed < 0.5, `arrows change ${(changed * 100).toFixed(1)} % of the map`);
    await arrows.check();
    await page.waitForFunction(() => document.querySelector(".overlay-wind_arrows"));

    // The popup of a wind layer gives the direction; a unit switch changes legend and popup.
    await page.locator(".value-popup", { hasText: "m/s" }).waitFor();
    const wind = await checkValue(server, page, "europe.wind_speed", newest.token, 3, target, "m/s");
    assert.match(await text(page.locator(".value-popup .value-direction")), /^from \d+° \([NESW]{1,2}\)$/);
    await page.getByRole("combobox", { name: "Units" }).selectOption("km/h");
    await page.locator(".value-popup .value", { hasText: "km/h" }).waitFor();
    const kmh = Number((await text(page.locator(".value-popup .value"))).split(" ")[0]);
    // km/h shown whole, m/s to a tenth: both rounded.
    assert.ok(Math.abs(kmh - wind * 3.6) <= 0.5 + 0.05 * 3.6 + 1e-9, `${kmh} km/h vs ${wind} m/s`);
    assert.match(await text(page.locator(".value-popup .value")), /^-?\d+ km\/h$/);
    assert.match(await text(legend.locator(".legend-title")), /\(km\/h\)$/);

    // Pressure with isobars, in hPa.
    await page.getByRole("combobox", { name: /^Layer/ }).selectOption("global.msl");
    const isobars = page.getByRole("checkbox", { name: "Isobars" });
    assert.equal(await isobars.isChecked(), true);
    await legend.locator(".legend-title", { hasText: "(hPa)" }).waitFor();
    await assertDrawn(page, "forecast-tiles", "pressure", 0.3, 5); // 4 hPa classes
    await assertOverlay(page, "overlay-isobars");
    await page.locator(".value-popup .value", { hasText: "hPa" }).waitFor();
    await page.locator("#map").screenshot({ path: join(ARTIFACTS, "viewer-pressure.png") });

    // Play and pause: an SVG icon each, no glyph from a font.
    const play = page.getByRole("button", { name: "Play lead times" });
    assert.equal((await text(play)).trim(), "");
    assert.equal(await play.locator("svg:visible").count(), 1);
    await play.click();
    await page.waitForFunction(() => (document.getElementById("lead") as HTMLInputElement).value !== "3");
    await page.getByRole("button", { name: "Pause lead times" }).click();
    assert.equal(await play.getAttribute("aria-pressed"), "false");

    const all = await page.evaluate(() => document.body.innerText);
    assert.ok(
      SAFE_TEXT.test(all),
      `characters a font may lack: ${[...all].filter((c) => !SAFE_TEXT.test(c)).join("")}`,
    );
    assert.deepEqual(errors, []);
    await page.close();

    // A phone: 390 px wide, every control reachable, lead text and layer name not cut.
    const phone = await open(`${server.url}/#layer=europe.wind_speed&map=5/48/10`, 390, 844);
    await phone.page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const fit = await phone.page.evaluate(() => {
      const box = (id: string) => document.getElementById(id)!.getBoundingClientRect();
      const lead = document.getElementById("lead-text")!;
      const layer = document.getElementById("layer") as HTMLSelectElement;
      const probe = document.createElement("span");
      probe.style.font = getComputedStyle(layer).font;
      probe.style.position = "absolute";
      probe.textContent = layer.selectedOptions[0].text;
      document.body.append(probe);
      const textWidth = probe.getBoundingClientRect().width;
      probe.remove();
      return {
        right: Math.max(...["layer", "run", "lead", "play", "lead-text"].map((id) => box(id).right)),
        leadCut: lead.scrollWidth > lead.clientWidth,
        layerRoom: layer.clientWidth - textWidth,
        pageWidth: document.documentElement.scrollWidth,
      };
    });
    assert.ok(fit.right <= 390 && fit.pageWidth <= 390, JSON.stringify(fit));
    assert.equal(fit.leadCut, false);
    assert.ok(fit.layerRoom >= 16, `layer name needs ${-fit.layerRoom + 16} px more`);
    await phone.page.screenshot({ path: join(ARTIFACTS, "viewer-phone.png") });
    assert.deepEqual(phone.errors, []);
    await phone.page.close();
  });

  test("says so when no forecast is published", async () => {
    const server = await serve();
    const { page, errors } = await open(`${server.url}/`);
    const status = page.getByRole("status");
    await status.waitFor();
    assert.match(await text(status), /no forecast published/i);
    assert.equal(await page.locator("#controls").isHidden(), true);
    assert.equal(await page.locator("img.leaflet-tile").count(), 0);
    // Still a map, not a blank page: the outlines are drawn and credited.
    await page.locator(".leaflet-control-attribution", { hasText: "Natural Earth via world-atlas" }).waitFor();
    // The catalog's own 404/503 shows in the console; the page itself must not throw.
    assert.deepEqual(
      errors.filter((e) => e.startsWith("page:")),
      [],
    );
    await page.close();
  });

  test("shows what is still rendering while gridcast start publishes in steps, until the last step", async () => {
    const server = await serve();
    const out = join(server.dir, "output");
    const step = { store, out, maxZoom: 1, groups: ["global"], vars: ["t2m"], progress: false as const };
    await runBuild({ ...step, leads: [0], rendering: "every lead time after +0 h" });
    const { page, errors } = await open(`${server.url}/?refresh=1`);
    const note = page.locator("#rendering");
    await note.waitFor();
    assert.equal(
      await text(note),
      "Still rendering: every lead time after +0 h. They appear here as they are published.",
    );
    assert.equal(await page.locator("#lead").getAttribute("max"), "0");
    // The next step publishes without a note: it goes, and the slider grows.
    await runBuild({ ...step, leads: [0, 1] });
    await note.waitFor({ state: "hidden" });
    await page.waitForFunction(() => document.querySelector("#lead")?.getAttribute("max") === "1");
    assert.deepEqual(
      errors.filter((e) => e.startsWith("page:")),
      [],
    );
    await page.close();
  });
});

/**
 * The loaded tiles of a base layer, read back through a canvas: enough opaque pixels (not blank)
 * and several distinct colours (not flat). Stepped ramps draw one colour per class, so a layer
 * whose values span a few classes (light rain: 0.1, 0.2, 0.5, 1 … mm) has few.
 */
async function assertDrawn(page: Page, className: string, what: string, minOpaque = 0.3, minColours = 12) {
  const stats = await tileStats(page, className);
  assert.ok(stats.tiles > 0, `${what}: no tiles`);
  assert.ok(stats.opaque >= minOpaque, `${what}: only ${(stats.opaque * 100).toFixed(1)} % drawn`);
  assert.ok(stats.colours >= minColours, `${what}: only ${stats.colours} colours`);
}

/** Overlay tiles: some pixels drawn (lines or arrows), most left transparent. */
async function assertOverlay(page: Page, className: string): Promise<void> {
  const stats = await tileStats(page, className);
  assert.ok(stats.tiles > 0, `${className}: no tiles`);
  assert.ok(stats.opaque > 0.005 && stats.opaque < 0.4, `${className}: ${(stats.opaque * 100).toFixed(2)} % drawn`);
}

async function tileStats(page: Page, className: string) {
  await page.waitForFunction(
    (c) => {
      const imgs = document.querySelectorAll<HTMLImageElement>(`.${c} img.leaflet-tile`);
      return (
        imgs.length > 0 && Array.from(imgs).every((i) => i.complete && i.classList.contains("leaflet-tile-loaded"))
      );
    },
    className,
    { timeout: 20_000 },
  );
  return page.evaluate((c) => {
    const imgs = Array.from(document.querySelectorAll<HTMLImageElement>(`.${c} img.leaflet-tile-loaded`));
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 256;
    const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
    let opaque = 0;
    let total = 0;
    const colours = new Set<number>();
    for (const img of imgs) {
      ctx.clearRect(0, 0, 256, 256);
      ctx.drawImage(img, 0, 0, 256, 256);
      const d = ctx.getImageData(0, 0, 256, 256).data;
      for (let i = 0; i < d.length; i += 4) {
        total++;
        if (d[i + 3] > 0) {
          opaque++;
          colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
        }
      }
    }
    return { tiles: imgs.length, opaque: opaque / total, colours: colours.size };
  }, className);
}

/** Fraction of pixels whose colour differs noticeably between two screenshots of one size. */
async function differingFraction(a: Buffer, b: Buffer): Promise<number> {
  const [ra, rb] = await Promise.all([a, b].map((x) => sharp(x).raw().toBuffer({ resolveWithObject: true })));
  assert.equal(ra.data.length, rb.data.length);
  const c = ra.info.channels;
  let differ = 0;
  for (let i = 0; i < ra.data.length; i += c) {
    const d =
      Math.abs(ra.data[i] - rb.data[i]) +
      Math.abs(ra.data[i + 1] - rb.data[i + 1]) +
      Math.abs(ra.data[i + 2] - rb.data[i + 2]);
    if (d > 30) differ++;
  }
  return differ / (ra.data.length / c);
}

const ROUNDING: Record<string, number> = { "°C": 1, hPa: 0, "m/s": 1, "km/h": 0, "%": 0 };

/** The popup's number and unit against the value route for that layer, run and lead. */
async function checkValue(
  server: TestServer,
  page: Page,
  layer: string,
  run: string,
  lead: number,
  at: { lat: number; lon: number },
  units: string,
): Promise<number> {
  const q = new URLSearchParams({ layer, run, lead: String(lead), lat: String(at.lat), lon: String(at.lon) });
  const expected = (await get(`${server.url}/api/forecast/value?${q}`)).json();
  assert.equal(expected.display.units, units);
  const shownText = await text(page.locator(".value-popup .value"));
  const m = /^(-?\d+(?:\.\d+)?) (.+)$/.exec(shownText);
  assert.ok(m, `"${shownText}" is a number and units`);
  assert.equal(m[2], units);
  // Rounded for the unit (5.1 °C, 1013 hPa, 0.42 mm, 3.4 mm, 14.4 m/s): that many decimals, and
  // within half of the last one of the value route's number.
  const want = expected.display.value;
  const decimals = units === "mm" || units === "mm/h" ? (Math.abs(want) < 1 ? 2 : 1) : ROUNDING[units];
  assert.equal((m[1].split(".")[1] ?? "").length, decimals, `${shownText}: ${decimals} decimals for ${units}`);
  assert.ok(Math.abs(Number(m[1]) - want) <= 0.5 * 10 ** -decimals + 1e-9, `${shownText} vs ${want}`);
  const popup = await text(page.locator(".value-popup"));
  assert.match(popup, new RegExp(`\\(\\+${lead} h\\)`));
  assert.match(popup, new RegExp(`grid node ${expected.grid_lat.toFixed(2)}°N ${expected.grid_lon.toFixed(2)}°E`));
  return Number(m[1]);
}

async function clickAt(page: Page, view: { z: number; lat: number; lon: number }, at: { lat: number; lon: number }) {
  const box = (await page.locator("#map").boundingBox())!;
  const p = mercator(at.lat, at.lon, view.z);
  const c = mercator(view.lat, view.lon, view.z);
  await page.mouse.click(box.x + box.width / 2 + p.x - c.x, box.y + box.height / 2 + p.y - c.y);
}

/** Pixel position at zoom z in Leaflet's EPSG:3857 with 256-pixel tiles. */
function mercator(lat: number, lon: number, z: number): { x: number; y: number } {
  const size = 256 * 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return {
    x: ((lon + 180) / 360) * size,
    y: ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * size,
  };
}

async function text(l: Locator): Promise<string> {
  return (await l.textContent()) ?? "";
}
