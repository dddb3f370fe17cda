// `--shard k/n` as written, or `--shard auto`: the part and the count read from the variables a
// batch engine sets on each task of an array/indexed job. Engines number tasks from 0; shards are
// numbered from 1, so task i renders shard i+1.
import { ConfigError } from "../errors.ts";

export interface Shard {
  index: number;
  count: number;
}

/** Engine variables: the task's 0-based index, and the task count where the engine gives it. */
const ENGINES: { name: string; index: string; count?: string }[] = [
  // Kubernetes Indexed Job: the count is .spec.completions, which the pod is not told; the Job
  // passes it as GRIDCAST_SHARD_COUNT (deploy/k8s/build-job.yaml).
  { name: "Kubernetes Indexed Job", index: "JOB_COMPLETION_INDEX" },
  { name: "Cloud Run job", index: "CLOUD_RUN_TASK_INDEX", count: "CLOUD_RUN_TASK_COUNT" },
  { name: "AWS Batch array job", index: "AWS_BATCH_JOB_ARRAY_INDEX" },
];

/** Variable that gives (or confirms) the shard count for every engine. */
export const SHARD_COUNT_VAR = "GRIDCAST_SHARD_COUNT";

function whole(name: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`--shard auto: ${name} must be a whole number, got "${raw}"`);
  return Number(raw.trim());
}

/** The shard a batch task renders, from its environment; a clear error when it cannot be told. */
export function shardFromEnv(env: NodeJS.ProcessEnv): Shard {
  const found = ENGINES.filter((e) => env[e.index] !== undefined && env[e.index] !== "");
  if (found.length === 0) {
    throw new ConfigError(
      `--shard auto: no task index in the environment (looked for ${ENGINES.map((e) => e.index).join(", ")}); ` +
        "run under one of those engines or pass --shard k/n",
    );
  }
  const indexes = new Set(found.map((e) => whole(e.index, env[e.index]!)));
  if (indexes.size > 1) {
    throw new ConfigError(`--shard auto: ${found.map((e) => `${e.index}=${env[e.index]}`).join(", ")} disagree`);
  }
  const index = [...indexes][0];
  const counts = new Map<string, number>();
  for (const e of found) if (e.count && env[e.count]) counts.set(e.count, whole(e.count, env[e.count]!));
  if (env[SHARD_COUNT_VAR]) counts.set(SHARD_COUNT_VAR, whole(SHARD_COUNT_VAR, env[SHARD_COUNT_VAR]!));
  if (counts.size === 0) {
    throw new ConfigError(
      `--shard auto: ${found[0].name} gives the task index (${found[0].index}) but not the task count; ` +
        `set ${SHARD_COUNT_VAR} to the job's task count (.spec.completions on Kubernetes)`,
    );
  }
  if (new Set(counts.values()).size > 1) {
    throw new ConfigError(
      `--shard auto: the task counts disagree (${[...counts].map(([k, v]) => `${k}=${v}`).join(", ")})`,
    );
  }
  const count = [...counts.values()][0];
  if (count < 1) throw new ConfigError(`--shard auto: the task count must be at least 1, got ${count}`);
  if (index >= count) {
    throw new ConfigError(
      `--shard auto: task index ${index} is outside the task count ${count} (${[...counts.keys()].join(", ")}); ` +
        "the count must equal the job's number of tasks",
    );
  }
  return { index: index + 1, count };
}

/** `--shard` as given: undefined, `auto`, or `k/n` with 1 ≤ k ≤ n. */
export function parseShard(s: string | undefined, env: NodeJS.ProcessEnv): Shard | undefined {
  if (s === undefined) return undefined;
  if (s.trim() === "auto") return shardFromEnv(env);
  const m = /^(\d+)\/(\d+)$/.exec(s.trim());
  if (!m) throw new ConfigError(`--shard must look like k/n (e.g. 1/4) or auto, got "${s}"`);
  return { index: Number(m[1]), count: Number(m[2]) };
}
