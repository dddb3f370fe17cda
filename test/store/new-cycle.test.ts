// A new forecast cycle under a running server, on a directory store and on the same store over
// HTTP. A run rewritten in place (same metadata, new chunk bytes) is served new by /point, the .npy
// export, /data and /api/forecast/value: within 0.1 s from a directory, within the validator
// interval (2 s) over HTTP. A run appended (chunks, then metadata, written while the server runs) shows up on
// every one of those routes within the metadata check interval, and they agree on the runs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { LOCAL_STAMP_TTL_MS } from "../../src/store/directory-backend.ts";
import { REMOTE_STAMP_TTL_MS } from "../../src/store/http-backend.ts";
import { METADATA_CHECK_MS } from "../../src/store/store.ts";
import { appendRun as appendRunTo, copyRun as copyRunOf, runChunks as runChunksOf } from "../helpers/append-run.ts";
import { cleanup, get, sampleStore, type TestServer, testServer } from "../helpers/harness.ts";
import { listen, rangeServer } from "../helpers/static-server.ts";
import { addChecksums } from "../http/data-fixtures.ts";

let storeDir: string;
let srv: TestServer;
let key: string;
const G = "forecast/global";

const H = () => ({ "X-API-Key": key });
const point = async (run: number | string) => {
  const r = await get(`${srv.url}/point?lat=-31&lon=101&var=t2m&group=${G}&run=${run}`, H());
  assert.equal(r.status, 200, r.body.toString());
  return r.json() as { values: (number | null)[]; run: string; times: string[] };
};
const exportNpy = async (timeIndex: number) => {
  const q = `var=t2m&time_index=${timeIndex}&lead_start=0&lead_stop=3&lat_min=-40&lat_max=0&lon_min=80&lon_max=140`;
  const r = await get(`${srv.url}/api/export/forecast~global/npy?${q}`, H());
  assert.equal(r.status, 200, r.body.toString());
  return r.body.subarray(r.body.indexOf(0x0a) + 1); // values after the .npy header
};
const dataKey = async (k: string) => {
  const r = await get(`${srv.url}/data/datasets/forecast~global/zarr/${k}`, H());
  assert.equal(r.status, 200, `${k}: ${r.status}`);
  return r.body;
};
const value = async (run: string) => {
  const r = await get(`${srv.url}/api/forecast/value?layer=global.t2m&lat=-31&lon=101&run=${run}`);
  assert.equal(r.status, 200, r.body.toString());
  return r.json() as { value: number | null; run: string };
};
const runsOfData = async () =>
  ((await get(`${srv.url}/data/datasets`, H())).json().datasets as { id: string; runs: string[] }[]).find(
    (d) => d.id === "forecast~global",
  )!.runs;

const runChunks = (array: string, run: number) => runChunksOf(storeDir, array, run);
const copyRun = (from: number, to: number) => copyRunOf(storeDir, from, to);
const appendRun = async (copyOf: number) => appendRunTo(storeDir, await srvTimes(), copyOf);

/** The v2 view's key of a v3 chunk key: t2m/c/1/0/0/0 → t2m/1.0.0.0. */
const v2Key = (k: string) => k.replace(/^(\w+)\/c\/(.*)$/, (_, v, c) => `${v}/${c.replaceAll("/", ".")}`);

async function srvTimes(): Promise<string[]> {
  return runsOfData();
}

let kind: "directory" | "http" = "directory";

/**
 * A rewrite must show within the version interval: LOCAL_STAMP_TTL_MS (0.1 s) on disk,
 * REMOTE_STAMP_TTL_MS (2 s) over HTTP. The bound checked is that plus a second of slack.
 */
async function rewritten(what: string, probe: () => Promise<boolean>): Promise<void> {
  const ttl = kind === "http" ? REMOTE_STAMP_TTL_MS : LOCAL_STAMP_TTL_MS;
  const deadline = performance.now() + ttl + 1000;
  for (;;) {
    if (await probe()) return;
    if (performance.now() > deadline) assert.fail(`${what} (still after ${ttl + 1000} ms)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function eventually<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + METADATA_CHECK_MS * 3 + 5000;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (performance.now() > deadline) assert.fail(`${what}: not seen within ${METADATA_CHECK_MS * 3 + 5000} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const k of ["directory", "http"] as const) {
  describe(`a new forecast cycle while the server runs (${k} store)`, () => {
    let upstream: Server | undefined;
    before(async () => {
      kind = k;
      storeDir = await sampleStore();
      // u10 with a crc32c checksum: /data cannot pass its chunks through and serves them re-encoded.
      addChecksums(storeDir, `${G}/u10`);
      let root = storeDir;
      if (k === "http") {
        upstream = rangeServer(storeDir, () => "none");
        root = await listen(upstream);
      }
      srv = await testServer(root);
      key = await srv.key(["weather"]);
    });
    after(async () => {
      await srv.close();
      upstream?.closeAllConnections();
      upstream?.close();
      cleanup(storeDir);
    });

    test("a run rewritten in place is served new by every route within the version interval", async () => {
      const runs = await runsOfData();
      assert.equal(runs.length, 2);
      const [p0, p1] = [await point(0), await point(1)];
      assert.notDeepEqual(p1.values, p0.values, "the two sample runs differ");
      const [e0, e1] = [await exportNpy(0), await exportNpy(1)];
      assert.ok(!e0.equals(e1));
      const v0 = await value(runs[0]);
      const v1 = await value(runs[1]);
      assert.notEqual(v1.value, v0.value);
      const chunkKey = `t2m/c/1/${runChunks("t2m", 1)[0]}`;
      const servedBefore = await dataKey(chunkKey);
      const v2Before = await dataKey(v2Key(chunkKey));
      const recoded = v2Key(`u10/c/1/${runChunks("u10", 1)[0]}`);
      const recodedBefore = await dataKey(recoded);

      copyRun(0, 1); // run 1 now holds run 0's bytes; no metadata changed

      const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
      await rewritten("/point serves the old run 1 from its cache", async () =>
        same((await point(1)).values, p0.values),
      );
      await rewritten("the export serves the old run 1", async () => (await exportNpy(1)).equals(e0));
      await rewritten(
        "/api/forecast/value serves the old run 1",
        async () => (await value(runs[1])).value === v0.value,
      );
      const stored = readFileSync(join(storeDir, G, chunkKey));
      assert.ok(!stored.equals(servedBefore));
      await rewritten("/data serves other bytes than stored", async () => (await dataKey(chunkKey)).equals(stored));
      await rewritten(
        "the v2 view serves the old chunk",
        async () => !(await dataKey(v2Key(chunkKey))).equals(v2Before),
      );
      const run0 = await dataKey(recoded.replace("u10/1.", "u10/0."));
      assert.ok(!run0.equals(recodedBefore));
      await rewritten("a re-encoded /data chunk is served from before the rewrite", async () =>
        (await dataKey(recoded)).equals(run0),
      );
    });

    test("an appended run shows up on /point, export, /data and /api/forecast/value, which agree", async () => {
      const before = await runsOfData();
      const p0 = await point(0);
      const e0 = await exportNpy(0);
      const newRun = await appendRun(0);
      assert.ok(!before.includes(newRun));

      const runs = await eventually("the new run on /data/datasets", async () => {
        const r = await runsOfData();
        return r.length === before.length + 1 ? r : undefined;
      });
      assert.deepEqual(runs, [...before, newRun]);
      // Every route now has it, at once (one revalidated metadata serves them all).
      const latest = await get(`${srv.url}/point?lat=-31&lon=101&var=t2m&group=${G}`, H());
      assert.equal(latest.status, 200);
      assert.equal(latest.json().run, newRun);
      assert.deepEqual((await point(before.length)).values, p0.values);
      assert.deepEqual((await point(newRun)).values, p0.values);
      assert.ok((await exportNpy(before.length)).equals(e0));
      assert.equal((await value(newRun)).run, newRun);
      const zm = JSON.parse((await dataKey(".zmetadata")).toString());
      assert.deepEqual(zm.metadata["t2m/.zarray"].shape.slice(0, 1), [before.length + 1]);
      const v3 = JSON.parse((await dataKey("zarr.json")).toString());
      assert.equal(v3.consolidated_metadata.metadata.t2m.shape[0], before.length + 1);
      const newChunk = `t2m/c/${before.length}/${runChunks("t2m", before.length)[0]}`;
      assert.ok((await dataKey(newChunk)).equals(readFileSync(join(storeDir, G, newChunk))));
    });
  });
}
