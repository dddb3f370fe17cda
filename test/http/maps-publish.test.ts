// Publishing is atomic for readers: clients fetching the catalog and its tiles in a loop while a
// second build publishes see the old build or the new one, whole: every catalog is complete, and
// every tile it lists is there and holds the bytes of one of the two builds.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Catalog } from "../../src/published/layout.ts";
import { runPart } from "../../src/published/layout.ts";
import { cleanup, get, sampleStore, type TestServer, testServer, until } from "../helpers/harness.ts";
import { build } from "../pipeline/build-fixture.ts";

let storeA: string;
let storeB: string;
let srv: TestServer;

before(async () => {
  // Same layout, other weather: every tile of the second build differs from the first.
  storeA = await sampleStore();
  storeB = await sampleStore({ seed: 8 });
  srv = await testServer(storeA);
});
after(async () => {
  await srv.close();
  cleanup(storeA, storeB);
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

test("readers never see a half-published build", async () => {
  const out = srv.running.ctx.settings.out;
  const opts = { out, maxZoom: 3, groups: ["europe", "alps"], vars: ["t2m", "tp_1h"] };
  const first = await build({ ...opts, store: storeA, buildId: "first" });
  // Both known before the switch, so a reader can check whatever it gets.
  const builds = new Map<string, string>(["first", "second"].map((id) => [id, join(out, "builds", id)]));
  const entriesOf = (id: string): string[] =>
    JSON.parse(readFileSync(join(builds.get(id)!, "manifest.json"), "utf8"))
      .entries.map((e: { key: string }) => e.key)
      .sort();

  const seen = new Set<string>();
  const failures: string[] = [];
  let stop = false;
  let requests = 0;
  const reader = async (n: number): Promise<void> => {
    let k = n;
    while (!stop) {
      const r = await get(`${srv.url}/api/forecast/catalog`);
      if (r.status === 503) continue; // not yet visible to this server
      if (r.status !== 200) {
        failures.push(`catalog ${r.status}`);
        continue;
      }
      const catalog = r.json() as Catalog;
      seen.add(catalog.build_id);
      const dir = builds.get(catalog.build_id);
      if (!dir) {
        failures.push(`unknown build ${catalog.build_id}`);
        continue;
      }
      const listed = catalog.layers.flatMap((l) =>
        l.runs.flatMap((run) => run.leads.map((ld) => `${l.id}/${runPart(run.token, l.drawing)}/${ld.hours}`)),
      );
      if (listed.sort().join() !== entriesOf(catalog.build_id).join())
        failures.push(`catalog of ${catalog.build_id} is not its build's`);
      // A few of the listed tiles, through the static path and the route.
      for (let i = 0; i < 4; i++) {
        const layer = catalog.layers[k++ % catalog.layers.length];
        const run = layer.runs[k % layer.runs.length];
        const lead = run.leads[k % run.leads.length];
        for (const url of [lead.tiles.replace("{z}/{x}/{y}", "0/0/0"), lead.route.replace("{z}/{x}/{y}", "0/0/0")]) {
          const t = await get(`${srv.url}${url}`);
          requests++;
          const known = [...builds.values()].map((d) => {
            try {
              return readFileSync(join(d, lead.tiles.replace("{z}/{x}/{y}", "0/0/0")));
            } catch {
              return undefined;
            }
          });
          if (t.status !== 200 || !t.body.subarray(0, 4).equals(PNG)) failures.push(`${url}: ${t.status}`);
          else if (!known.some((b) => b?.equals(t.body))) failures.push(`${url}: bytes of neither build`);
        }
      }
    }
  };
  const readers = [reader(0), reader(1), reader(2)];
  // The new build adds the older run and renders everything again from the other store.
  const second = await build({ ...opts, store: storeB, runs: "all", reuse: false, buildId: "second" });
  // Read on until both builds were seen and enough requests made: a count, not a time window,
  // so a loaded machine makes the test slower, never red.
  const seenAt = requests;
  await until(
    "readers saw both builds and kept reading",
    () => seen.size === 2 && requests > Math.max(50, seenAt + 20),
    60_000,
  );
  stop = true;
  await Promise.all(readers);
  assert.deepEqual(failures, []);
  assert.deepEqual([...seen].sort(), [first.build_id, second.build_id].sort(), "both builds were read");
  assert.ok(requests > 50, `only ${requests} tile requests`);
});
