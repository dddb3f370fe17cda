// Build progress: one line redrawn in place on a terminal, plain lines now and then in a log.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { CoverageCache } from "../../src/pipeline/coverage.ts";
import { planBuild, planFiles } from "../../src/pipeline/plan.ts";
import { createProgress } from "../../src/pipeline/progress.ts";
import { runBuild } from "../../src/pipeline/run.ts";
import { buildHidpiMax } from "../../src/render/tiles.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";

function sink(isTTY: boolean): Writable & { isTTY: boolean; text: () => string } {
  const parts: string[] = [];
  const w = new Writable({
    write(chunk, _enc, done) {
      parts.push(String(chunk));
      done();
    },
  });
  return Object.assign(w, { isTTY, text: () => parts.join("") });
}

test("on a terminal: a bar with tiles/s and ETA, redrawn on one line", async () => {
  const out = sink(true);
  const p = createProgress({ total: 1000, label: "build x", stream: out });
  p.add(100);
  await sleep(120);
  p.add(150);
  p.finish();
  const text = out.text();
  assert.ok(text.startsWith("\r\u001b[K"), "carriage return and clear line");
  assert.match(text.slice(4), /^build x \[#{6}-{18}\] {2}25% 250\/1000 tiles \d+ tiles\/s ETA \d+s/);
  assert.equal(text.split("\n").length, 2, "one line, ended once");
  assert.ok(text.endsWith("\n"));
});

test("in a log: plain lines at an interval, no control characters", async () => {
  const out = sink(false);
  const p = createProgress({ total: 10, label: "build y", stream: out, logEveryMs: 300 });
  p.add(1);
  assert.equal(out.text(), "", "nothing before the first interval");
  await sleep(350);
  p.add(4);
  p.finish();
  assert.match(out.text(), /^build y: 50% 5\/10 tiles \d+ tiles\/s ETA \d+s\n$/);
});

test("work beyond the planned count is shown as 100 %, never more, with no negative ETA", () => {
  const out = sink(true);
  const p = createProgress({ total: 15, label: "build z", stream: out });
  p.add(18);
  p.finish();
  const last = out.text().split("\r\u001b[K").at(-1)!;
  assert.match(last, /^build z \[#{24}\] 100% 18\/18 tiles \d+ tiles\/s ETA 0s\n$/);
});

test("a real build's last progress line counts exactly the tiles it rendered and linked", async () => {
  const store = await sampleStore();
  const out = join(tempDir(), "out");
  try {
    // The first build publishes t2m; the second links t2m's leads (and their @2x files) from it
    // and renders msl: both paths count toward the line.
    const runs: { line: string; tiles: number }[] = [];
    for (const vars of [["t2m"], ["t2m", "msl"]]) {
      const sinkOut = sink(true);
      const report = await runBuild({ store, out, maxZoom: 2, vars, webDir: null, concurrency: 2, progress: sinkOut });
      runs.push({ line: sinkOut.text().split("\r\u001b[K").at(-1)!, tiles: report.totals.tiles });
      // The plan counts the files without rendering (start's estimate, the README's figures).
      const plan = await planBuild(new Store(store), { runs: "latest", maxZoom: 2, vars }, new CoverageCache());
      assert.deepEqual(planFiles(plan, buildHidpiMax(2)), { tiles: report.totals.tiles, hidpi: report.totals.hidpi });
      assert.ok(report.totals.hidpi && report.totals.hidpi > 0, "the build has @2x tiles, which must not be counted");
      if (vars.length === 2) assert.ok(report.totals.reused > 0, "the second build reused leads");
    }
    for (const { line, tiles } of runs) {
      const m = /(\d+)\/(\d+) tiles/.exec(line);
      assert.ok(m, line);
      assert.equal(Number(m[2]), tiles, `planned count in "${line.trim()}" equals the build's tiles`);
      assert.equal(Number(m[1]), tiles, `done count in "${line.trim()}" equals the build's tiles`);
    }
  } finally {
    cleanup(store, dirname(out));
  }
});
