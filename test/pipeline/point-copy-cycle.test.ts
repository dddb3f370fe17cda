// The point copy under a changing store (and the map click reading it): a cycle appended after the build is answered from the
// store (the copy holds an older run), a run rewritten in place (same metadata, new chunk bytes)
// is never answered from the copy made of the old bytes, a rebuild links the copies whose data
// did not change and writes the others, shards write the copies once between them, and a build
// with --no-point-copy has none. The copy's files are never public.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pointCopies } from "../../src/http/point-copies.ts";
import { publishShards } from "../../src/pipeline/finalize.ts";
import type { PointCopyReader } from "../../src/published/point-copy.ts";
import { LOCAL_STAMP_TTL_MS } from "../../src/store/directory-backend.ts";
import { appendRun, copyRun } from "../helpers/append-run.ts";
import { cleanup, get, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

const G = "forecast/global";
const AT = "lat=-31&lon=101";
/** Builds of two variables without the deeper zooms: the copies are what these tests look at. */
const QUICK = { maxZoom: 0, orientation: false, vars: ["t2m", "msl"] };
let storeDir: string;
let work: string;
let out: string;
let srv: TestServer;
let key: string;

before(async () => {
  storeDir = await sampleStore();
  work = tempDir("gridcast-point-cycle-");
  out = join(work, "out");
  await build({ store: storeDir, out, ...QUICK, runs: "all" });
  srv = await testServer(storeDir, { out });
  key = await srv.key(["weather"]);
  await point("", true, "lat=10&lon=10"); // the server adopts the build (another point: no answer kept for AT)
});
after(async () => {
  await srv.close();
  cleanup(storeDir, work);
});

interface Series {
  run: string;
  values: (number | null)[];
  members?: unknown;
}

async function point(extra = "", copy = true, at = AT): Promise<Series> {
  srv.running.ctx.settings.point_copy = copy ? 1 : 0;
  const r = await get(`${srv.url}/point?${at}&var=t2m&group=${G}${extra}`, { "X-API-Key": key });
  srv.running.ctx.settings.point_copy = 1;
  assert.equal(r.status, 200, r.body.toString());
  return r.json();
}

const hits = () => (pointCopies(srv.running.ctx) as PointCopyReader).hits;
const runsOf = async () => (await get(`${srv.url}/api/models`)).json().forecast.find((g: { id: string }) => g.id === G);

test("the copy answers the built runs, with the store's values", async () => {
  const before = hits();
  const latest = await point();
  assert.equal(hits(), before + 1);
  assert.deepEqual(latest, await point("", false));
  const first = await point("&run=0");
  assert.equal(hits(), before + 2);
  assert.notDeepEqual(first.values, latest.values, "the two runs of the sample store differ");
});

test("the map click's value is read from the copy, the same as the store's", async () => {
  const leads: number[] = (await runsOf()).lead_hours;
  const value = async (lead: number, copy: boolean) => {
    srv.running.ctx.settings.point_copy = copy ? 1 : 0;
    const r = await get(`${srv.url}/api/forecast/value?layer=global.t2m&lat=12.5&lon=-40&lead=${lead}`);
    srv.running.ctx.settings.point_copy = 1;
    assert.equal(r.status, 200, r.body.toString());
    return r.json();
  };
  for (const lead of [leads[0], leads.at(-1)!]) {
    const before = hits();
    const got = await value(lead, true);
    assert.equal(hits(), before + 1, `lead ${lead} from the copy`);
    assert.equal(typeof got.value, "number");
    assert.deepEqual(got, await value(lead, false));
  }
});

test("a cycle appended after the build is answered from the store, never from the copy of an older run", async () => {
  const old = await point();
  const run0 = await point("&run=0");
  const group = await runsOf();
  const runs: string[] = group.runs;
  const newRun = await appendRun(storeDir, runs, 0);
  const now = await until("the new run on /point", async () => {
    const s = await point();
    return s.run === newRun ? s : undefined;
  });
  // The new run is a byte copy of run 0: its values, not those of the run the copy holds.
  assert.deepEqual(now.values, run0.values);
  assert.notDeepEqual(now.values, old.values);
  assert.deepEqual(now, await point("", false));
  // The run the copy holds is still answered by it.
  const before = hits();
  assert.deepEqual((await point(`&run=${runs.length - 1}`)).values, old.values);
  assert.equal(hits(), before + 1);
});

test("a run rewritten in place (same metadata) is never answered from the copy of its old bytes", async () => {
  const runs: string[] = (await runsOf()).runs;
  const built = runs.length - 2; // the latest run the build copied
  const run0 = await point("&run=0");
  const old = await point(`&run=${built}`);
  assert.notDeepEqual(old.values, run0.values);
  copyRun(storeDir, 0, built);
  // Within the local version interval (0.1 s) plus slack, as the store's own readers.
  const deadline = Date.now() + LOCAL_STAMP_TTL_MS + 2000;
  for (;;) {
    const now = await point(`&run=${built}`);
    if (JSON.stringify(now.values) === JSON.stringify(run0.values)) break;
    assert.ok(Date.now() < deadline, "the copy of the run's old bytes still answers");
    await new Promise((ok) => setTimeout(ok, 20));
  }
  assert.deepEqual(await point(`&run=${built}`), await point(`&run=${built}`, false));
});

test("a rebuild links the copies whose data did not change and rewrites the others", async () => {
  const prev = join(out, "current");
  const prevManifest = JSON.parse(readFileSync(join(prev, "manifest.json"), "utf8"));
  const report = await build({ store: storeDir, out, ...QUICK, runs: "all" });
  const byRun = new Map<string, boolean[]>();
  for (const c of report.point_copy!.copies.filter((c) => c.group === G))
    byRun.set(c.run, [...(byRun.get(c.run) ?? []), c.reused]);
  const runs: string[] = (await runsOf()).runs;
  // Run 0 is unchanged; the rewritten run and the appended one are written again.
  assert.ok(byRun.get(runs[0])!.every((r) => r));
  assert.ok(byRun.get(runs.at(-2)!)!.every((r) => !r));
  assert.ok(byRun.get(runs.at(-1)!)!.every((r) => !r));
  const linked = report.point_copy!.copies.find((c) => c.reused)!;
  const was = prevManifest.point_copies.find((c: { key: string }) => c.key === linked.key);
  assert.ok(was, "a linked copy was in the previous build");
  const ino = (dir: string) => statSync(join(dir, "point", `${linked.key}.bin`)).ino;
  assert.equal(ino(join(out, "current")), ino(join(out, "builds", prevManifest.build_id)));
  // The new build's copies answer what the store holds now.
  await until(
    "the new build adopted",
    async () => (await get(`${srv.url}/catalog.json`)).json().build_id === report.build_id,
  );
  // Elsewhere than the points asked before: the server's memo of store answers holds those.
  const at = "lat=-29&lon=103";
  for (const run of [0, runs.length - 2, runs.length - 1]) {
    const before = hits();
    const s = await point(`&run=${run}`, true, at);
    assert.equal(hits(), before + 1, `run ${run} from the new build's copy`);
    assert.deepEqual(s, await point(`&run=${run}`, false, at));
  }
});

test("shards write every copy once between them; --no-point-copy writes none", async () => {
  const sharded = join(work, "sharded");
  const whole = JSON.parse(readFileSync(join(out, "current", "manifest.json"), "utf8"));
  const keys = whole.point_copies.map((c: { key: string }) => c.key).sort();
  const parts = [];
  for (const index of [1, 2]) {
    const r = await build({
      store: storeDir,
      out: sharded,
      ...QUICK,
      runs: "all",
      shard: { index, count: 2 },
      buildId: "b1",
    });
    parts.push(r.point_copy!.copies.map((c) => c.key));
  }
  assert.ok(parts[0].length > 0 && parts[1].length > 0);
  assert.deepEqual([...parts[0], ...parts[1]].sort(), keys);
  await publishShards({ out: sharded, buildId: "b1", webDir: null });
  const merged = JSON.parse(readFileSync(join(sharded, "current", "manifest.json"), "utf8"));
  assert.deepEqual(
    merged.point_copies.map((c: { key: string }) => c.key),
    keys,
  );
  for (const k of keys) assert.ok(existsSync(join(sharded, "current", "point", `${k}.bin`)));

  const off = join(work, "off");
  const r = await build({ store: storeDir, out: off, ...QUICK, pointCopy: false });
  assert.equal(r.point_copy, null);
  assert.ok(!existsSync(join(off, "current", "point")));
  assert.ok(!readdirSync(join(off, "current")).includes("point"));
});

test("the copy's files are never served as static files", async () => {
  const k = JSON.parse(readFileSync(join(out, "current", "manifest.json"), "utf8")).point_copies[0].key;
  for (const path of [`/point/${k}.json`, `/point/${k}.bin`, `/Point/${k}.bin`]) {
    const r = await get(`${srv.url}${path}`);
    assert.equal(r.status, 404, `${path}: ${r.status}`);
  }
});
