// A forecast cycle published under running readers. xarray with zarr-python 2 (the v2 view) and
// xarray with zarr-python 3 (the v3 view) read /data in a loop while a run is appended to the
// store, and /point and /api/forecast/value are asked every 0.2 s: every xarray read is the old
// cycle whole or the new one whole (never metadata of one with chunks of the other, never an
// error), and /point and value answer the new run for every request started one metadata check
// interval (2 s) after the cycle was written. Then a build announcing a newer run is published:
// value answers that run at once, never 404 "no run at".
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { runToken } from "../../src/published/layout.ts";
import { METADATA_CHECK_MS } from "../../src/store/store.ts";
import { appendRun } from "../helpers/append-run.ts";
import { cleanup, get, PYTHON, sampleStore, type TestServer, tempDir, testServer, until } from "../helpers/harness.ts";
import { requireZarr3Python } from "../helpers/zarr3-python.ts";

const READER = resolve(import.meta.dirname, "../python/cycle_reader.py");
/** How often /point and value are asked while the cycle switches. */
const POLL_MS = 200;
/** Hang detector for each reader: stops by itself after this long if the test never says stop. */
const READER_MAX_S = 240;
const POINT = "lat=-31&lon=101";

let storeDir: string;
let srv: TestServer;
let key: string;
let work: string;

before(async () => {
  storeDir = await sampleStore();
  srv = await testServer(storeDir);
  key = await srv.key(["weather"]);
  work = tempDir("gridcast-switch-");
});
after(async () => {
  await srv.close();
  cleanup(storeDir, work);
});

interface Read {
  runs?: string[];
  sums?: number[];
  nans?: number[];
  error?: string;
  ready?: boolean;
  /** When the line arrived (performance.now()). */
  at: number;
}

/** One reader process and every line it printed. */
function startReader(python: string, stop: string): { proc: ChildProcess; reads: Read[]; done: Promise<number> } {
  const url = `${srv.url}/data/datasets/forecast~global/zarr/`;
  const proc = spawn(python, [READER, url, key, stop, String(READER_MAX_S)], { stdio: ["ignore", "pipe", "pipe"] });
  const reads: Read[] = [];
  let buf = "";
  let err = "";
  proc.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      reads.push({ ...JSON.parse(buf.slice(0, nl)), at: performance.now() });
      buf = buf.slice(nl + 1);
    }
  });
  proc.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const done = new Promise<number>((ok) =>
    proc.on("close", (code) => {
      if (code !== 0) console.log(`# reader ${python} exited ${code}: ${err.slice(-2000)}`);
      ok(code ?? -1);
    }),
  );
  return { proc, reads, done };
}

interface Poll {
  startedAt: number;
  endedAt: number;
  point: { status: number; run?: string };
  value: { status: number; run?: string; detail?: string };
}

test("xarray (zarr 2 and 3) reads one cycle whole across a switch; /point and value move within the check interval", {
  timeout: 300_000,
}, async () => {
  const H = { "X-API-Key": key };
  const runsBefore: string[] = (await get(`${srv.url}/data/datasets/forecast~global/zarr/`, H)).json().runs;
  assert.equal(runsBefore.length, 2);
  const stop = join(work, "stop");
  const readers = [startReader(PYTHON, stop), startReader(requireZarr3Python("the cycle-switch test"), stop)];
  try {
    // Both readers have finished one whole read of the old cycle: the switch lands mid-loop.
    await until("a first read by each reader", () => readers.every((r) => r.reads.some((x) => x.runs)), 120_000);
    const old = readers[0].reads.find((x) => x.runs)!;
    assert.deepEqual(old.runs, runsBefore);

    const polls: Poll[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const startedAt = performance.now();
        const [p, v] = await Promise.all([
          get(`${srv.url}/point?${POINT}&var=t2m&group=forecast/global`, H),
          get(`${srv.url}/api/forecast/value?layer=global.t2m&${POINT}`),
        ]);
        polls.push({
          startedAt,
          endedAt: performance.now(),
          point: { status: p.status, run: p.status === 200 ? p.json().run : undefined },
          value: { status: v.status, run: v.status === 200 ? v.json().run : undefined, detail: v.body.toString() },
        });
        await new Promise((ok) => setTimeout(ok, POLL_MS));
      }
    })();

    await new Promise((ok) => setTimeout(ok, 1000));
    const writing = performance.now();
    const newRun = await appendRun(storeDir, runsBefore, 0);
    const writtenAt = performance.now();
    // Each reader finishes two more whole reads after the new cycle must be visible.
    const due = writtenAt + METADATA_CHECK_MS;
    await until(
      "two reads of each reader after the switch",
      () => readers.every((r) => r.reads.filter((x) => x.at > due && x.runs).length >= 2),
      180_000,
    );
    await until("polls after the switch", () => polls.filter((p) => p.startedAt > due).length >= 3, 30_000);
    polling = false;
    await poller;
    writeFileSync(stop, "");
    await Promise.all(readers.map((r) => r.done));

    const newCycle = {
      runs: [...runsBefore, newRun],
      sums: [...old.sums!, old.sums![0]],
      nans: [...old.nans!, old.nans![0]],
    };
    const oldCycle = { runs: old.runs, sums: old.sums, nans: old.nans };
    for (const [i, r] of readers.entries()) {
      const who = i === 0 ? "xarray + zarr 2" : "xarray + zarr 3";
      const errors = r.reads.filter((x) => x.error);
      assert.deepEqual(errors, [], `${who} failed reads across the switch`);
      let sawNew = false;
      for (const x of r.reads.filter((x) => x.runs)) {
        const got = { runs: x.runs, sums: x.sums, nans: x.nans };
        const isNew = JSON.stringify(got) === JSON.stringify(newCycle);
        assert.ok(
          isNew || JSON.stringify(got) === JSON.stringify(oldCycle),
          `${who} read a mixed cycle: ${JSON.stringify(got)}`,
        );
        assert.ok(!(sawNew && !isNew), `${who} went back to the old cycle after reading the new one`);
        sawNew ||= isNew;
      }
      assert.ok(sawNew, `${who} never read the new cycle`);
    }
    for (const p of polls) {
      assert.equal(p.point.status, 200, "/point during the switch");
      assert.equal(p.value.status, 200, `value during the switch: ${p.value.detail}`);
      // Answered before the cycle's first byte was written: the old run (no cycle from nowhere).
      if (p.endedAt < writing) {
        assert.equal(p.point.run, runsBefore.at(-1), "/point before the switch");
        assert.equal(p.value.run, runsBefore.at(-1), "value before the switch");
      }
      if (p.startedAt > due) {
        assert.equal(p.point.run, newRun, "/point still answers the old run one check interval after the switch");
        assert.equal(p.value.run, newRun, "value still answers the old run one check interval after the switch");
      }
    }

    // A build announcing a newer run, published right after the cycle is written: the metadata the
    // server holds was checked moments ago, yet value follows the catalog at once.
    assert.equal((await get(`${srv.url}/point?${POINT}&var=t2m&group=forecast/global`, H)).status, 200);
    const checkedAt = performance.now();
    const newer = await appendRun(storeDir, newCycle.runs, 1);
    const build = join(srv.dir, "output", "builds", "b2");
    mkdirSync(build, { recursive: true });
    const catalog = { build_id: "b2", layers: [{ id: "global.t2m", runs: [{ token: runToken(newer) }] }] };
    writeFileSync(join(build, "catalog.json"), JSON.stringify(catalog));
    symlinkSync(join("builds", "b2"), join(srv.dir, "output", "current"));
    const v = await get(`${srv.url}/api/forecast/value?layer=global.t2m&${POINT}`);
    const elapsed = performance.now() - checkedAt;
    if (elapsed >= METADATA_CHECK_MS)
      console.log(`# the publish took ${elapsed} ms: the check interval had passed anyway`);
    assert.equal(v.status, 200, v.body.toString());
    assert.equal(v.json().run, newer);
  } finally {
    writeFileSync(stop, "");
    for (const r of readers) r.proc.kill();
  }
});

test("the run coordinate's chunks read with the previous cycle's metadata still decode to its values", async () => {
  const H = { "X-API-Key": key };
  const base = `${srv.url}/data/datasets/forecast~global/zarr`;
  const v2Old = (await get(`${base}/.zmetadata`, H)).json().metadata["time/.zarray"];
  const v3Old = (await get(`${base}/zarr.json`, H)).json().consolidated_metadata.metadata.time;
  const oldValues = new BigInt64Array(new Uint8Array((await get(`${base}/time/0`, H)).body).buffer);
  const runs: string[] = (await get(`${base}/`, H)).json().runs;
  await appendRun(storeDir, runs, 0);
  await until("the new run on /data", async () => (await get(`${base}/`, H)).json().runs.length === runs.length + 1);
  for (const [key, chunk] of [
    ["time/0", v2Old.chunks[0]],
    ["time/c/0", v3Old.chunk_grid.configuration.chunk_shape[0]],
  ]) {
    const r = await get(`${base}/${key}`, H);
    assert.equal(r.status, 200);
    // A whole chunk of the length the old metadata gave, its first values those the old cycle had.
    assert.equal(r.body.byteLength, chunk * 8, `${key}: a chunk of the old metadata's length`);
    const now = new BigInt64Array(new Uint8Array(r.body).buffer);
    assert.deepEqual([...now.subarray(0, v2Old.shape[0])], [...oldValues.subarray(0, v2Old.shape[0])]);
    assert.ok(now[v2Old.shape[0]] > now[v2Old.shape[0] - 1], "the appended run follows in the same chunk");
  }
});
