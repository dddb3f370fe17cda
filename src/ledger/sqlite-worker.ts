// The sqlite ledger's own thread. node:sqlite blocks while it waits for a lock another process
// holds; here that wait stalls only this thread, never the server's event loop. Calls run one at
// a time in arrival order. Each carries a deadline: it may wait for a lock only until then (a
// call that starts late still runs, but cannot wait at all), so a lock held elsewhere turns the
// queue into fast refusals instead of a pile of waits. A call is refused unrun only when its
// caller is about to give up on it, so whatever the caller is told (done, refused, unavailable)
// is what happened in the file.
import { parentPort, workerData } from "node:worker_threads";
import { unavailable } from "./guard.ts";
import { SqliteLedger } from "./sqlite.ts";
import { toWire, type WireError } from "./wire.ts";

export const METHODS = [
  "createKey",
  "listKeys",
  "getKey",
  "revokeKey",
  "addCredits",
  "lookupKey",
  "charge",
  "settle",
  "balance",
  "usage",
  "ping",
] as const;
export type Method = (typeof METHODS)[number];

export interface Call {
  id: number;
  method: Method;
  args: unknown[];
  /** Date.now() until which the call may wait for a lock another connection holds. */
  deadline: number;
  /** Date.now() at which the caller stops waiting for the answer. */
  abandonAt: number;
}

// Time kept between starting a call and its caller giving up: a statement that cannot wait for
// a lock finishes far inside it.
export const ANSWER_MARGIN_MS = 1000;

export type Answer = { id: number; value: unknown } | { id: number; error: WireError };
export type Ready = { ready: true } | { ready: false; error: WireError };

if (parentPort) {
  const port = parentPort;
  const { file, timeoutMs } = workerData as { file: string; timeoutMs: number };
  let ledger: SqliteLedger | undefined;
  try {
    ledger = new SqliteLedger(file, { busyTimeoutMs: timeoutMs });
    port.postMessage({ ready: true } satisfies Ready);
  } catch (e) {
    port.postMessage({ ready: false, error: toWire(e) } satisfies Ready);
    port.close();
  }
  const allowed = new Set<string>(METHODS);
  port.on("message", async (msg: Call | "close") => {
    if (!ledger) return;
    if (msg === "close") {
      await ledger.close();
      port.close();
      return;
    }
    const { id, method, args, deadline, abandonAt } = msg;
    try {
      if (!allowed.has(method)) throw new Error(`no ledger method ${method}`);
      const now = Date.now();
      if (now >= abandonAt - ANSWER_MARGIN_MS) throw unavailable(new Error("the caller gave up while the call queued"));
      ledger.setBusyTimeout(Math.max(0, deadline - now));
      const fn = ledger[method] as (...a: unknown[]) => Promise<unknown>;
      port.postMessage({ id, value: await fn.apply(ledger, args) } satisfies Answer);
    } catch (e) {
      port.postMessage({ id, error: toWire(e) } satisfies Answer);
    }
  });
}
