// `--shard k/n` as written, or `--shard auto`: the part and the count read from the variables a
// batch engine sets on each task of an array/indexed job (Kubernetes, Cloud Run, AWS Batch, Slurm,
// PBS Pro). Tasks are counted from 0 (Slurm's from the array's first index); shards are numbered
// from 1, so task i renders shard i+1.
import { ConfigError } from "../errors.ts";
import { MAX_SHARD_COUNT } from "../pipeline/job-split.ts";

export interface Shard {
  index: number;
  count: number;
}

/** What one engine says about the task: its 0-based index, and the task counts it gives. */
interface EngineTask {
  index: number;
  counts: [variable: string, count: number][];
}

interface Engine {
  name: string;
  /** The variable whose presence says the task runs under this engine. */
  index: string;
  read(env: NodeJS.ProcessEnv): EngineTask;
}

/** An engine that numbers tasks from 0 and may give the count in one variable. */
const fromZero = (name: string, index: string, count?: string): Engine => ({
  name,
  index,
  read: (env) => ({
    index: whole(index, env[index]!),
    counts: count && env[count] ? [[count, whole(count, env[count]!)]] : [],
  }),
});

/**
 * A Slurm job array (sbatch --array=A-B[:S]): tasks are numbered A, A+S, ... B, so the 0-based
 * index is (ID - MIN) / STEP, and the count is SLURM_ARRAY_TASK_COUNT (or (MAX - MIN) / STEP + 1).
 * An array given as a list (--array=1,3,7) has no such numbering and is refused.
 */
const SLURM: Engine = {
  name: "Slurm job array",
  index: "SLURM_ARRAY_TASK_ID",
  read(env) {
    const id = whole("SLURM_ARRAY_TASK_ID", env.SLURM_ARRAY_TASK_ID!);
    const num = (v: string) => (env[v] ? whole(v, env[v]!) : undefined);
    const min = num("SLURM_ARRAY_TASK_MIN") ?? 0;
    const step = num("SLURM_ARRAY_TASK_STEP") ?? 1;
    const max = num("SLURM_ARRAY_TASK_MAX");
    const count = num("SLURM_ARRAY_TASK_COUNT");
    const span = max === undefined || step < 1 ? undefined : (max - min) / step + 1;
    if (step < 1 || (id - min) % step !== 0 || (count !== undefined && span !== undefined && span !== count)) {
      throw new ConfigError(
        `--shard auto: the Slurm array is not a range A-B[:S] (SLURM_ARRAY_TASK_ID=${id}, MIN=${min}, ` +
          `MAX=${max ?? "unset"}, STEP=${step}, COUNT=${count ?? "unset"}); submit it with --array=0-${(count ?? 1) - 1}`,
      );
    }
    const counts: EngineTask["counts"] = [];
    if (count !== undefined) counts.push(["SLURM_ARRAY_TASK_COUNT", count]);
    else if (span !== undefined) counts.push(["SLURM_ARRAY_TASK_MAX", span]);
    return { index: (id - min) / step, counts };
  },
};

/** Engine variables: the task's index, and the task count where the engine gives it. */
const ENGINES: Engine[] = [
  // Kubernetes Indexed Job: the count is .spec.completions, which the pod is not told; the Job
  // passes it as GRIDCAST_SHARD_COUNT (deploy/k8s/build-job.yaml).
  fromZero("Kubernetes Indexed Job", "JOB_COMPLETION_INDEX"),
  fromZero("Cloud Run job", "CLOUD_RUN_TASK_INDEX", "CLOUD_RUN_TASK_COUNT"),
  fromZero("AWS Batch array job", "AWS_BATCH_JOB_ARRAY_INDEX"),
  SLURM,
  // PBS Pro array job (qsub -J 0-N): the subjob index; PBS does not tell the count.
  fromZero("PBS Pro array job", "PBS_ARRAY_INDEX"),
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
  const tasks = found.map((e) => e.read(env));
  const indexes = new Set(tasks.map((t) => t.index));
  if (indexes.size > 1) {
    throw new ConfigError(`--shard auto: ${found.map((e) => `${e.index}=${env[e.index]}`).join(", ")} disagree`);
  }
  const index = [...indexes][0];
  const counts = new Map<string, number>(tasks.flatMap((t) => t.counts));
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
  if (s.trim() === "auto") return bounded(shardFromEnv(env));
  const m = /^(\d+)\/(\d+)$/.exec(s.trim());
  if (!m) throw new ConfigError(`--shard must look like k/n (e.g. 1/4) or auto, got "${s}"`);
  return bounded({ index: Number(m[1]), count: Number(m[2]) });
}

/** Refuses a shard count above MAX_SHARD_COUNT here, before the out dir is looked at. */
function bounded(shard: Shard): Shard {
  if (shard.count > MAX_SHARD_COUNT) {
    throw new ConfigError(`--shard: at most ${MAX_SHARD_COUNT} shards, got ${shard.count}`);
  }
  return shard;
}
