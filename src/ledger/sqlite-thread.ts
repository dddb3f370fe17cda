// The sqlite ledger as servers and the CLI use it: SqliteLedger connections on worker threads
// behind an async message interface, so a write lock held by another process (a CLI run, a
// backup, a second server) never freezes the event loop. Two threads: writes (charges, credits,
// keys) queue on one and wait for the lock there, bounded by their deadline; reads (key lookups,
// balances, usage) run on the other beside the writer, as WAL allows, so key checks and balance
// checks keep answering while a write waits. Each read sees every write committed before it.
// Rate buckets stay on this side: they are memory only and are asked on every keyed request.

import type { Worker } from "node:worker_threads";
import { MemoryBuckets } from "./bucket.ts";
import { guard, LEDGER_TIMEOUT_MS } from "./guard.ts";
import { checkRateArgs } from "./input.ts";
import { authenticateWith } from "./keyformat.ts";
import { LedgerThread } from "./ledger-thread.ts";
import type {
  ChargeRequest,
  ChargeResult,
  CreatedKey,
  KeyLookup,
  KeyRecord,
  Ledger,
  NewKey,
  RateDecision,
  Scope,
  UsageRow,
} from "./types.ts";

export class ThreadedSqliteLedger implements Ledger {
  #writer: LedgerThread;
  #reader: LedgerThread;
  #buckets = new MemoryBuckets();

  private constructor(writer: LedgerThread, reader: LedgerThread) {
    this.#writer = writer;
    this.#reader = reader;
  }

  /** Starts both threads; the writer first, as it creates the schema. Throws LedgerUnavailableError. */
  static async open(
    file: string,
    opts: { timeoutMs?: number; onWorker?: (w: Worker) => void } = {},
  ): Promise<ThreadedSqliteLedger> {
    const timeoutMs = Math.max(1, Math.trunc(opts.timeoutMs ?? LEDGER_TIMEOUT_MS));
    const writer = await LedgerThread.start(file, timeoutMs, opts.onWorker);
    try {
      return new ThreadedSqliteLedger(writer, await LedgerThread.start(file, timeoutMs, opts.onWorker));
    } catch (e) {
      await writer.close();
      throw e;
    }
  }

  /** A thread died (a crash): this object can never answer again; open a new one. */
  get broken(): boolean {
    return this.#writer.dead || this.#reader.dead;
  }

  createKey(input: NewKey): Promise<CreatedKey> {
    return this.#writer.call("createKey", input);
  }
  revokeKey(id: string): Promise<KeyRecord> {
    return this.#writer.call("revokeKey", id);
  }
  addCredits(id: string, n: number): Promise<number> {
    return this.#writer.call("addCredits", id, n);
  }
  charge(req: ChargeRequest): Promise<ChargeResult> {
    return this.#writer.call("charge", req);
  }
  settle(keyId: string, requestId: string, cost: number, bytes: number): Promise<number> {
    return this.#writer.call("settle", keyId, requestId, cost, bytes);
  }
  listKeys(): Promise<KeyRecord[]> {
    return this.#reader.call("listKeys");
  }
  getKey(id: string): Promise<KeyRecord | null> {
    return this.#reader.call("getKey", id);
  }
  lookupKey(id: string): Promise<KeyLookup | null> {
    return this.#reader.call("lookupKey", id);
  }
  balance(keyId: string): Promise<number> {
    return this.#reader.call("balance", keyId);
  }
  usage(keyId?: string): Promise<UsageRow[]> {
    return this.#reader.call("usage", keyId);
  }
  authenticate(plaintext: string | null | undefined, requiredScope: Scope): Promise<KeyRecord> {
    return authenticateWith((id) => this.lookupKey(id), plaintext, requiredScope);
  }
  checkRate(keyId: string, rate: number, burst: number): Promise<RateDecision> {
    return guard(() => {
      checkRateArgs(rate, burst);
      return this.#buckets.take(keyId, rate, burst);
    });
  }
  /** Both threads answer (the writer's answer also means no write is stuck past its deadline). */
  async ping(): Promise<void> {
    await Promise.all([this.#reader.call("ping"), this.#writer.call("ping")]);
  }
  async close(): Promise<void> {
    await Promise.all([this.#reader.close(), this.#writer.close()]);
  }
}
