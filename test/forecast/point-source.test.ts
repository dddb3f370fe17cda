// A warm /point answer is kept (AnswerMemo, keyed by request) only while the store holds what it
// was read from: the requested group, the groups a patch was chosen among, and the chunk's
// version. A chunk rewritten in place between two identical requests gives the new values (within
// the version interval of a directory store), never the kept ones.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type PointRequest, pointSeries, pointSource } from "../../src/forecast/point.ts";
import { AnswerMemo, sourceCurrent } from "../../src/forecast/point-source.ts";
import { isPending } from "../../src/soon.ts";
import { LOCAL_STAMP_TTL_MS } from "../../src/store/directory-backend.ts";
import { get, sampleServer } from "../helpers/harness.ts";

const sample = sampleServer(["weather"]);
const G = "forecast/global";

/** Chunk files of run `run` of the global group's `name`, relative to its c/<run>/. */
function runChunks(name: string, run: number): string[] {
  const root = join(sample.storeDir, G, name, "c", String(run));
  return readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => statSync(join(root, f)).isFile());
}

/** Overwrite run `to`'s chunks of `name` with run `from`'s bytes, in place. */
function copyRun(name: string, from: number, to: number): void {
  for (const rel of runChunks(name, from)) {
    writeFileSync(
      join(sample.storeDir, G, name, "c", String(to), rel),
      readFileSync(join(sample.storeDir, G, name, "c", String(from), rel)),
    );
  }
}

/** Polls until `probe` holds, failing after the directory version interval and a second of slack. */
async function within(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + LOCAL_STAMP_TTL_MS + 1000;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > deadline) assert.fail(`${what} (still after ${LOCAL_STAMP_TTL_MS + 1000} ms)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const values = async (q: string) => {
  const r = await get(`${sample.srv.url}/point?${q}`, { "X-API-Key": sample.key });
  assert.equal(r.status, 200, r.body.toString());
  return (r.json() as { values: (number | null)[] }).values;
};

describe("point answers kept by source", () => {
  test("a warm series names its source, current until the chunk is rewritten; the memo then forgets it", async () => {
    const { store, registry } = sample.srv.running.ctx;
    const req: PointRequest = { lat: -20, lon: 60, var: "tcc", group: G, run: "1" };
    store.cache.invalidate();
    const cold = pointSeries(store, registry, req);
    assert.ok(isPending(cold), "an empty chunk cache reads");
    assert.equal(pointSource(await cold), undefined, "a series that waited for its read has no source");
    const warm = pointSeries(store, registry, req);
    assert.ok(!isPending(warm), "the chunk is in the cache now");
    const source = pointSource(warm);
    assert.ok(source, "a series read at once has a source");
    assert.ok(sourceCurrent(store, source));
    const memo = new AnswerMemo<string>(4);
    memo.set("k", source, "kept");
    assert.equal(memo.get(store, "k"), "kept");

    copyRun("tcc", 0, 1);
    await within("the rewritten chunk's source stays current", async () => !sourceCurrent(store, source));
    assert.equal(memo.get(store, "k"), undefined);
    assert.equal(memo.size, 0, "a stale answer is dropped");
  });

  test("the memo is bounded: past its size it starts again empty", async () => {
    const { store, registry } = sample.srv.running.ctx;
    const req: PointRequest = { lat: 10, lon: 10, var: "tcc", group: G };
    await pointSeries(store, registry, req); // the chunk in the cache
    const s = pointSeries(store, registry, req);
    assert.ok(!isPending(s));
    const source = pointSource(s);
    assert.ok(source);
    const memo = new AnswerMemo<number>(2);
    memo.set("a", source, 1);
    memo.set("b", source, 2);
    memo.set("c", source, 3);
    assert.equal(memo.size, 1);
    assert.equal(memo.get(store, "a"), undefined);
    assert.equal(memo.get(store, "c"), 3);
  });

  test("GET /point: the same request after a rewrite of its chunk answers the new values", async () => {
    const q = (run: number) => `lat=-31&lon=101&var=t2m&group=${G}&run=${run}`;
    const source = await values(q(0));
    const before = await values(q(1));
    assert.notDeepEqual(before, source, "runs 0 and 1 differ in the sample store");
    // Warm and kept: the same request again gives the same answer.
    for (let i = 0; i < 3; i++) assert.deepEqual(await values(q(1)), before);
    copyRun("t2m", 0, 1);
    await within("the kept answer is still given", async () => {
      const now = await values(q(1));
      if (JSON.stringify(now) === JSON.stringify(before)) return false;
      assert.deepEqual(now, source, "the new values are the rewritten chunk's");
      return true;
    });
  });
});
