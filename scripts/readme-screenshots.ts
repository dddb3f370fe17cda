// Screenshots of the viewer for the README: temperature, precipitation, wind speed with arrows and
// pressure with isobars over Europe at zoom 3 (global layers) and zoom 6 (the Europe patch), from
// the demo sample store, a real build and a real server, taken with Debian's Chromium.
//   node scripts/readme-screenshots.ts [--keep DIR]
// Writes docs/screenshots/<view>-z<zoom>.png (palette PNGs, a few tens of KiB each).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import sharp from "sharp";
import { DEFAULTS } from "../src/config.ts";
import { startServer } from "../src/http/server.ts";
import { runBuild } from "../src/pipeline/run.ts";
import { writeSample } from "../src/sample/index.ts";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "docs/screenshots");
const CHROMIUM = "/usr/bin/chromium";
const LEAD = 2;
const SIZE = { width: 720, height: 480 };

/** Each view: the base layer's variable, the overlays drawn over it. */
const VIEWS = [
  { name: "temperature", variable: "t2m", over: [] },
  { name: "precipitation", variable: "tp_1h", over: [] },
  { name: "wind", variable: "wind_speed", over: ["wind_arrows"] },
  { name: "pressure", variable: "msl", over: ["isobars"] },
];
/** Zoom 3 shows the global layers over Europe; zoom 6 the Europe patch over Austria and Bavaria. */
const ZOOMS = [
  { z: 3, group: "global", lat: 50, lon: 10 },
  { z: 6, group: "europe", lat: 48.5, lon: 13.5 },
];

const keep = process.argv.indexOf("--keep");
const work = keep >= 0 ? resolve(process.argv[keep + 1]) : mkdtempSync(join(tmpdir(), "gridcast-shots-"));
const store = join(work, "store");
const out = join(work, "output");
try {
  await writeSample(store, { preset: "demo", seed: 1 }).catch((e) => {
    if (keep < 0) throw e; // a kept directory may already hold the store
  });
  await runBuild({
    store,
    out,
    groups: ["global", "europe"],
    vars: ["t2m", "tp_1h", "u10", "v10", "msl"],
    leads: [LEAD],
    maxZoom: 6,
    // The shots are taken at device pixel ratio 1: no @2x tiles, which would about double the build.
    hidpi: false,
    // Place names, state borders, rivers and lakes, as `gridcast build` draws them by default.
    orientation: true,
    progress: process.stderr,
  });
  const server = await startServer(
    { ...DEFAULTS, store, out, db: join(work, "ledger.db"), port: 0 },
    { log: () => {} },
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
  mkdirSync(OUT, { recursive: true });
  try {
    for (const zoom of ZOOMS) {
      for (const view of VIEWS) {
        const page = await browser.newPage({ viewport: SIZE });
        const hash = new URLSearchParams({
          layer: `${zoom.group}.${view.variable}`,
          over: view.over.join(","),
          lead: String(LEAD),
          map: `${zoom.z}/${zoom.lat}/${zoom.lon}`,
        });
        await page.goto(`${server.url}/#${hash}`);
        // Base and overlay tiles loaded, the legend's ticks drawn, the outlines painted.
        await page.waitForFunction(
          (over) =>
            performance.getEntriesByName("gridcast:tiles-loaded").length > 0 &&
            over.every((o) => document.querySelector(`.overlay-${o} img.leaflet-tile-loaded`)) &&
            document.querySelectorAll("img.leaflet-tile:not(.leaflet-tile-loaded)").length === 0 &&
            // Place names drawn, yielding to the overlays' marks where overlays are shown.
            document.querySelector(".orientation-tiles canvas.leaflet-tile-loaded") &&
            Array.from(document.querySelectorAll<HTMLCanvasElement>(".orientation-tiles canvas.leaflet-tile")).every(
              (c) => c.dataset.painted === (over.length ? "weather" : "plain"),
            ) &&
            document.querySelector(".legend-ticks span") &&
            performance.getEntriesByType("mark").some((m) => m.name.startsWith("gridcast:outlines-")),
          view.over,
          { timeout: 180_000 },
        );
        await page.waitForTimeout(500);
        const png = await page.screenshot();
        const file = join(OUT, `${view.name}-z${zoom.z}.png`);
        await sharp(png).png({ palette: true, colours: 128, effort: 10 }).toFile(file);
        console.log(file);
        await page.close();
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
} finally {
  if (keep < 0) rmSync(work, { recursive: true, force: true });
}
