// The out-dir lock seen from another machine (batch tasks on shared storage): its holder keeps a
// heartbeat on the lock file; a lock whose heartbeat lapsed is taken over, a live one is not, and
// a retried shard waits for its own dead predecessor's lease instead of failing.
import assert from "node:assert/strict";
import { mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { acquireLock, acquireShardLock } from "../../src/pipeline/publish.ts";
import { cleanup, tempDir, until } from "../helpers/harness.ts";

const dirs: string[] = [];
after(() => cleanup(...dirs));

function out(): string {
  const d = tempDir();
  dirs.push(d);
  mkdirSync(join(d, ".locks"));
  return d;
}

/** A lock file as a task on another node writes it, last touched `ageS` seconds ago. */
function foreignLock(dir: string, name: string, shard: string | null, ageS: number): string {
  const path = join(dir, ".locks", name);
  const info = { pid: 1, host: "node-elsewhere", build_id: "b1", shard, started: "2026-11-25T00:00:00Z" };
  writeFileSync(path, JSON.stringify(info));
  const t = new Date(Date.now() - ageS * 1000);
  utimesSync(path, t, t);
  return path;
}

describe("locks across machines", () => {
  test("a live heartbeat from another machine is respected; a lapsed one is taken over", () => {
    const d = out();
    foreignLock(d, "build.lock", null, 5);
    assert.throws(() => acquireLock(d, "b2", null, 60), /build b1 \(pid 1 on node-elsewhere/);
    foreignLock(d, "build.lock", null, 120);
    const lock = acquireLock(d, "b2", null, 60);
    lock.release();
  });

  test("the holder touches its lock every quarter lease", async () => {
    const d = out();
    const lock = acquireLock(d, "b3", null, 4);
    const t = new Date(Date.now() - 60_000);
    utimesSync(lock.path, t, t);
    await until("heartbeat", () => Date.now() - statSync(lock.path).mtimeMs < 10_000, 10_000);
    lock.release();
  });

  test("a retried shard waits for its dead predecessor's lease, then takes the shard", async () => {
    const d = out();
    const lease = 3;
    foreignLock(d, "b1.shard-2-of-3.lock", "2/3", 0);
    const said: string[] = [];
    const started = Date.now();
    const lock = await acquireShardLock(d, "b1", "2/3", lease, (l) => said.push(l));
    assert.ok(Date.now() - started >= 1000, "it waited for the lease");
    assert.equal(said.length, 1);
    assert.match(said[0], /shard 2\/3 of build b1 is locked by node-elsewhere .* waiting up to 3 s/);
    lock.release();
    // Another shard's or another build's holder is not waited for: the shard locks coexist.
    foreignLock(d, "b1.shard-1-of-3.lock", "1/3", 0);
    const other = await acquireShardLock(d, "b1", "3/3", lease, (l) => said.push(l));
    other.release();
    assert.equal(said.length, 1);
  });
});
