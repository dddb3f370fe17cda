// The API documentation pages in a real browser (Debian's Chromium through playwright-core):
// they render every description as written, make no request beyond this server (they work
// offline), have an icon, and log no console error.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { cleanup, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ARGS = CHROMIUM_ARGS;
const LAYER_TEXT = "<group name>.<variable>[.<level>]";

describe("API docs in Chromium", () => {
  let browser: Browser;
  let store: string;
  let srv: TestServer;

  before(async () => {
    requireChromium();
    [browser, store] = await Promise.all([chromium.launch({ executablePath: CHROMIUM, args: ARGS }), sampleStore()]);
    srv = await testServer(store);
  });
  after(async () => {
    await browser?.close();
    await srv?.close();
    if (store) cleanup(store);
  });

  /** Opens a page; anything it asks of another origin is recorded and refused, as offline. */
  async function open(path: string) {
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const origin = new URL(srv.url).origin;
    const errors: string[] = [];
    const outside: string[] = [];
    const local: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`page: ${e.message}`));
    await page.route("**/*", (r) => {
      const url = r.request().url();
      if (url.startsWith("data:") || url.startsWith("blob:")) return r.continue();
      if (new URL(url).origin !== origin) {
        outside.push(url);
        return r.abort("internetdisconnected");
      }
      local.push(new URL(url).pathname);
      return r.continue();
    });
    page.on("response", (res) => {
      if (res.status() >= 400) errors.push(`http ${res.status()}: ${res.url()}`);
    });
    await page.goto(`${srv.url}${path}`);
    return { page, errors, outside, local };
  }

  async function iconOf(page: Page): Promise<{ ok: boolean; href: string }> {
    return page.evaluate(async () => {
      const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
      if (!link) return { ok: false, href: "" };
      const r = await fetch(link.href);
      return { ok: r.ok && (r.headers.get("content-type") ?? "").startsWith("image/"), href: link.href };
    });
  }

  test("Swagger UI: the layer parameter reads as written; offline, icon, no console error", async () => {
    const { page, errors, outside } = await open("/api-docs#/maps/getForecastTile");
    // Deep link: the tile operation opens with its parameters.
    const param = page.locator(
      ".opblock.is-open tr[data-param-name='layer'] .parameter__description, .opblock.is-open tr[data-param-name='layer'] td.parameters-col_description",
    );
    await param.first().waitFor({ timeout: 30_000 });
    const text = (await param.first().innerText()).replace(/\s+/g, " ");
    assert.ok(text.includes(LAYER_TEXT), `shown: ${text}`);
    assert.deepEqual(await iconOf(page), { ok: true, href: `${srv.url}/favicon.svg` });
    assert.deepEqual(outside, [], "requests beyond this server");
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("ReDoc: every placeholder reads as written; offline (its logo too), icon, no console error", async () => {
    const { page, errors, outside, local } = await open("/api-redoc");
    await page.getByText(LAYER_TEXT, { exact: false }).first().waitFor({ timeout: 30_000 });
    const body = (await page.locator("body").innerText()).replace(/\s+/g, " ");
    for (const s of [
      LAYER_TEXT,
      "forecast/<name>",
      "Restrict to <family>/rf/<version>/base/<product> (optionally followed by /<period>), or to a <family>",
      "Period <YYYY_MM_DD>_<YYYY_MM_DD>;",
      "<var>/.zarray",
    ]) {
      assert.ok(body.includes(s), `ReDoc does not show "${s}"`);
    }
    assert.ok(!body.includes("catalog: .[.]"), "a placeholder was swallowed");
    // The sidebar credit's logo now comes from this server.
    await page.locator('img[alt="redocly logo"]').waitFor({ timeout: 10_000 });
    assert.ok(local.includes("/favicon.svg"));
    assert.deepEqual(await iconOf(page), { ok: true, href: `${srv.url}/favicon.svg` });
    assert.deepEqual(outside, [], "requests beyond this server");
    assert.deepEqual(errors, []);
    await page.close();
  });
});
