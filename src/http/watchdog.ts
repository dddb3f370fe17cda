// Bounds on how long a response may hold server resources: a total deadline, and a stall limit
// for clients that stop reading. A stall is bytes queued for the socket whose queue has not
// shrunk for stallMs: the kernel buffers are full and the client is not taking more. Waiting on
// the store is not a stall (nothing is queued then); store reads have their own timeout.
//
// One interval per server looks at every response in flight, rather than a timer per request:
// a request costs a set insertion and a deletion, and each tick costs O(responses in flight).
// The interval runs only while something is watched.
import type { ServerResponse } from "node:http";

export interface Watch {
  stop(): void;
}

export interface Limits {
  deadlineMs: number;
  stallMs: number;
}

interface Watched {
  res: ServerResponse;
  started: number;
  since: number;
  lastQueued: number;
  onExpire: (why: "deadline" | "stall") => void;
}

export class Watchdog {
  readonly limits: Limits;
  /** Milliseconds between looks: a deadline or stall is noticed at most this late. */
  readonly tickMs: number;
  readonly #watched = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;

  constructor(limits: Limits) {
    this.limits = limits;
    this.tickMs = Math.min(5000, Math.max(50, Math.floor(limits.stallMs / 4)));
  }

  /** Responses being watched now. */
  get size(): number {
    return this.#watched.size;
  }

  watch(res: ServerResponse, onExpire: (why: "deadline" | "stall") => void): Watch {
    const now = Date.now();
    const w: Watched = { res, started: now, since: now, lastQueued: 0, onExpire };
    this.#watched.add(w);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), this.tickMs);
      this.#timer.unref();
    }
    return { stop: () => this.#watched.delete(w) };
  }

  #tick(): void {
    if (this.#watched.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    const { deadlineMs, stallMs } = this.limits;
    for (const w of this.#watched) {
      if (now - w.started >= deadlineMs) {
        w.onExpire("deadline");
        continue;
      }
      const queued = w.res.socket?.writableLength ?? 0;
      // The clock starts when bytes are first seen queued, not when the response began: time
      // spent before the first byte (auth, the store, a rate-limit wait) is not a stall.
      if (queued === 0 || queued < w.lastQueued || w.lastQueued === 0) w.since = now;
      w.lastQueued = queued;
      if (now - w.since >= stallMs) w.onExpire("stall");
    }
  }
}
