// Switching to a big build while requests flow. Two real builds are on disk, the second padded with
// 200,000 extra tile files (hard links: cheap to make, but a server that walks or indexes the
// build's files pays for every one of them). Readers fetch the catalog, tiles through the route
// and the static path, and /healthz in a loop while <out>/current is switched to the big build:
// no request may wait longer than a generous bound, every response names the build it came from
// and holds that build's bytes, and both builds are seen.
import assert from "node:assert/strict";
import { copyFileSync, linkSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { switchCurrent } from "../../src/pipeline/publish.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

/** Generous on a shared, loaded machine; a walk of the padded build takes seconds. */
const BOUND_MS = 1500;
const PADDING = 200_000;

let store: string;
let srv: TestServer;

before(async () => {
  store = await sampleStore();
  srv = await testServer(store);
});
after(async () => {
  await srv.close();
  cleanup(store);
});

test("a switch to a 200k-file build while requests flow: no request waits, none mixes builds", async () => {
  const out = srv.running.ctx.settings.out;
  const opts = { store, out, maxZoom: 2, groups: ["global"], vars: ["t2m"], keepBuilds: 5 };
  await build({ ...opts, buildId: "small" });
  await build({ ...opts, buildId: "big", reuse: false });
  const dirs: Record<string, string> = { small: join(out, "builds", "small"), big: join(out, "builds", "big") };
  const tile = "tiles/global.t2m";
  const catalog = JSON.parse(readFileSync(join(dirs.big, "catalog.json"), "utf8"));
  const lead = catalog.layers[0].runs[0].leads[0];
  const source = join(dirs.big, lead.tiles.slice(1).replace("{z}/{x}/{y}", "0/0/0"));
  let from = source;
  for (let d = 0; d < PADDING / 1000; d++) {
    const dir = join(dirs.big, tile, "padding", String(d));
    mkdirSync(dir, { recursive: true });
    // A file system caps the links of one inode (ext4: 65,000): a fresh copy every 50k links.
    if (d % 50 === 0) copyFileSync(source, (from = join(dir, "source.png")));
    for (let i = 0; i < 1000; i++) linkSync(from, join(dir, `${i}.png`));
  }
  switchCurrent(out, "small");
  assert.equal((await get(`${srv.url}/api/forecast/catalog`)).json().build_id, "small");

  const failures: string[] = [];
  const seen = new Set<string>();
  let slowest = 0;
  let requests = 0;
  let stop = false;
  const urls = [
    "/api/forecast/catalog",
    "/healthz",
    lead.route.replace("{z}/{x}/{y}", "1/1/0"),
    lead.tiles.replace("{z}/{x}/{y}", "1/1/0"),
    `/${tile}/padding/7/7.png`,
  ];
  const reader = async (k: number): Promise<void> => {
    for (let n = k; !stop; n++) {
      const url = urls[n % urls.length];
      const t0 = performance.now();
      const r = await get(`${srv.url}${url}`);
      const ms = performance.now() - t0;
      requests++;
      slowest = Math.max(slowest, ms);
      if (ms > BOUND_MS) failures.push(`${url} took ${Math.round(ms)} ms`);
      if (url === "/healthz") continue;
      const id = url.includes("catalog") ? r.json().build_id : r.headers.get("x-gridcast-build");
      if (url.includes("padding")) {
        // Only the big build has it.
        if (r.status === 200 ? id !== "big" : r.status !== 404) failures.push(`${url}: ${r.status} from ${id}`);
        continue;
      }
      if (r.status !== 200 || !dirs[id]) {
        failures.push(`${url}: ${r.status}, build ${id}`);
        continue;
      }
      seen.add(id);
      if (!url.includes("catalog")) {
        const file = url.startsWith("/tiles/") ? url.slice(1) : lead.tiles.slice(1).replace("{z}/{x}/{y}", "1/1/0");
        if (!readFileSync(join(dirs[id], file)).equals(r.body)) failures.push(`${url}: bytes not those of build ${id}`);
      }
    }
  };
  const readers = [0, 1, 2, 3].map(reader);
  await new Promise((ok) => setTimeout(ok, 300));
  switchCurrent(out, "big");
  const until = Date.now() + 5000;
  while (Date.now() < until && !seen.has("big")) await new Promise((ok) => setTimeout(ok, 20));
  // Requests keep flowing past the switch: at least 40 more, however slow a loaded machine makes
  // each one (a hang detector bounds it, not a speed requirement).
  const after = requests + 40;
  const enough = Date.now() + 30_000;
  while (Date.now() < enough && requests < after) await new Promise((ok) => setTimeout(ok, 20));
  stop = true;
  await Promise.all(readers);
  assert.deepEqual(failures, []);
  assert.deepEqual([...seen].sort(), ["big", "small"]);
  assert.ok(requests > 40, `only ${requests} requests`);
  assert.ok(slowest < BOUND_MS);
});
