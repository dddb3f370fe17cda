// A CDN-only deployment: the build made with --tiles pmtiles, copied as it is behind a plain
// static file server that knows nothing of gridcast (no API routes, Range requests only). The
// viewer in Chromium finds the build's catalog.json and draws tiles read out of the archives. The
// build names its public_url, where this copy is not: the catalog's absolute URLs are taken as
// paths from the page (a staging copy, a mirror), and nothing is fetched from the named host.
import assert from "node:assert/strict";
import { existsSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { chromium } from "playwright-core";
import { segmentsOf, sendFile } from "../../src/published/static.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

const CHROMIUM = "/usr/bin/chromium";
const PUBLIC = "https://maps.example.org/gc";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];
const skip = !existsSync(CHROMIUM) && process.env.CI !== "true" ? `${CHROMIUM} is not installed` : false;

let store: string;
let work: string;
let cdn: Server;
let base: string;
const seen: { path: string; range: string | undefined; status: number }[] = [];

before(async () => {
  if (skip) return;
  store = await sampleStore();
  work = tempDir();
  const out = join(work, "out");
  await build({
    store,
    out,
    maxZoom: 2,
    groups: ["global"],
    vars: ["t2m"],
    tiles: "pmtiles",
    publicUrl: PUBLIC,
    webDir: resolve(import.meta.dirname, "../../web"),
  });
  const root = realpathSync(join(out, "current"));
  cdn = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const parts = segmentsOf(path);
    const done = (sent: boolean): void => {
      if (!sent) {
        res.statusCode = 404;
        res.end();
      }
      seen.push({ path, range: req.headers.range, status: res.statusCode });
    };
    if (!parts) done(false);
    else sendFile(req, res, root, parts, "public, max-age=60").then(done);
  });
  await new Promise<void>((ok) => cdn.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}`;
});
after(() => {
  cdn?.close();
  if (store) cleanup(store, work);
});

test("the viewer draws archive tiles from a static copy of the build", { skip }, async () => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const elsewhere: string[] = [];
    page.on("request", (r) => {
      if (/^https?:/.test(r.url()) && !r.url().startsWith(base)) elsewhere.push(r.url());
    });
    await page.goto(`${base}/#map=2/20/10`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0, null, {
      timeout: 20000,
    });
    // The legend's ramp is a request of its own, not one the tiles' load waits for.
    await page.waitForFunction(() => {
      const ramp = document.querySelector<HTMLImageElement>(".legend img");
      return ramp?.complete && ramp.naturalWidth > 0;
    });
    const drawn = await page.$$eval(
      ".forecast-tiles img",
      (imgs) =>
        imgs.filter((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth === 256).length,
    );
    assert.ok(drawn > 0, "archive tiles were drawn");
    assert.deepEqual(errors, []);
    const archiveReads = seen.filter((s) => s.path.endsWith(".pmtiles"));
    assert.ok(archiveReads.length > 0 && archiveReads.every((s) => s.range && s.status === 206), "Range reads");
    assert.ok(seen.some((s) => s.path === "/catalog.json" && s.status === 200));
    assert.ok(!seen.some((s) => s.path.startsWith("/api/") && s.status === 200), "no API answered");
    assert.ok(!seen.some((s) => /\/\d+\/\d+\/\d+\.png$/.test(s.path)), "no z/x/y tile files asked for");
    assert.deepEqual(elsewhere, []);
    assert.ok(
      seen.some((s) => s.path === "/legends/global.t2m.png" && s.status === 200),
      "legend from the copy",
    );
    const catalog = await (await fetch(`${base}/catalog.json`)).json();
    assert.ok(catalog.layers[0].runs[0].leads[0].archive.startsWith(`${PUBLIC}/`), "the catalog's URLs are absolute");
  } finally {
    await browser.close();
  }
});
