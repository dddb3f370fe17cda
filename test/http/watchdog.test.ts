// The shared watchdog: one interval for every response in flight. A response past its deadline
// and one whose queued bytes stop shrinking are both reported; a stopped watch never is, and
// nothing stays watched once every response has ended.
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { Watchdog } from "../../src/http/watchdog.ts";
import { until } from "../helpers/harness.ts";

/** A response whose socket holds `queued` bytes the client has not taken. */
const response = (queued: number) => ({ socket: { writableLength: queued } }) as unknown as ServerResponse;

test("deadline and stall are reported per response; stopped watches never; nothing is left watched", async () => {
  const slow = new Watchdog({ deadlineMs: 100, stallMs: 200 });
  const stuck = new Watchdog({ deadlineMs: 600_000, stallMs: 60 });
  const seen: string[] = [];
  const a = slow.watch(response(0), (why) => seen.push(`a:${why}`));
  const b = stuck.watch(response(4096), (why) => seen.push(`b:${why}`));
  // Reading along (nothing queued) is never a stall.
  const c = stuck.watch(response(0), (why) => seen.push(`c:${why}`));
  const d = slow.watch(response(4096), (why) => seen.push(`d:${why}`));
  d.stop();
  assert.equal(slow.size, 1);
  await until("both reported", () => seen.includes("a:deadline") && seen.includes("b:stall"));
  a.stop();
  b.stop();
  c.stop();
  assert.equal(slow.size, 0);
  assert.equal(stuck.size, 0);
  assert.ok(!seen.some((s) => s.startsWith("c:") || s.startsWith("d:")), seen.join(", "));
  assert.ok(!seen.includes("a:stall") && !seen.includes("b:deadline"), seen.join(", "));
});
