// The disk estimate gridcast start states before a build, against the blocks the build then takes
// (du's count: every file and folder in whole blocks, hard links once), part by part: 256 px
// tiles, @2x tiles, the tile tree's folders, the point copies and the documents. Each part is
// checked on its own, so a part left out of the estimate (or counted twice) fails here even
// where it is a small share of the whole.
import assert from "node:assert/strict";
import { lstatSync, readdirSync, realpathSync, statfsSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { CoverageCache } from "../../src/pipeline/coverage.ts";
import { type DiskEstimate, estimateBuild } from "../../src/pipeline/estimate.ts";
import { planBuild } from "../../src/pipeline/plan.ts";
import { diskBytes } from "../../src/published/measure.ts";
import { buildHidpiMax } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

/** How far the estimate may be from the blocks the build takes, as a share of them. */
const TOLERANCE = 0.25;
const WEB = resolve(import.meta.dirname, "../../web");

const dirs: string[] = [];
let store: string;
before(async () => {
  store = await sampleStore();
  dirs.push(store);
});
after(() => cleanup(...dirs));

/** The tile tree's blocks by kind, as du counts them (a file linked many times once). */
function tileTree(tiles: string): { tiles: number; hidpi: number; dirs: number } {
  const seen = new Set<string>();
  const out = { tiles: 0, hidpi: 0, dirs: 0 };
  const todo = readdirSync(tiles, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(tiles, d.name));
  for (let d = todo.pop(); d !== undefined; d = todo.pop()) {
    out.dirs += lstatSync(d).blocks * 512;
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, ent.name);
      if (ent.isDirectory()) {
        todo.push(path);
        continue;
      }
      const st = lstatSync(path);
      const id = `${st.dev}:${st.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      if (ent.name.endsWith("@2x.png")) out.hidpi += st.blocks * 512;
      else out.tiles += st.blocks * 512;
    }
  }
  return out;
}

function near(what: string, estimated: number, measured: number): void {
  assert.ok(measured > 0, `${what}: the build wrote some`);
  const off = (estimated - measured) / measured;
  console.log(`${what}: estimated ${estimated.toFixed(0)} bytes, took ${measured} (${(off * 100).toFixed(1)} %)`);
  assert.ok(
    Math.abs(off) <= TOLERANCE,
    `${what}: estimated ${estimated} bytes, the build took ${measured} (${(off * 100).toFixed(1)} %, allowed ±${TOLERANCE * 100} %)`,
  );
}

describe("disk estimate", () => {
  let estimate: DiskEstimate;
  let built: string;

  before(async () => {
    const out = tempDir();
    dirs.push(out);
    const sel = { groups: ["europe"], vars: ["t2m", "tp_1h"], leads: [0, 3, 6], maxZoom: 3 };
    const block = statfsSync(out).bsize;
    const s = new Store(store);
    const coverage = new CoverageCache();
    const plan = await planBuild(s, { ...sel, runs: "latest", orientation: true }, coverage);
    estimate = await estimateBuild(plan, {
      store: s,
      coverage,
      block,
      hidpiMax: buildHidpiMax(sel.maxZoom),
      webDir: WEB,
    });
    await build({ store, out, ...sel, orientation: true, webDir: WEB });
    built = realpathSync(join(out, "current"));
  });

  test("the whole is within the tolerance of the blocks the build takes", () => {
    near("whole build", estimate.total, diskBytes(built));
    assert.equal(
      estimate.total,
      estimate.tiles + estimate.hidpi + estimate.dirs + estimate.point_copies + estimate.documents,
    );
    assert.ok(estimate.sampled > 0);
  });

  test("each part is within the tolerance of its own blocks: tiles, @2x tiles, folders, point copies, documents", () => {
    const tree = tileTree(join(built, "tiles"));
    near("256 px tiles", estimate.tiles, tree.tiles);
    near("@2x tiles", estimate.hidpi, tree.hidpi);
    near("tile folders", estimate.dirs, tree.dirs);
    const point = diskBytes(join(built, "point"));
    near("point copies", estimate.point_copies, point);
    const rest = diskBytes(built) - tree.tiles - tree.hidpi - tree.dirs - point;
    near("documents", estimate.documents, rest);
  });
});
