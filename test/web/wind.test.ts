// Animated wind in Chromium, against a real server and a real `gridcast build`: off by default;
// switched on, particles are drawn from the build's wind file and move (the canvas changes from
// frame to frame, and the ink follows the wind: drawn where the flow is); on a device with two
// cores the switch stays off and says why.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import { cleanup, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";
import { decodeRgba } from "../render/decode.ts";

interface Stats {
  drawn: number;
  frames: number;
  particles: () => number[];
  view: () => { world: number; origin: { x: number; y: number } };
}

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** Inked pixels of the wind canvas (alpha above a trace) and a digest of all of them. */
async function canvasInk(page: Page): Promise<{ inked: number; alpha: number[] }> {
  return page.evaluate(() => {
    const c = document.querySelector("canvas.wind-canvas") as HTMLCanvasElement;
    const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    const alpha: number[] = [];
    let inked = 0;
    for (let i = 3; i < data.length; i += 4) {
      alpha.push(data[i]);
      if (data[i] > 40) inked++;
    }
    return { inked, alpha };
  });
}

describe("animated wind", () => {
  let browser: Browser;
  let store: string;
  let server: TestServer;

  before(async () => {
    requireChromium();
    [browser, store] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      sampleStore(),
    ]);
    server = await testServer(store);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "2"];
    args.push("--groups", "global", "--vars", "t2m,u10,v10", "--leads", "0,1", "--runs", "latest");
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (store) cleanup(store);
  });

  async function open(cores: number) {
    const context = await browser.newContext({ viewport: { width: 900, height: 600 } });
    await context.addInitScript((n) => {
      Object.defineProperty(navigator, "hardwareConcurrency", { get: () => n });
    }, cores);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#layer=global.t2m&lead=1&map=2/30/0`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    return { context, page, errors };
  }

  test("off by default; on, particles are drawn and move from frame to frame", async () => {
    const { context, page, errors } = await open(8);
    const toggle = page.locator("button.wind-toggle");
    assert.equal(await toggle.getAttribute("aria-pressed"), "false");
    assert.equal(await page.locator("canvas.wind-canvas").isHidden(), true, "no particles until asked");
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    // The wind file arrives and particles are drawn.
    await page.waitForFunction(() => {
      const c = document.querySelector("canvas.wind-canvas") as HTMLCanvasElement & { gridcastWind: Stats };
      return c.gridcastWind.drawn > 200;
    });
    const first = await canvasInk(page);
    await page.waitForTimeout(300);
    const second = await canvasInk(page);
    assert.ok(first.inked > 500 && second.inked > 500, `ink ${first.inked}, ${second.inked}`);
    let changed = 0;
    for (let i = 0; i < first.alpha.length; i++) if (Math.abs(first.alpha[i] - second.alpha[i]) > 40) changed++;
    assert.ok(changed > 500, `${changed} pixels changed between frames`);
    // Switched off, the canvas goes.
    await toggle.click();
    assert.equal(await page.locator("canvas.wind-canvas").isHidden(), true);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("the particles go where the wind file sends them", async () => {
    const { context, page } = await open(8);
    await page.locator("button.wind-toggle").click();
    await page.waitForFunction(() => {
      const c = document.querySelector("canvas.wind-canvas") as HTMLCanvasElement & { gridcastWind: Stats };
      return c.gridcastWind.drawn > 200;
    });
    // The particles just before a frame and just after it (a callback queued now runs after the
    // animation's own step in the next frame), with the view's frame.
    const { before, after, view } = await page.evaluate(
      () =>
        new Promise<{ before: number[]; after: number[]; view: ReturnType<Stats["view"]> }>((done) => {
          const c = document.querySelector("canvas.wind-canvas") as HTMLCanvasElement & { gridcastWind: Stats };
          const s = c.gridcastWind;
          const before = s.particles();
          requestAnimationFrame(() => done({ before, after: s.particles(), view: s.view() }));
        }),
    );
    // The wind file, decoded here by sharp with the header's numbers; bilinear between nodes.
    const catalog = await (await fetch(`${server.url}/api/forecast/catalog`)).json();
    const lead = catalog.layers.find((l: { id: string }) => l.id === "global.wind_arrows").runs[0].leads[1];
    const header = await (await fetch(`${server.url}${lead.wind}`)).json();
    const png = Buffer.from(await (await fetch(new URL(header.png, `${server.url}${lead.wind}`))).arrayBuffer());
    const img = await decodeRgba(png);
    const comp = (k: number, q: { offset: number; scale: number }) => (r: number, c: number) =>
      q.offset + q.scale * img.data[(r * header.width + c) * 4 + k];
    const uAt = comp(0, header.u);
    const vAt = comp(1, header.v);
    const flow = (lat: number, lon: number) => {
      const x = ((((lon - header.lon0) / header.dlon) % header.width) + header.width) % header.width;
      const y = (lat - header.lat0) / header.dlat;
      const c0 = Math.floor(x);
      const r0 = Math.floor(y);
      const c1 = (c0 + 1) % header.width;
      const fx = x - c0;
      const fy = y - r0;
      const bi = (f: (r: number, c: number) => number) =>
        (f(r0, c0) * (1 - fx) + f(r0, c1) * fx) * (1 - fy) + (f(r0 + 1, c0) * (1 - fx) + f(r0 + 1, c1) * fx) * fy;
      return [bi(uAt), bi(vAt)];
    };
    const lonOf = (px: number) => ((px + view.origin.x) / view.world) * 360 - 180;
    const latOf = (py: number) =>
      (180 / Math.PI) * Math.atan(Math.sinh(Math.PI - (2 * Math.PI * (py + view.origin.y)) / view.world));
    const factors: number[] = [];
    let moved = 0;
    for (let i = 0; i < before.length; i += 4) {
      if (after[i + 2] !== before[i + 2] + 1) continue; // dropped and seeded anew this frame
      const [u, v] = flow(latOf(before[i + 1]), lonOf(before[i]));
      const dx = after[i] - before[i];
      const dy = after[i + 1] - before[i + 1];
      const speed = Math.hypot(u, v);
      if (speed < 2) continue;
      moved++;
      // East is +x, north is −y on the screen: the step lies along (u, −v).
      factors.push((dx * u - dy * v) / (speed * speed));
      const across = Math.abs(dx * v + dy * u) / speed;
      assert.ok(across < 0.05, `particle ${i / 4}: step (${dx}, ${dy}) vs wind (${u}, ${v})`);
    }
    assert.ok(moved > 100, `${moved} particles checked`);
    const [lo, hi] = [Math.min(...factors), Math.max(...factors)];
    assert.ok(lo > 0 && hi - lo < 0.02 * hi, `px per m/s ${lo}..${hi}: one positive factor for every particle`);
    await context.close();
  });

  test("on a device with two cores the switch stays off and says why", async () => {
    const { context, page } = await open(2);
    const toggle = page.locator("button.wind-toggle");
    assert.equal(await toggle.isDisabled(), true);
    assert.match((await toggle.getAttribute("title")) ?? "", /two cores/);
    assert.equal(await page.locator("canvas.wind-canvas").isHidden(), true);
    await context.close();
  });
});
