// The meteogram in Chromium against a real server and a real `gridcast build` of the sample store:
// a click (and a tap on a touch screen) opens a panel with the place's forecast across every lead,
// one row per parameter; each row's numbers are /point's (with a key, units=display) for the same
// place and run, from the patch /point chooses (Munich: the Alps patch), the panel names that run
// and patch, and Escape (or its button) closes it. The time control's day ticks and run age, and
// the place search over the places the build carries (places.json), on the same build.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import { type Browser, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from "../helpers/prereqs.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

interface Row {
  param: string;
  times: string[];
  values: (number | null)[];
  units: string;
  run: string;
  source: string;
  u?: (number | null)[];
  v?: (number | null)[];
}

describe("meteogram on click", () => {
  let browser: Browser;
  let store: string;
  let server: TestServer;
  let key: string;

  before(async () => {
    requireChromium();
    [browser, store] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
      sampleStore(),
    ]);
    server = await testServer(store);
    key = await server.key(["weather"]);
    const args = ["build", "--store", store, "--out", join(server.dir, "output"), "--max-zoom", "2"];
    args.push("--groups", "global,europe,alps", "--vars", "t2m,tp_1h,u10,v10,msl,tcc");
    await run(process.execPath, ["bin/gridcast", ...args], { cwd: ROOT });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (store) cleanup(resolve(store, ".."));
  });

  async function panelRows(page: Page) {
    await page.waitForSelector("#meteogram[data-state=loaded]", { timeout: 60_000 });
    return page.evaluate(() => {
      const panel = document.getElementById("meteogram")!;
      const rows = Array.from(panel.querySelectorAll<HTMLElement>(".meteogram-row")).map((r) => ({
        param: r.dataset.param!,
        times: JSON.parse(r.dataset.times ?? "[]"),
        values: JSON.parse(r.dataset.values ?? "[]"),
        units: r.dataset.units ?? "",
        run: r.dataset.run ?? "",
        source: r.dataset.source ?? "",
        error: r.dataset.error,
        u: r.dataset.u ? JSON.parse(r.dataset.u) : undefined,
        v: r.dataset.v ? JSON.parse(r.dataset.v) : undefined,
        bars: r.querySelectorAll("rect").length,
        path: r.querySelector("path")?.getAttribute("d") ?? "",
      }));
      return {
        lat: Number(panel.dataset.lat),
        lon: Number(panel.dataset.lon),
        run: panel.dataset.run ?? "",
        meta: panel.querySelector(".meteogram-meta")?.textContent ?? "",
        hidden: panel.hidden,
        rows,
      };
    });
  }

  async function pointSeries(v: string, lat: number, lon: number, runIso: string) {
    const q = new URLSearchParams({ var: v, lat: lat.toFixed(4), lon: lon.toFixed(4), run: runIso, units: "display" });
    const r = await get(`${server.url}/point?${q}`, { "X-API-Key": key });
    assert.equal(r.status, 200, r.body.toString());
    return r.json() as {
      times: string[];
      values: (number | null)[];
      units: string;
      region: string | null;
      run: string;
    };
  }

  async function checkAgainstPoint(got: Awaited<ReturnType<typeof panelRows>>, region: string) {
    assert.equal(got.hidden, false);
    const params = got.rows.map((r) => r.param);
    assert.deepEqual(params, ["temperature", "precipitation", "wind", "pressure", "cloud"]);
    for (const r of got.rows as (Row & { error?: string; bars: number; path: string })[]) {
      assert.equal(r.error, undefined, `${r.param}: ${r.error}`);
      assert.equal(r.run, got.run, `${r.param} is of the run the panel names`);
      const variable = { temperature: "t2m", precipitation: "tp_1h", pressure: "msl", cloud: "tcc" }[r.param];
      if (variable) {
        const p = await pointSeries(variable, got.lat, got.lon, r.run);
        assert.deepEqual(r.times, p.times, r.param);
        assert.deepEqual(r.values, p.values, `${r.param}: the meteogram's numbers are /point's`);
        assert.equal(r.units, p.units, r.param);
        assert.equal(r.source, p.region ?? "forecast/global", r.param);
      } else {
        const [u, v] = await Promise.all([
          pointSeries("u10", got.lat, got.lon, r.run),
          pointSeries("v10", got.lat, got.lon, r.run),
        ]);
        assert.deepEqual(r.u, u.values);
        assert.deepEqual(r.v, v.values);
        const speed = u.values.map((x, i) => (x === null || v.values[i] === null ? null : Math.hypot(x, v.values[i]!)));
        assert.deepEqual(r.values, speed, "wind speed from /point's components");
        assert.equal(r.source, u.region ?? "forecast/global");
      }
      assert.ok(r.values.filter((x) => typeof x === "number").length >= 2, `${r.param}: several leads`);
      // Drawn: bars for amounts and cloud, a line for the others.
      if (r.param === "precipitation" || r.param === "cloud") assert.ok(r.bars >= 1, `${r.param} bars`);
      else assert.match(r.path, /^M[\d.]+,[\d.]+L/, `${r.param} line`);
    }
    assert.match(got.meta, new RegExp(`answered by .*${region}`));
    assert.match(got.meta, new RegExp(`run ${got.run.slice(0, 10)}`));
  }

  test("a click opens the forecast of the place across every lead; Escape closes it", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#layer=global.t2m&map=6/48.14/11.58`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const box = (await page.locator("#map").boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const got = await panelRows(page);
    assert.ok(Math.abs(got.lat - 48.14) < 0.2 && Math.abs(got.lon - 11.58) < 0.2, `${got.lat} ${got.lon}`);
    await checkAgainstPoint(got, "alps");
    // A unit picked for the legend applies to the meteogram: wind in km/h after choosing it.
    await page.keyboard.press("Escape");
    await page.waitForSelector("#meteogram", { state: "hidden" });
    await page.getByRole("combobox", { name: /^Layer/ }).selectOption("global.wind_speed");
    await page.getByRole("combobox", { name: "Units" }).selectOption("km/h");
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>("#meteogram .meteogram-row[data-param=wind]")?.dataset.units === "km/h",
    );
    const kmh = await panelRows(page);
    const wind = kmh.rows.find((r) => r.param === "wind")!;
    const u = await get(
      `${server.url}/point?${new URLSearchParams({ var: "u10", lat: kmh.lat.toFixed(4), lon: kmh.lon.toFixed(4), run: wind.run, units: "km/h" })}`,
      { "X-API-Key": key },
    );
    assert.deepEqual(wind.u, u.json().values, "u10 in km/h, as /point gives it");
    await page.keyboard.press("Escape");
    await page.waitForSelector("#meteogram", { state: "hidden" });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("the time control: a tick at each UTC day on the lead slider, and how old the latest run is", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${server.url}/#layer=global.t2m&map=3/48/10`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const catalog = (await get(`${server.url}/api/forecast/catalog`)).json();
    const layer = catalog.layers.find((l: { id: string }) => l.id === "global.t2m");
    const newest = layer.runs.toSorted((a: { run: string }, b: { run: string }) => b.run.localeCompare(a.run))[0];
    // Ticks where the UTC day changes, counted here from the catalog's valid times.
    const want: string[] = [];
    let last = Number.NaN;
    newest.leads.forEach((l: { valid_time: string }, i: number) => {
      const d = Math.floor(Date.parse(`${l.valid_time}Z`) / 86_400_000);
      if (d !== last) want.push(String(i));
      last = d;
    });
    const got = await page.evaluate(() => ({
      list: document.getElementById("lead")!.getAttribute("list"),
      ticks: Array.from(document.querySelectorAll<HTMLOptionElement>("#lead-days option")).map((o) => o.value),
      labels: Array.from(document.querySelectorAll<HTMLOptionElement>("#lead-days option")).map((o) => o.label),
      age: document.getElementById("run-age")!.textContent,
      stale: document.getElementById("run-age")!.classList.contains("stale"),
    }));
    assert.equal(got.list, "lead-days");
    assert.deepEqual(got.ticks, want);
    assert.match(got.labels[0], /^[A-Z][a-z]{2} \d{1,2}$/);
    const hours = Math.floor((Date.now() - Date.parse(`${newest.run}Z`)) / 3_600_000);
    const age = hours < 48 ? `${hours} hour${hours === 1 ? "" : "s"}` : `${Math.floor(hours / 24)} days`;
    assert.equal(got.age, `latest run is ${age} old`);
    assert.equal(got.stale, hours > 24);
    await page.close();
  });

  test("place search: the build's places, found offline by any letter case and accent", async () => {
    const res = await get(`${server.url}/places.json`);
    assert.equal(res.status, 200, res.body.toString().slice(0, 300));
    const doc = res.json();
    assert.deepEqual(doc.fields, ["name", "lat", "lon", "population", "capital"]);
    assert.ok(doc.places.length > 5000, `${doc.places.length} places`);
    const pops = doc.places.map((p: number[]) => p[3]);
    assert.deepEqual(
      pops,
      pops.toSorted((a: number, b: number) => b - a),
      "largest first",
    );
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    await page.goto(`${server.url}/#layer=global.t2m&map=3/30/0`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const search = page.getByRole("combobox", { name: "Find a place" });
    for (const [typed, name, lat, lon] of [
      ["zurich", "Zürich", 47.367, 8.55],
      ["MUNICH", "Munich", 48.137, 11.575],
      ["frankfurt", "Frankfurt am Main", 50.116, 8.684],
    ] as const) {
      await search.fill("");
      await search.pressSequentially(typed);
      await page.waitForFunction(
        (name) =>
          Array.from(document.querySelectorAll("#place-list option")).some((o) => o.textContent?.startsWith(name)),
        name,
      );
      await search.press("Enter");
      await page.waitForFunction(
        ([lat, lon]) => {
          const m = /map=(\d+)\/([-\d.]+)\/([-\d.]+)/.exec(location.hash);
          return m && m[1] === "8" && Math.abs(Number(m[2]) - lat) < 0.01 && Math.abs(Number(m[3]) - lon) < 0.01;
        },
        [lat, lon],
      );
      assert.equal(await search.inputValue(), name);
    }
    // Nothing of that name: said on the field, the map stays.
    const before = await page.evaluate(() => location.hash);
    await search.fill("xqzzyv");
    await search.press("Enter");
    await page.waitForFunction(
      () => (document.getElementById("place-search") as HTMLInputElement).validationMessage !== "",
    );
    assert.equal(await page.evaluate(() => location.hash), before);
    // Offline: nothing left the server's origin.
    for (const u of requests) assert.ok(u.startsWith(server.url), u);
    await page.close();
  });

  test("one layer per parameter: components under Advanced, patches over the global field, overlays over the composite", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/#layer=global.msl&over=isobars&map=3/50/25`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const options = () =>
      page.evaluate(() =>
        Array.from(document.querySelectorAll<HTMLOptionElement>("#layer option")).map((o) => ({
          value: o.value,
          label: o.label,
          advanced: o.parentElement?.tagName === "OPTGROUP",
        })),
      );
    const menu = await options();
    const values = menu.map((o) => o.value);
    // One entry per parameter, each its global layer; no patch and no component in the main list.
    assert.ok(values.includes("global.t2m") && values.includes("global.msl") && values.includes("global.wind_speed"));
    assert.ok(
      values.every((v) => v.startsWith("global.")),
      values.join(" "),
    );
    assert.equal(new Set(menu.map((o) => o.label)).size, menu.length, "each parameter once");
    assert.ok(!values.includes("global.u10") && !values.includes("global.v10"), "components folded away");
    await page.getByRole("checkbox", { name: "Advanced" }).check();
    const more = await options();
    assert.deepEqual(
      more.filter((o) => o.advanced).map((o) => o.value),
      ["global.u10", "global.v10"],
    );
    // Pressure: the Europe patch over the global field; the global isobars cut out where the patch
    // draws its own, so each place has one set of lines.
    await page.waitForFunction(
      () => document.querySelectorAll(".overlay-isobars.overlay-patch img.leaflet-tile-loaded").length > 0,
    );
    const layers = await page.evaluate(() => ({
      base: document.querySelectorAll(".forecast-tiles").length,
      patches: Array.from(document.querySelectorAll<HTMLElement>(".forecast-patch")).map((e) => e.style.zIndex),
      globalIsobars: document.querySelectorAll(".overlay-isobars:not(.overlay-patch)").length,
      patchIsobars: document.querySelectorAll(".overlay-isobars.overlay-patch").length,
      clipped: Array.from(document.querySelectorAll<HTMLElement>(".overlay-isobars:not(.overlay-patch) img")).filter(
        (i) => i.style.clipPath.startsWith("polygon(evenodd"),
      ).length,
    }));
    assert.equal(layers.base, 1);
    assert.equal(layers.patches.length, 1, "the Europe patch of pressure (the Alps patch has none)");
    assert.equal(layers.globalIsobars, 1);
    assert.equal(layers.patchIsobars, 1);
    assert.ok(layers.clipped > 0, "global isobar tiles across the patch edge are cut there");
    // Lines on both sides of the patch's east edge (40° E), right up to it: no gap.
    await page.addStyleTag({
      content:
        ".leaflet-tile-pane, .leaflet-land-pane, .leaflet-outlines-pane, .leaflet-orientation-pane, .legend { visibility: hidden !important; } #map { background: #fff !important; }",
    });
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const shot = await page.locator("#map").screenshot();
    const { data, info } = await sharp(shot).raw().toBuffer({ resolveWithObject: true });
    const box = (await page.locator("#map").boundingBox())!;
    // Web Mercator x of 40° E at zoom 3 relative to the view's centre (25° E).
    const px = (lon: number) => ((lon + 180) / 360) * 256 * 8;
    const edgeX = Math.round(info.width / 2 + (px(40) - px(25)) * (info.width / box.width));
    const inkIn = (x0: number, x1: number) => {
      let n = 0;
      for (let y = 0; y < info.height; y++) {
        for (let x = x0; x < x1; x++) {
          const k = (y * info.width + x) * info.channels;
          if (data[k] < 150 && data[k + 1] < 150 && data[k + 2] < 150) n++;
        }
      }
      return n;
    };
    const inside = inkIn(edgeX - 12, edgeX - 2);
    const outside = inkIn(edgeX + 2, edgeX + 12);
    assert.ok(inside > 0 && outside > 0, `isobar ink just inside ${inside} and just outside ${outside} the patch edge`);
    // A click inside the Alps patch reads the Alps field (the most local patch, as /point chooses).
    await page.getByRole("combobox", { name: /^Layer/ }).selectOption("global.t2m");
    await page.waitForFunction(() => document.querySelectorAll(".forecast-patch").length === 2);
    const asked = page.waitForRequest((r) => /api\/forecast\/value\?layer=alps\.t2m/.test(r.url()));
    await page.evaluate(() => document.getElementById("meteogram")?.setAttribute("hidden", ""));
    const mapBox = (await page.locator("#map").boundingBox())!;
    // 47° N 11° E from the centre (50° N 25° E) at zoom 3.
    const y = (lat: number) => {
      const phi = (lat * Math.PI) / 180;
      return ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 256 * 8;
    };
    await page.mouse.click(
      mapBox.x + mapBox.width / 2 + (px(11) - px(25)),
      mapBox.y + mapBox.height / 2 + (y(46.5) - y(50)),
    );
    await asked;
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("hover readout: the value under the pointer, from the patch drawn there", async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await page.goto(`${server.url}/#layer=global.t2m&map=6/47/11`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const box = (await page.locator("#map").boundingBox())!;
    const asked = page.waitForRequest((r) => /\/api\/forecast\/value\?layer=alps\.t2m/.test(r.url()));
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.move(box.x + box.width / 2 + 3, box.y + box.height / 2 + 2);
    const url = (await asked).url();
    await page.waitForSelector(".hover-readout:not([hidden])");
    const shown = await page.evaluate(() => {
      const b = document.querySelector<HTMLElement>(".hover-readout")!;
      return { text: b.textContent ?? "", layer: b.dataset.layer, value: b.dataset.value };
    });
    const want = (await get(url)).json();
    assert.equal(shown.layer, "alps.t2m");
    assert.equal(Number(shown.value), want.value);
    assert.match(shown.text, new RegExp(`^${want.display.value.toFixed(1).replace("-", "-?")} °C · `));
    // Leaving the map hides it.
    await page.mouse.move(box.x + box.width / 2, box.y - 30);
    await page.waitForSelector(".hover-readout", { state: "hidden" });
    await page.close();
  });

  test("a tap on a touch screen opens it too, over the Atlantic from the global group; its button closes it", async () => {
    const context = await browser.newContext({ viewport: { width: 420, height: 800 }, hasTouch: true, isMobile: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/#layer=global.t2m&map=4/30/-40`);
    await page.waitForFunction(() => performance.getEntriesByName("gridcast:tiles-loaded").length > 0);
    const box = (await page.locator("#map").boundingBox())!;
    await page.touchscreen.tap(box.x + box.width / 2, box.y + box.height / 3);
    const got = await panelRows(page);
    await checkAgainstPoint(got, "global");
    await page.locator(".meteogram-close").tap();
    await page.waitForSelector("#meteogram", { state: "hidden" });
    await context.close();
  });
});
