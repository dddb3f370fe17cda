// The sqlite ledger's own thread. node:sqlite blocks while it waits for a lock another process
// holds; here that wait stalls only this thread, never the server's event loop. Calls run one at
// a time in arrival order, each bounded by the deadline its caller set: a call whose deadline has
// passed before it starts is refused unrun, and a running one waits for a lock only until then.
// So whatever the caller is told (done, refused, unavailable) is what happened in the file.
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
  "refund",
  "balance",
  "usage",
  "ping",
] as const;
export type Method = (typeof METHODS)[number];

export interface Call {
  id: number;
  method: Method;
  args: unknown[];
  /** Date.now() after which the call must not start or keep waiting for a lock. */
  deadline: number;
}

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
    const { id, method, args, deadline } = msg;
    try {
      if (!allowed.has(method)) throw new Error(`no ledger method ${method}`);
      const left = deadline - Date.now();
      if (left <= 0) throw unavailable(new Error("the call's deadline passed while it waited its turn"));
      ledger.setBusyTimeout(left);
      const fn = ledger[method] as (...a: unknown[]) => Promise<unknown>;
      port.postMessage({ id, value: await fn.apply(ledger, args) } satisfies Answer);
    } catch (e) {
      port.postMessage({ id, error: toWire(e) } satisfies Answer);
    }
  });
}
