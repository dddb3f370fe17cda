// Two builds taking over the same stale out-dir lock at once: exactly one wins, in every one of
// 3,000 rounds (before the takeover went through a guard, both won now and then: 26 of 3,000).
// Two worker threads race on the real file system, released together by a barrier each round.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { Worker } from "node:worker_threads";
import { cleanup, tempDir } from "../helpers/harness.ts";

const ROUNDS = 3000;
const out = tempDir();
after(() => cleanup(out));

test(`a stale lock taken over by two builds at once has one winner, ${ROUNDS} rounds`, async () => {
  // A pid that was and is no more: the lock's holder is dead.
  const dead = Number(execFileSync("sh", ["-c", "echo $$"]).toString());
  const stale = JSON.stringify({ pid: dead, host: hostname(), build_id: "gone", shard: null, started: "then" });
  const lockFile = join(out, ".locks", "build.lock");
  execFileSync("mkdir", ["-p", join(out, ".locks")]);
  // [round released, racers started, round counted, releases done]
  const sync = new Int32Array(new SharedArrayBuffer(16));
  const wins = new Array<number>(ROUNDS + 1).fill(0);
  const reports = new Array<number>(ROUNDS + 1).fill(0);
  let waiting: (() => void) | undefined;
  const racers = [0, 1].map(() => {
    const w = new Worker(new URL("./lock-racer.ts", import.meta.url), { workerData: { out, rounds: ROUNDS, sync } });
    w.on("message", (m: { round: number; won: boolean }) => {
      reports[m.round]++;
      if (m.won) wins[m.round]++;
      if (reports[m.round] === 2) waiting?.();
    });
    return w;
  });
  const exited = racers.map((w) => new Promise((ok) => w.once("exit", ok)));
  for (let round = 1; round <= ROUNDS; round++) {
    writeFileSync(lockFile, stale);
    const both = new Promise<void>((ok) => (waiting = ok));
    Atomics.store(sync, 0, round);
    Atomics.notify(sync, 0);
    await both;
    Atomics.store(sync, 2, round);
    Atomics.notify(sync, 2);
    while (Atomics.load(sync, 3) < 2 * round) await new Promise((r) => setImmediate(r));
  }
  await Promise.all(exited);
  const bad = wins.slice(1).filter((n) => n !== 1).length;
  assert.equal(bad, 0, `rounds without exactly one winner: ${bad} of ${ROUNDS}`);
});
