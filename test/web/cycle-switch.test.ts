// The viewer's time is the catalog's: a build of a new cycle published while the page is open
// moves the run menu, the lead slider and the valid-time label together, in Chromium against a
// real server and two real `gridcast build`s (the first from a store holding only the older run).
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

describe("viewer after a cycle switch", () => {
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
    await build(older, "0,1,2");
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
});
