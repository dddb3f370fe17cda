// One of the takers in test/pipeline/lock-race.test.ts: for each round, waits at the barrier,
// tries to take the out dir's lock (stale, left by a dead pid), reports whether it got it, and
// releases it once the main thread has counted.
import { parentPort, workerData } from "node:worker_threads";
import { acquireLock } from "../../src/pipeline/publish.ts";

const { out, rounds, sync } = workerData as { out: string; rounds: number; sync: Int32Array };
const me = Atomics.add(sync, 1, 1); // 0 or 1
for (let round = 1; round <= rounds; round++) {
  // The main thread sets sync[0] to the round once the stale lock is in place.
  while (Atomics.load(sync, 0) < round) Atomics.wait(sync, 0, round - 1, 100);
  let lock: ReturnType<typeof acquireLock> | undefined;
  try {
    lock = acquireLock(out, `racer-${me}`, null, 60);
  } catch {
    lock = undefined;
  }
  parentPort!.postMessage({ round, won: lock !== undefined });
  // Hold it until the main thread has the round's results, then let go.
  while (Atomics.load(sync, 2) < round) Atomics.wait(sync, 2, round - 1, 100);
  lock?.release();
  Atomics.add(sync, 3, 1);
  Atomics.notify(sync, 3);
}
