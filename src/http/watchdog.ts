// Bounds on how long a response may hold server resources: a total deadline, and a stall limit
// for clients that stop reading.
//
// Progress is judged by the bytes the client took: what the process handed the kernel less what
// the kernel still holds unacknowledged (see bytesTaken), which grows only while the client
// reads. A response
// with bytes waiting to go out is cut when, over send_stall_ms, its client took fewer than
// send_floor_bytes_per_s × send_stall_ms / 1000 bytes; a reader at or above that floor rate is
// never cut, however long the body (the total deadline still applies). Waiting on the store is
// not a stall (nothing waits to go out then); store reads have their own timeout.
//
// The length of the socket's write queue is no measure of progress: a steady reader keeps it
// full (each write that completes is replaced by the next), so judging by its shrinking cut
// readers that were taking bytes all along.
//
// One interval per server looks at every response in flight, rather than a timer per request:
// a request costs a set insertion and a deletion, and each tick costs O(responses in flight).
// The interval runs only while something is watched.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { nativeAddon } from "../native.ts";

export interface Watch {
  stop(): void;
}

export interface Limits {
  deadlineMs: number;
  stallMs: number;
  /** Bytes per second a client must take while bytes wait for it; slower is a stall. */
  floorBytesPerS: number;
}

interface Watched {
  res: ServerResponse;
  started: number;
  /** When the current stall window began, and the bytes the client had taken by then. */
  since: number;
  takenAtSince: number;
  onExpire: (why: "deadline" | "stall") => void;
}

/** The internals of a net.Socket that tell how much of what was dispatched the kernel took. */
interface SocketInternals {
  _bytesDispatched?: unknown;
  _handle?: { writeQueueSize?: unknown; fd?: unknown } | null;
}

/**
 * Bytes of `socket` its client has taken so far. Node hands writes to libuv (`_bytesDispatched`),
 * which keeps what the kernel has not accepted yet in its write queue (`writeQueueSize`); the
 * kernel keeps what the client has not acknowledged in its send queue (the addon's sendQueue).
 * The kernel accepts from the process only in steps of up to half its send buffer (a writer is
 * woken once that much is free: a megabyte or two), so without the addon a client slower than
 * about a step per send_stall_ms can be cut while it reads. Without Node's internals, the public
 * counters give the bytes of completed writes: coarser still, never more than the client took.
 */
export function bytesTaken(socket: Socket): number {
  const s = socket as Socket & SocketInternals;
  const dispatched = s._bytesDispatched;
  const handle = s._handle;
  const queued = handle?.writeQueueSize;
  if (typeof dispatched !== "number" || typeof queued !== "number") {
    return (socket.bytesWritten ?? 0) - socket.writableLength;
  }
  const accepted = dispatched - queued;
  const fd = handle?.fd;
  const unacked = typeof fd === "number" && fd >= 0 ? (nativeAddon()?.sendQueue?.(fd) ?? -1) : -1;
  return unacked >= 0 ? accepted - unacked : accepted;
}

/** Bytes waiting to go out on `res`: in the response itself or in its socket's queues. */
export function waiting(res: ServerResponse): number {
  const socket = res.socket;
  if (!socket) return res.writableLength;
  const queued = (socket as Socket & SocketInternals)._handle?.writeQueueSize;
  return res.writableLength + socket.writableLength + (typeof queued === "number" ? queued : 0);
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

  /** Bytes a client must take within one send_stall_ms while bytes wait for it. */
  get windowBytes(): number {
    return Math.max(1, Math.ceil((this.limits.floorBytesPerS * this.limits.stallMs) / 1000));
  }

  watch(res: ServerResponse, onExpire: (why: "deadline" | "stall") => void): Watch {
    const now = Date.now();
    const w: Watched = { res, started: now, since: now, takenAtSince: -1, onExpire };
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
    const enough = this.windowBytes;
    for (const w of this.#watched) {
      if (now - w.started >= deadlineMs) {
        w.onExpire("deadline");
        continue;
      }
      const socket = w.res.socket;
      const taken = socket ? bytesTaken(socket) : 0;
      // The window starts when bytes are first seen waiting, not when the response began: time
      // before the first byte (auth, the store, a rate-limit wait) is not a stall. It starts
      // again whenever nothing waits, and whenever the client took a window's worth.
      if (!socket || waiting(w.res) === 0 || w.takenAtSince < 0 || taken - w.takenAtSince >= enough) {
        w.since = now;
        w.takenAtSince = taken;
        continue;
      }
      if (now - w.since >= stallMs) w.onExpire("stall");
    }
  }
}
