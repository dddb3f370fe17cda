// Bounds on how long a response may hold server resources: a total deadline, and a stall limit
// for clients that stop reading. A stall is bytes queued for the socket whose queue has not
// shrunk for stallMs: the kernel buffers are full and the client is not taking more. Waiting on
// the store is not a stall (nothing is queued then); store reads have their own timeout.
import type { ServerResponse } from "node:http";

export interface Watch {
  stop(): void;
}

export function watchResponse(
  res: ServerResponse,
  limits: { deadlineMs: number; stallMs: number },
  onExpire: (why: "deadline" | "stall") => void,
): Watch {
  const started = Date.now();
  let since = started;
  let lastQueued = 0;
  const tick = Math.min(5000, Math.max(50, Math.floor(limits.stallMs / 4)));
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - started >= limits.deadlineMs) {
      onExpire("deadline");
      return;
    }
    const queued = res.socket?.writableLength ?? 0;
    if (queued === 0 || queued < lastQueued) since = now;
    lastQueued = queued;
    if (now - since >= limits.stallMs) onExpire("stall");
  }, tick);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
