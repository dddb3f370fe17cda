// `--shard auto`: the part a batch task renders, from the variables its engine sets, and a clear
// refusal (exit 2, before any work) when they are missing or do not fit together.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, test } from "node:test";
import { parseShard, shardFromEnv } from "../../src/cli/shard.ts";

const BIN = resolve(import.meta.dirname, "../../bin/gridcast");

describe("shardFromEnv", () => {
  test("Kubernetes: JOB_COMPLETION_INDEX from 0, the count from GRIDCAST_SHARD_COUNT", () => {
    assert.deepEqual(shardFromEnv({ JOB_COMPLETION_INDEX: "0", GRIDCAST_SHARD_COUNT: "4" }), { index: 1, count: 4 });
    assert.deepEqual(shardFromEnv({ JOB_COMPLETION_INDEX: "3", GRIDCAST_SHARD_COUNT: "4" }), { index: 4, count: 4 });
  });

  test("Cloud Run gives both; AWS Batch the index", () => {
    assert.deepEqual(shardFromEnv({ CLOUD_RUN_TASK_INDEX: "2", CLOUD_RUN_TASK_COUNT: "5" }), { index: 3, count: 5 });
    assert.deepEqual(shardFromEnv({ AWS_BATCH_JOB_ARRAY_INDEX: "9", GRIDCAST_SHARD_COUNT: "10" }), {
      index: 10,
      count: 10,
    });
    // The same count said twice is fine.
    assert.deepEqual(
      shardFromEnv({ CLOUD_RUN_TASK_INDEX: "0", CLOUD_RUN_TASK_COUNT: "2", GRIDCAST_SHARD_COUNT: "2" }),
      { index: 1, count: 2 },
    );
  });

  test("Slurm: the array index from its first index and step, the count from SLURM_ARRAY_TASK_COUNT or MAX", () => {
    const slurm = (id: number, extra: Record<string, string> = {}) =>
      shardFromEnv({ SLURM_ARRAY_TASK_ID: String(id), SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_MAX: "3", ...extra });
    // sbatch --array=0-3
    assert.deepEqual(slurm(0, { SLURM_ARRAY_TASK_COUNT: "4", SLURM_ARRAY_TASK_STEP: "1" }), { index: 1, count: 4 });
    assert.deepEqual(slurm(3, { SLURM_ARRAY_TASK_COUNT: "4" }), { index: 4, count: 4 });
    // MAX alone gives the count; --array=1-4 numbers from 1; --array=0-6:2 steps by 2.
    assert.deepEqual(slurm(2), { index: 3, count: 4 });
    assert.deepEqual(slurm(1, { SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "4" }), { index: 1, count: 4 });
    assert.deepEqual(slurm(4, { SLURM_ARRAY_TASK_MAX: "6", SLURM_ARRAY_TASK_STEP: "2", SLURM_ARRAY_TASK_COUNT: "4" }), {
      index: 3,
      count: 4,
    });
    // A list (--array=1,3,7) has no range numbering: refused by name.
    assert.throws(
      () => slurm(3, { SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "7", SLURM_ARRAY_TASK_COUNT: "3" }),
      /Slurm array is not a range/,
    );
    assert.throws(() => shardFromEnv({ SLURM_ARRAY_TASK_ID: "2" }), /set GRIDCAST_SHARD_COUNT/);
    assert.throws(() => slurm(1, { SLURM_ARRAY_TASK_COUNT: "4", GRIDCAST_SHARD_COUNT: "5" }), /task counts disagree/);
  });

  test("PBS Pro: PBS_ARRAY_INDEX from 0 (qsub -J 0-N), the count from GRIDCAST_SHARD_COUNT", () => {
    assert.deepEqual(shardFromEnv({ PBS_ARRAY_INDEX: "2", GRIDCAST_SHARD_COUNT: "3" }), { index: 3, count: 3 });
    assert.throws(() => shardFromEnv({ PBS_ARRAY_INDEX: "3", GRIDCAST_SHARD_COUNT: "3" }), /outside the task count/);
    assert.throws(() => shardFromEnv({ PBS_ARRAY_INDEX: "0" }), /PBS Pro array job gives the task index/);
  });

  test("refusals name what is wrong", () => {
    assert.throws(() => shardFromEnv({}), /no task index in the environment \(looked for JOB_COMPLETION_INDEX/);
    assert.throws(() => shardFromEnv({ JOB_COMPLETION_INDEX: "1" }), /set GRIDCAST_SHARD_COUNT/);
    assert.throws(
      () => shardFromEnv({ JOB_COMPLETION_INDEX: "4", GRIDCAST_SHARD_COUNT: "4" }),
      /task index 4 is outside the task count 4/,
    );
    assert.throws(() => shardFromEnv({ JOB_COMPLETION_INDEX: "one", GRIDCAST_SHARD_COUNT: "4" }), /whole number/);
    assert.throws(() => shardFromEnv({ JOB_COMPLETION_INDEX: "-1", GRIDCAST_SHARD_COUNT: "4" }), /whole number/);
    assert.throws(
      () => shardFromEnv({ CLOUD_RUN_TASK_INDEX: "0", CLOUD_RUN_TASK_COUNT: "3", GRIDCAST_SHARD_COUNT: "4" }),
      /task counts disagree \(CLOUD_RUN_TASK_COUNT=3, GRIDCAST_SHARD_COUNT=4\)/,
    );
    assert.throws(
      () => shardFromEnv({ JOB_COMPLETION_INDEX: "0", AWS_BATCH_JOB_ARRAY_INDEX: "1", GRIDCAST_SHARD_COUNT: "4" }),
      /disagree/,
    );
    assert.throws(() => shardFromEnv({ JOB_COMPLETION_INDEX: "0", GRIDCAST_SHARD_COUNT: "0" }), /at least 1/);
  });

  test("--shard k/n is taken as written; anything else is refused", () => {
    assert.deepEqual(parseShard("2/3", {}), { index: 2, count: 3 });
    assert.equal(parseShard(undefined, { JOB_COMPLETION_INDEX: "0" }), undefined);
    assert.throws(() => parseShard("2-3", {}), /k\/n \(e\.g\. 1\/4\) or auto/);
  });
});

test("gridcast build --shard auto without an engine exits 2 with one line", () => {
  const r = spawnSync(
    process.execPath,
    [BIN, "build", "--shard", "auto", "--build-id", "x", "--store", "/nonexistent"],
    {
      encoding: "utf8",
      env: { PATH: process.env.PATH, GRIDCAST_SHARD_COUNT: "2" },
    },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr.trim(), /^gridcast: --shard auto: no task index in the environment/);
});
