// Dividing a build's jobs: among shards (each machine of a sharded build takes its part of the
// same plan) and, within one build, into units for the pool's threads.
import type { Job } from "./jobs.ts";

/**
 * Most shards a build may be split into: far more machines than any build uses, and small enough
 * that each shard's bookkeeping (one load figure per shard, below) stays trivial. A count above
 * it is refused before anything is written (exit 2), not left to fail on allocation.
 */
export const MAX_SHARD_COUNT = 10_000;

/**
 * Shard k of n (1-based). Every shard computes the same assignment from the same plan: jobs in
 * order of tiles (then id), each to the shard with the fewest tiles so far (lowest k on a tie).
 * Disjoint, covering, and balanced by work rather than by job count.
 */
export function shardJobs(jobs: Job[], index: number, count: number): Job[] {
  const work = (j: Job): number => j.leads.length * j.tilesPerLead;
  const order = [...jobs].sort((a, b) => work(b) - work(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const load = new Array<number>(count).fill(0);
  const mine: Job[] = [];
  for (const job of order) {
    let k = 0;
    for (let i = 1; i < count; i++) if (load[i] < load[k]) k = i;
    load[k] += work(job);
    if (k === index - 1) mine.push(job);
  }
  return mine;
}

/** Smallest slice of a pyramid worth a job of its own. */
const MIN_PART_TILES = 256;

/**
 * Work units for the pool. Leads to hard-link stay one unit per job; leads to render are cut
 * into pyramid slices when there are too few jobs to keep every thread busy (one layer, one
 * lead would otherwise run on one core). Each slice reads the field itself: one extra read.
 */
export function splitForThreads(jobs: Job[], threads: number): Job[] {
  const rendering = jobs.filter((j) => j.leads.some((l) => !l.reuse)).length;
  const want = rendering >= 4 * threads ? 1 : Math.ceil((4 * threads) / Math.max(1, rendering));
  const out: Job[] = [];
  for (const job of jobs) {
    const reuse = job.leads.filter((l) => l.reuse);
    const render = job.leads.filter((l) => !l.reuse);
    if (reuse.length) out.push({ ...job, leads: reuse });
    if (!render.length) continue;
    const count = Math.max(1, Math.min(want, Math.floor(job.tilesPerLead / MIN_PART_TILES)));
    for (let index = 0; index < count; index++) {
      out.push({ ...job, leads: render, ...(count > 1 ? { part: { index, count } } : {}) });
    }
  }
  return out;
}
