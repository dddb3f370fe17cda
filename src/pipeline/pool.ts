// The worker pool: `concurrency` threads, each with its own Store (and chunk cache), take whole
// jobs from one queue, biggest first so no thread is left with a long job at the end. The first
// failure stops every thread and rejects with the layer and run that could not be rendered.
import { Worker } from "node:worker_threads";
import { useCompileCache } from "../compile-cache.ts";
import { CorruptDataError, StoreUnavailableError } from "../errors.ts";
import type { LeadResult } from "../published/manifest.ts";
import type { Job } from "./jobs.ts";
import type { FromWorker, ToWorker, WorkerInit } from "./worker-protocol.ts";

const WORKER = new URL("./worker.ts", import.meta.url);

/**
 * An orientation tile costs several forecast tiles (labels placed per zoom, RGBA encoding): it
 * starts first, and the other threads' layers run beside it instead of after it.
 */
const ORIENTATION_WEIGHT = 4;

function cost(job: Job): number {
  const weight = job.recipe.kind === "orientation" ? ORIENTATION_WEIGHT : 1;
  return (
    (job.leads.reduce((sum, l) => sum + (l.reuse ? 0.05 : 1), 0) * job.tilesPerLead * weight) / (job.part?.count ?? 1)
  );
}

function jobError(job: Job | undefined, name: string, message: string): Error {
  const what = job ? `cannot render ${job.layer} run ${job.runIso}: ${message}` : `tile worker failed: ${message}`;
  if (name === "CorruptDataError" || name === "InvalidParameterError") return new CorruptDataError(what);
  if (name === "StoreUnavailableError" || name === "NotFoundError") return new StoreUnavailableError(what);
  return new Error(what);
}

/**
 * Threads are started on construction, so they load their modules while the main thread still
 * plans the build; `run` then feeds them the jobs, `close` stops them.
 */
export class TilePool {
  readonly #workers: Worker[] = [];
  #broken: Error | undefined;

  constructor(init: WorkerInit, threads: number) {
    // Workers read NODE_COMPILE_CACHE from the environment they start with.
    useCompileCache();
    for (let i = 0; i < Math.max(1, threads); i++) {
      const w = new Worker(WORKER, { workerData: init });
      // Until `run` listens, a thread that fails to start is remembered, not thrown.
      w.on("error", (e) => {
        this.#broken ??= jobError(undefined, e.name, e.message);
      });
      this.#workers.push(w);
    }
  }

  run(jobs: Job[], onTiles: (n: number) => void): Promise<LeadResult[]> {
    const queue = [...jobs].sort((a, b) => cost(b) - cost(a));
    const results: LeadResult[] = [];
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      let idle = 0;
      let failed = false;
      const fail = (err: Error): void => {
        if (failed) return;
        failed = true;
        this.close().then(() => reject(err));
      };
      for (const w of this.#workers) {
        let current: Job | undefined;
        const next = (): void => {
          current = queue.shift();
          if (current) w.postMessage({ job: current } satisfies ToWorker);
          else if (++idle === this.#workers.length && !failed) resolve(results);
        };
        w.on("message", (m: FromWorker) => {
          if (m.type === "tiles") onTiles(m.n);
          else if (m.type === "done") {
            results.push(...m.results);
            next();
          } else fail(jobError(current, m.name, m.message));
        });
        w.on("error", (e) => fail(jobError(current, e.name, e.message)));
        w.on("exit", (code) => {
          if (current && code !== 0) fail(jobError(current, "Error", `worker exited with code ${code}`));
        });
        next();
      }
    });
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#workers.map((w) => w.terminate()));
  }
}
