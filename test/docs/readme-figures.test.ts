// The README's figures for `npm start` on the demo store (tiles, @2x tiles, disk use) are what the
// build plan counts for it: planned on a skeleton of the demo store (its documents and coordinates,
// no data), not rendered. Times are not here: the README names the bench that prints them.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test } from "node:test";
import { startFiles } from "../../src/cli/start.ts";
import { writeSample } from "../../src/sample/index.ts";
import { docsText } from "../helpers/docs.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const _ROOT = join(import.meta.dirname, "../..");
const work = tempDir();
after(() => cleanup(work));

test("README: npm start's tile counts and disk use are what the plan counts for the demo store", async () => {
  const store = join(work, "demo");
  await writeSample(store, { preset: "demo", seed: 1, skeleton: true });
  const { tiles, hidpi } = await startFiles(store);
  const readme = docsText().replace(/\s+/g, " ");
  const gib = (((tiles + hidpi) * 4096) / 2 ** 30).toFixed(1);
  const said = `about ${tiles.toLocaleString("en")} tiles and ${hidpi.toLocaleString("en")} @2x tiles`;
  assert.ok(readme.includes(said), `README says "${said}"`);
  assert.ok(readme.includes(`at most about ${gib} GiB on a file system with 4 KiB blocks`), `README says ${gib} GiB`);
});
