// What frames the viewer's map, in Chromium against a real server and real `gridcast build`s:
//   - the time is the catalog's: a new cycle published while the page is open moves the run menu,
//     the lead slider and the valid-time label together (the first build from a store holding
//     only the older run, the second from one with both);
//   - zoomed out, one world from pole to pole (no band beyond the poles), at DPR 1 and 2;
//   - on a phone the attribution never covers the legend.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { writeSample } from "../../src/sample/index.ts";
import { PRESETS, RUNS } from "../../src/sample/presets.ts";
import { cleanup, get, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
/** Catches a viewer that never follows, not a slow one: builds on a loaded 2-core machine take seconds. */
const FOLLOW_TIMEOUT_MS = 60_000;

interface Lead {
  hours: number;
  valid_time: string;
}
interface Run {
  run: string;
  token: string;
  leads: Lead[];
}

describe("viewer time and frame", () => {
  let browser: Browser;
  let older: string;
  let both: string;
  let server: TestServer;

  before(async () => {
    requireChromium();
    older = join(tempDir(), "store");
    [browser, , both] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      writeSample(older, { custom: { ...PRESETS.tiny, runs: [RUNS[0]] }, seed: 7 }),
      sampleStore(),
    ]);
    server = await testServer(both);
    // The older cycle: what the page opens on (the frame tests need any build).
    await build(older, "0,1,2");
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    for (const s of [older, both]) if (s) cleanup(s);
  });

  async function build(store: string, leads: string): Promise<void> {
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "2"];
    args.push("--groups", "global", "--vars", "t2m", "--leads", leads, "--runs", "latest");
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  }

  async function catalogRun(): Promise<Run> {
    const catalog = (await get(`${server.url}/api/forecast/catalog`)).json();
    const layer = catalog.layers.find((l: { id: string }) => l.id === "global.t2m");
    return layer.runs.toSorted((a: Run, b: Run) => b.run.localeCompare(a.run))[0];
  }

  /** What the page shows: run menu value and text, slider position and range, the label. */
  async function shown(page: Page) {
    return page.evaluate(() => {
      const runMenu = document.getElementById("run") as HTMLSelectElement;
      const slider = document.getElementById("lead") as HTMLInputElement;
      return {
        token: runMenu.value,
        runText: runMenu.selectedOptions[0]?.textContent ?? "",
        index: Number(slider.value),
        max: Number(slider.max),
        label: document.getElementById("lead-text")?.textContent ?? "",
        hash: location.hash,
      };
    });
  }

  /** The label as the viewer writes it, in UTC (the page runs in UTC, so there is no local part). */
  function labelOf(lead: Lead): string {
    const t = new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(lead.valid_time) ? lead.valid_time : `${lead.valid_time}Z`);
    const f = new Intl.DateTimeFormat("en-GB", {
      timeZone: "UTC",
      weekday: "short",
      day: "numeric",
      month: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    return `+${lead.hours} h · ${f.format(t)} UTC`;
  }

  test("run menu, slider and valid-time label follow the new cycle together", async () => {
    const first = await catalogRun();
    const context = await browser.newContext({ viewport: { width: 1000, height: 700 }, timezoneId: "UTC" });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/?refresh=1#layer=global.t2m&lead=1&map=2/40/0`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const before = await shown(page);
    assert.equal(before.token, first.token);
    assert.equal(before.label, labelOf(first.leads[1]));

    // The next cycle is published: only the newer run is in the catalog now.
    await build(both, "0,1,2,3");
    // The server looks at <out>/current beside requests: ask until it serves the new cycle.
    const second = await until("the server serves the new cycle", async () => {
      const r = await catalogRun();
      return r.token !== first.token && r;
    });
    await page.waitForFunction(
      (token) => (document.getElementById("run") as HTMLSelectElement).value === token,
      second.token,
      {
        timeout: FOLLOW_TIMEOUT_MS,
      },
    );
    const after = await shown(page);
    const lead = second.leads[after.index];
    assert.equal(lead.hours, 1, "the lead shown before the switch is kept");
    assert.equal(after.max, second.leads.length - 1);
    assert.equal(after.label, labelOf(lead), "the label names the new run's valid time");
    assert.match(after.runText, new RegExp(second.run.slice(11, 16)), "the run menu names the new run");
    assert.match(after.hash, new RegExp(`run=${second.token}`));
    assert.deepEqual(errors, []);
    await context.close();
  });

  for (const scale of [1, 2]) {
    test(`zoomed out at DPR ${scale}: one world from pole to pole, nothing beyond`, async () => {
      const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, deviceScaleFactor: scale });
      const page = await context.newPage();
      await page.goto(`${server.url}/#layer=global.t2m&map=1/0/0`);
      await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
      const frame = await page.evaluate(() => {
        const m = document.getElementById("map")!.getBoundingClientRect();
        const hash = new URLSearchParams(location.hash.slice(1)).get("map")!;
        return { height: m.height, width: m.width, zoom: Number(hash.split("/")[0]) };
      });
      // The world at the shown zoom is at least as tall as the map (no band above or below it)
      // and the lowest zoom that is: z1 would show 2.3 worlds across and bands at the poles.
      const world = 256 * 2 ** frame.zoom;
      assert.ok(world >= frame.height && world / 2 < frame.height, JSON.stringify(frame));
      // Dragging down from the top does not pull the area beyond the North Pole into view.
      const before = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("map"));
      const box = (await page.locator("#map").boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + 50);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height - 50, { steps: 5 });
      await page.mouse.up();
      // The view is saved on the drag's one moveend (after its inertia, if any): the map moved
      // (the pole was a few hundred pixels above), so the saved view changes when it has settled.
      await page.waitForFunction((was) => new URLSearchParams(location.hash.slice(1)).get("map") !== was, before);
      const [zoom, lat] = await page.evaluate(() =>
        new URLSearchParams(location.hash.slice(1)).get("map")!.split("/").map(Number),
      );
      // The map's top edge in world pixels: not above the world's (a rounded centre aside).
      const phi = (lat * Math.PI) / 180;
      const centreY = ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 256 * 2 ** zoom;
      assert.ok(centreY - frame.height / 2 >= -2, `top edge at ${centreY - frame.height / 2} px (z${zoom}, ${lat}°)`);
      await context.close();
    });
  }

  test("on a phone the attribution leaves the legend's ticks in view", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const page = await context.newPage();
    await page.goto(`${server.url}/#layer=global.t2m&map=3/48/10`);
    await page.locator(".legend-ticks span").nth(2).waitFor();
    const [legend, attribution] = await page.evaluate(() =>
      [".legend", ".leaflet-control-attribution"].map((q) => {
        const r = document.querySelector(q)!.getBoundingClientRect();
        return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
      }),
    );
    const apart =
      legend.right <= attribution.left ||
      attribution.right <= legend.left ||
      legend.bottom <= attribution.top ||
      attribution.bottom <= legend.top;
    assert.ok(apart, `legend ${JSON.stringify(legend)} attribution ${JSON.stringify(attribution)}`);
    await context.close();
  });
});
