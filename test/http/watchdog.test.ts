// The shared watchdog: one interval for every response in flight. A response past its deadline
// and one whose client takes less than the floor while bytes wait for it are both reported; a
// client taking bytes at or above the floor never is, however full its queue stays; a stopped
// watch never is, and nothing stays watched once every response has ended.
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { test } from "node:test";
import { Watchdog } from "../../src/http/watchdog.ts";
import { until } from "../helpers/harness.ts";

/** A response whose socket keeps `queued` bytes waiting and whose client has taken `taken()` bytes. */
const response = (queued: number, taken: () => number = () => 0) =>
  ({
    writableLength: 0,
    socket: {
      writableLength: queued,
      get _bytesDispatched() {
        return taken() + queued;
      },
      _handle: { writeQueueSize: queued },
    },
  }) as unknown as ServerResponse;

test("deadline and stall are reported per response; stopped watches never; nothing is left watched", async () => {
  const slow = new Watchdog({ deadlineMs: 100, stallMs: 200, floorBytesPerS: 1024 });
  const stuck = new Watchdog({ deadlineMs: 600_000, stallMs: 60, floorBytesPerS: 1024 });
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

test("a full queue whose client keeps taking bytes at the floor is no stall; below the floor is", async () => {
  const dog = new Watchdog({ deadlineMs: 600_000, stallMs: 200, floorBytesPerS: 10_000 });
  const t0 = Date.now();
  const seen: string[] = [];
  // Both keep 64 KiB queued all along, as a steady reader does; one takes 20 kB/s, one 2 kB/s.
  const steady = dog.watch(
    response(65_536, () => Math.floor((Date.now() - t0) * 20)),
    (why) => seen.push(`steady:${why}`),
  );
  const slow = dog.watch(
    response(65_536, () => Math.floor((Date.now() - t0) * 2)),
    (why) => seen.push(`slow:${why}`),
  );
  await until("the slow one reported", () => seen.includes("slow:stall"));
  await new Promise((r) => setTimeout(r, 600));
  steady.stop();
  slow.stop();
  assert.ok(!seen.includes("steady:stall"), seen.join(", "));
});
