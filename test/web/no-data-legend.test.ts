// The viewer's legend shows the tiles' key for missing data: a hatched swatch named "no data",
// in the ink the legend document gives, under the ramp of a base layer.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium } from "playwright-core";
import { cleanup, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");

describe("legend key for missing data", () => {
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
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "1"];
    args.push("--groups", "global", "--vars", "t2m", "--leads", "0", "--runs", "latest");
    await promisify(execFile)(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (store) cleanup(store);
  });

  test("the legend names no data beside a hatched swatch in the document's ink", async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 600 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/#layer=global.t2m&lead=0&map=2/30/0`);
    const key = page.locator(".legend .legend-no-data");
    await key.waitFor();
    assert.equal((await key.textContent())?.trim(), "no data");
    const doc = await (await fetch(`${server.url}/legends/global.t2m.json`)).json();
    const swatch = await key.evaluate((el) => {
      const s = getComputedStyle(el, "::before");
      return { image: s.backgroundImage, hatch: getComputedStyle(el).getPropertyValue("--hatch").trim() };
    });
    assert.equal(swatch.hatch, doc.no_data.color);
    assert.match(swatch.image, /repeating-linear-gradient/);
    await context.close();
  });
});
