// `gridcast inspect` as an operator runs it: a child process on a generated store.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, sampleStore } from "../helpers/harness.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
let storeDir: string;
before(async () => {
  storeDir = await sampleStore();
});
after(() => cleanup(storeDir));

test("inspect --json describes groups, variables, grids, runs and embeddings", async () => {
  const { stdout } = await run(process.execPath, ["bin/gridcast", "inspect", "--store", storeDir, "--json"], {
    cwd: ROOT,
  });
  const info = JSON.parse(stdout);
  const ids = info.forecast_groups.map((g: { id: string }) => g.id).sort();
  assert.deepEqual(ids, ["forecast/alps", "forecast/europe", "forecast/global"]);
  const global = info.forecast_groups.find((g: { id: string }) => g.id === "forecast/global");
  assert.equal(global.kind, "global");
  assert.equal(global.latitude_order, "descending");
  assert.equal(global.longitude_convention, "0..360");
  assert.deepEqual(global.runs, ["2026-11-20T00:00:00", "2026-11-20T12:00:00"]);
  assert.deepEqual(global.lead_hours, [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(global.levels, [500, 850]);
  const tcc = global.variables.find((v: { name: string }) => v.name === "tcc");
  assert.equal(tcc.dtype, "int16");
  assert.equal(tcc.packed, true);
  assert.deepEqual(tcc.codecs, ["bytes", "zstd"]);
  const europe = info.forecast_groups.find((g: { id: string }) => g.id === "forecast/europe");
  assert.equal(europe.zarr_format, 2);
  const alps = info.forecast_groups.find((g: { id: string }) => g.id === "forecast/alps");
  assert.equal(alps.variables.find((v: { name: string }) => v.name === "u10").stored, "10u");
  assert.ok(info.embeddings.items > 10);
});

test("a missing store is one clear line on stderr and a non-zero exit", async () => {
  const err = await run(process.execPath, ["bin/gridcast", "inspect", "--store", "/nonexistent/store"], {
    cwd: ROOT,
  }).then(
    () => assert.fail("should fail"),
    (e) => e,
  );
  assert.notEqual(err.code, 0);
  const lines = err.stderr.trim().split("\n");
  assert.equal(lines.length, 1, err.stderr);
  assert.match(lines[0], /^gridcast: /);
});
