// One sqlite connection on its own worker thread, called through messages with a deadline each.
import { Worker } from "node:worker_threads";
import { unavailable } from "./guard.ts";
import type { Answer, Call, Method, Ready } from "./sqlite-worker.ts";
import { fromWire } from "./wire.ts";

// How long past its lock deadline a call may still be answered. A busy machine can keep a call
// queued behind others for a while; the worker still runs it (without waiting for locks) and
// refuses it unrun only near this limit, so an answer never arrives after the caller gave up
// unless the thread is wedged (a stalled disk).
const WEDGED_GRACE_MS = 5000;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

export class LedgerThread {
  #worker: Worker;
  #timeoutMs: number;
  #pending = new Map<number, Pending>();
  #next = 0;
  #closed: Promise<void> | null = null;
  #dead = false;

  private constructor(worker: Worker, timeoutMs: number) {
    this.#worker = worker;
    this.#timeoutMs = timeoutMs;
    worker.on("message", (m: Answer) => {
      const p = this.#pending.get(m.id);
      if (!p) return; // its caller already gave up (wedged thread)
      this.#settle(m.id);
      if ("error" in m) p.reject(fromWire(m.error));
      else p.resolve(m.value);
    });
    const fail = (e: unknown) => {
      this.#dead = true;
      for (const id of [...this.#pending.keys()]) this.#pending.get(id)?.reject(unavailable(e));
      for (const id of [...this.#pending.keys()]) this.#settle(id);
    };
    worker.on("error", fail);
    worker.on("exit", () => fail(new Error("the ledger thread exited")));
    worker.unref();
  }

  /** True once the thread has exited or crashed: it will never answer again. */
  get dead(): boolean {
    return this.#dead;
  }

  /**
   * Starts the thread and opens the file there; throws LedgerUnavailableError. `onWorker` sees
   * the Worker (tests use it to kill the thread).
   */
  static async start(file: string, timeoutMs: number, onWorker?: (w: Worker) => void): Promise<LedgerThread> {
    const worker = new Worker(new URL("./sqlite-worker.ts", import.meta.url), { workerData: { file, timeoutMs } });
    onWorker?.(worker);
    let onMessage: (m: Ready) => void = () => {};
    let onError: (e: unknown) => void = () => {};
    let onExit: () => void = () => {};
    try {
      await new Promise<void>((ok, fail) => {
        onMessage = (m) => (m.ready ? ok() : fail(fromWire(m.error)));
        onError = (e) => fail(unavailable(e));
        onExit = () => fail(unavailable(new Error("the ledger thread exited while opening")));
        worker.once("message", onMessage).once("error", onError).once("exit", onExit);
      });
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      // Only these three: Worker keeps listeners of its own that must stay.
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
    }
    return new LedgerThread(worker, timeoutMs);
  }

  #settle(id: number): void {
    const p = this.#pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker.unref();
  }

  call<T>(method: Method, ...args: unknown[]): Promise<T> {
    if (this.#closed || this.#dead) return Promise.reject(unavailable(new Error("the ledger is closed")));
    const id = this.#next++;
    const now = Date.now();
    const wait = this.#timeoutMs + WEDGED_GRACE_MS;
    const call: Call = { id, method, args, deadline: now + this.#timeoutMs, abandonAt: now + wait };
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#settle(id);
        reject(unavailable(new Error("the ledger thread did not answer")));
      }, wait);
      timer.unref();
      // While a call is out, the thread keeps the process alive (a CLI awaiting its answer).
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#worker.postMessage(call);
    });
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.#dead) return;
      const exited = new Promise((ok) => this.#worker.once("exit", ok));
      this.#worker.ref();
      this.#worker.postMessage("close");
      await exited;
    })();
    return this.#closed;
  }
}
