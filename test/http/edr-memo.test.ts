// A warm EDR position is given again from memory only while the store holds what it was read
// from, as /point's answers are (point-source.ts): the same request after a rewrite of its chunk
// answers the new values, never the kept ones.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { LOCAL_STAMP_TTL_MS } from "../../src/store/directory-backend.ts";
import { get, sampleServer } from "../helpers/harness.ts";

const sample = sampleServer(["weather"]);
const G = "forecast/global";

/** Overwrite run `to`'s chunks of `name` with run `from`'s bytes, in place. */
function copyRun(name: string, from: number, to: number): void {
  const root = (run: number) => join(sample.storeDir, G, name, "c", String(run));
  for (const rel of readdirSync(root(from), { recursive: true }).map(String)) {
    if (!statSync(join(root(from), rel)).isFile()) continue;
    writeFileSync(join(root(to), rel), readFileSync(join(root(from), rel)));
  }
}

test("EDR position: the same request after a rewrite of its chunk answers the new values", async () => {
  const H = { "X-API-Key": sample.key };
  const point = async (run: number) =>
    (await get(`${sample.srv.url}/point?lat=-31&lon=101&var=t2m&group=${G}&run=${run}`, H)).json();
  const runs = (await get(`${sample.srv.url}/edr/collections/forecast~global/instances`)).json().instances;
  const second = runs.map((i: { id: string }) => i.id).sort()[1];
  const url = `${sample.srv.url}/edr/collections/forecast~global/instances/${encodeURIComponent(second)}/position?coords=${encodeURIComponent("POINT(101 -31)")}&parameter-name=t2m`;
  const edr = async () => (await get(url, H)).json().ranges.t2m.values;
  const source = (await point(0)).values;
  const before = (await point(1)).values;
  assert.notDeepEqual(before, source, "runs 0 and 1 differ in the sample store");
  for (let i = 0; i < 3; i++) assert.deepEqual(await edr(), before, "warm and kept: the same answer");
  copyRun("t2m", 0, 1);
  const deadline = performance.now() + LOCAL_STAMP_TTL_MS + 1000;
  for (;;) {
    const now = await edr();
    if (JSON.stringify(now) !== JSON.stringify(before)) {
      assert.deepEqual(now, source, "the new values are the rewritten chunk's");
      break;
    }
    if (performance.now() > deadline) assert.fail("the kept answer was still given after the rewrite");
    await new Promise((r) => setTimeout(r, 20));
  }
});
