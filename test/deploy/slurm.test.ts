// deploy/slurm/ on a real single-node Slurm (Debian's slurm-wlm and munge, started by the test):
// run-cycle.sh submits the build as a job array, one shard per task with --shard auto, and the
// publish job with --dependency=afterok; the published build must equal one unsharded build of
// the same store, file for file.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, sampleStore, tempDir, until } from "../helpers/harness.ts";
import { listFiles } from "../pipeline/build-fixture.ts";
import { ROOT } from "./pods.ts";
import { type SlurmCluster, startSlurm } from "./slurm-cluster.ts";

const run = promisify(execFile);
const SHARDS = 2;
/** A small build: two layers to zoom 2, no orientation layer. */
const BUILD_ARGS = ["--max-zoom", "2", "--groups", "global", "--vars", "t2m,msl", "--no-orientation"];
/** Hang detector for the whole cycle on a loaded machine (it takes well under a minute idle). */
const CYCLE_TIMEOUT_MS = 600_000;

let cluster: SlurmCluster;
let storeDir: string;
let work: string;

before(async () => {
  cluster = await startSlurm();
  storeDir = await sampleStore();
  work = tempDir("gridcast-slurm-work-");
});
after(() => {
  cluster?.stop();
  cleanup(storeDir, work, ...(cluster ? [cluster.dir] : []));
});

test("run-cycle.sh: a job array of shards, then publish after all succeeded, equals one unsharded build", {
  timeout: CYCLE_TIMEOUT_MS + 120_000,
}, async () => {
  const gridcast = [process.execPath, join(ROOT, "bin/gridcast")];
  const refOut = join(work, "reference");
  const out = join(work, "out");
  const ref = await run(gridcast[0], [
    gridcast[1],
    "build",
    "--store",
    storeDir,
    "--out",
    refOut,
    ...BUILD_ARGS,
    "--build-id",
    "reference",
  ]);
  assert.match(ref.stdout, /published/);

  const { stdout } = await run("bash", [join(ROOT, "deploy/slurm/run-cycle.sh"), String(SHARDS)], {
    cwd: work,
    env: {
      ...cluster.env,
      GRIDCAST_STORE: storeDir,
      GRIDCAST_OUT: out,
      GRIDCAST_BUILD_ID: "cycle-1",
      GRIDCAST_CMD: gridcast.join(" "),
      GRIDCAST_BUILD_ARGS: BUILD_ARGS.join(" "),
      SBATCH_ARGS: `--output=${join(work, "%x-%A_%a.log")}`,
    },
  });
  const m = /array job (\d+) \(2 shards\), publish job (\d+)/.exec(stdout);
  assert.ok(m, stdout);
  const squeue = () => execFileSync("squeue", ["-h", "-j", `${m[1]},${m[2]}`], { env: cluster.env, encoding: "utf8" });
  await until("both jobs done", () => squeue().trim() === "", CYCLE_TIMEOUT_MS);
  const logs = readdirSync(work).filter((f) => f.endsWith(".log"));
  const said = logs.map((f) => `${f}:\n${readFileSync(join(work, f), "utf8")}`).join("\n");
  assert.equal(logs.filter((f) => f.startsWith("gridcast-build-")).length, SHARDS, said);
  assert.equal(readlinkSync(join(out, "current")), "builds/cycle-1", said);

  const a = join(refOut, "builds", "reference");
  const b = join(out, "builds", "cycle-1");
  const files = listFiles(a);
  assert.ok(files.filter((f) => f.startsWith("tiles/")).length > 20, "a real pyramid");
  assert.deepEqual(listFiles(b), files);
  // The catalog (and its compressed twins) and the manifest name the build; compared without that below.
  for (const f of files.filter((x) => !/^(catalog|manifest)\.json/.test(x))) {
    assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f);
  }
  const catalog = (dir: string) => {
    const { build_id, generated_at, ...rest } = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
    return rest;
  };
  assert.deepEqual(catalog(b), catalog(a));
  assert.equal(JSON.parse(readFileSync(join(b, "manifest.json"), "utf8")).shards, SHARDS);
});
