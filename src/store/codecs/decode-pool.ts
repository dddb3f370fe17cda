// Blosc chunks decode on a small pool of worker threads, so a read spanning many chunks decodes
// them in parallel while the main thread keeps serving. The pool has a fixed number of threads
// (the server sets it to at most its heavy-request cap); further chunks wait in a queue whose
// length is bounded by the requests allowed at once, each within its size cap. With 0 threads
// chunks decode on the calling thread.
import { availableParallelism } from "node:os";
import { isMainThread, Worker } from "node:worker_threads";
import { decodeBlosc, UNSUPPORTED } from "./blosc-decode.ts";
import { CodecInputError } from "./bound.ts";
import type { DecodeDone, DecodeJob } from "./decode-worker.ts";

type Pending = { resolve: (v: Uint8Array | typeof UNSUPPORTED) => void; reject: (e: Error) => void };

// Inside a worker (a build's render threads) chunks decode inline: its siblings are the parallelism.
let threads = isMainThread ? Math.min(availableParallelism(), 4) : 0;
const idle: Worker[] = [];
const all = new Set<Worker>();
const queue: { job: DecodeJob; pending: Pending }[] = [];
const waiting = new Map<number, Pending>();
let nextId = 0;

/** Number of decode threads (0: decode on the calling thread). Applies to threads started later. */
export function setDecodeThreads(n: number): void {
  threads = Math.max(0, Math.floor(n));
}

export function decodeThreads(): number {
  return threads;
}

function spawn(): Worker {
  // No inherited flags: they belong to the caller (test runner options), not to the worker.
  const w = new Worker(new URL("./decode-worker.ts", import.meta.url), { execArgv: [] });
  w.on("message", (m: DecodeDone) => {
    const p = waiting.get(m.id);
    waiting.delete(m.id);
    if (p) {
      if ("out" in m) p.resolve(m.out);
      else if ("unsupported" in m) p.resolve(UNSUPPORTED);
      else p.reject(new CodecInputError(m.error));
    }
    next(w);
  });
  let failure: Error | undefined;
  w.on("error", (e) => {
    failure = e;
  });
  w.on("exit", () => {
    // A worker that died fails only the job it held; a fresh one takes over the queue.
    all.delete(w);
    const at = idle.indexOf(w);
    if (at >= 0) idle.splice(at, 1);
    const id = (w as Worker & { job?: number }).job;
    const p = id === undefined ? undefined : waiting.get(id);
    if (id !== undefined && p) {
      waiting.delete(id);
      p.reject(new CodecInputError(`blosc: the decoding thread stopped (${failure?.message ?? "exit"})`));
    }
    if (queue.length > 0 && all.size < threads) next(spawn());
  });
  all.add(w);
  return w;
}

function next(w: Worker): void {
  (w as Worker & { job?: number }).job = undefined;
  const item = queue.shift();
  if (!item) {
    idle.push(w);
    w.unref(); // an idle pool must not keep the process alive
    return;
  }
  run(w, item.job, item.pending);
}

function run(w: Worker, job: DecodeJob, pending: Pending): void {
  w.ref();
  (w as Worker & { job?: number }).job = job.id;
  waiting.set(job.id, pending);
  w.postMessage(job);
}

/** Decode a Blosc chunk of at most `bound` bytes, on the pool when it has threads. */
export function decodeBloscPooled(bytes: Uint8Array, bound: number): Promise<Uint8Array | typeof UNSUPPORTED> {
  if (threads === 0) {
    try {
      return Promise.resolve(decodeBlosc(bytes, bound));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  return new Promise((resolve, reject) => {
    // The bytes are copied into the message; the caller's buffer (maybe a cached slice) stays intact.
    // A view into a larger buffer (a shard, a pooled read) would carry all of it: copy the view.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    const job: DecodeJob = { id: nextId++, bytes: own, bound };
    const pending = { resolve, reject };
    const w = idle.pop() ?? (all.size < threads ? spawn() : undefined);
    if (w) run(w, job, pending);
    else queue.push({ job, pending });
  });
}
