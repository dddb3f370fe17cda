// The demo store's size start states before writing it (and checks the free space against) is
// what writing it takes on disk, as du counts it.
import assert from "node:assert/strict";
import { statfsSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { DEMO_STORE_MIB } from "../../src/cli/start.ts";
import { diskBytes } from "../../src/published/measure.ts";
import { writeSample } from "../../src/sample/index.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

/** How far the stated size may be from the measured one, as a share of it. */
const TOLERANCE = 0.1;
const dir = tempDir();
after(() => cleanup(dir));

test("the demo store's stated size is within 10 % of the blocks writing it takes", async () => {
  const store = join(dir, "store");
  await writeSample(store, { preset: "demo", seed: 1 });
  const mib = diskBytes(store) / 1024 / 1024;
  const block = statfsSync(dir).bsize;
  assert.ok(
    Math.abs(DEMO_STORE_MIB - mib) <= TOLERANCE * mib,
    `start says about ${DEMO_STORE_MIB} MiB; writing it took ${mib.toFixed(1)} MiB in ${block}-byte blocks`,
  );
});
