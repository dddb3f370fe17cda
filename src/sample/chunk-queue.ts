// Main-thread side of the chunk pipeline: hands chunks to a worker thread (chunk-worker.ts) that
// compresses and writes them, keeping a bounded number in flight so the caller can compute the
// next chunks meanwhile. The first failure is kept and thrown from the next call.
import { Worker } from "node:worker_threads";
import type { ChunkDone, ChunkJob } from "./chunk-worker.ts";

export class ChunkQueue {
  readonly level: number;
  /** Chunks handed to the worker and not yet written; bounds the memory they hold. */
  readonly maxInFlight: number;
  files = 0;
  bytes = 0;
  #worker: Worker | undefined;
  #pending = new Set<number>();
  #nextId = 0;
  #waiters: (() => void)[] = [];
  #error: Error | undefined;

  constructor(level: number, maxInFlight = 16) {
    this.level = level;
    this.maxInFlight = maxInFlight;
  }

  #start(): Worker {
    // No inherited flags: they are the caller's (--input-type, test runner options), not the worker's.
    const w = new Worker(new URL("./chunk-worker.ts", import.meta.url), { execArgv: [] });
    w.on("message", (m: ChunkDone) => {
      if ("error" in m) this.#error ??= new Error(`writing a chunk failed: ${m.error}`);
      else {
        this.files++;
        this.bytes += m.bytes;
      }
      this.#pending.delete(m.id);
      // An idle worker must not keep the process alive (a writer that is never closed).
      if (this.#pending.size === 0) w.unref();
      this.#wake();
    });
    w.on("error", (e) => {
      this.#error ??= e;
      this.#pending.clear();
      this.#wake();
    });
    return w;
  }

  #wake(): void {
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w();
  }

  /** Resolves when the worker reports progress (or fails). */
  #progress(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #throwIfFailed(): void {
    if (this.#error) throw this.#error;
  }

  /** Queue one chunk for `file`; resolves once there is room for another. Takes over `data`'s memory. */
  async write(file: string, data: ArrayBufferView): Promise<void> {
    this.#throwIfFailed();
    this.#worker ??= this.#start();
    // The bytes move to the worker; a view into a larger buffer is copied first.
    const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
    const bytes = whole
      ? new Uint8Array(data.buffer)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
    const id = this.#nextId++;
    this.#pending.add(id);
    this.#worker.ref();
    const job: ChunkJob = { id, file, data: bytes, level: this.level };
    this.#worker.postMessage(job, [bytes.buffer as ArrayBuffer]);
    while (this.#pending.size >= this.maxInFlight && !this.#error) await this.#progress();
    this.#throwIfFailed();
  }

  /** Wait for every queued chunk; throws the first write error. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0 && !this.#error) await this.#progress();
    this.#throwIfFailed();
  }

  /** Wait for queued chunks (ignoring errors) and stop the worker. */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    await this.#worker?.terminate();
    this.#worker = undefined;
  }
}
