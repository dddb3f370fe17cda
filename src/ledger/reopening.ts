// A ledger that may not be there yet. The server starts with it whether or not the database
// answers: public routes never need the ledger, keyed routes get LedgerUnavailableError (503)
// until an open succeeds. Opening is retried on demand, at most once per RETRY_MS, one attempt
// at a time, so an outage costs each keyed request a fast refusal, not a connection attempt.
// A ledger that breaks for good later (its sqlite thread crashed) is dropped and opened anew the
// same way; PostgreSQL pools reconnect by themselves and never report broken.
import { unavailable } from "./guard.ts";
import type { Ledger } from "./types.ts";

export const RETRY_MS = 1000;

export class ReopeningLedger implements Ledger {
  #open: () => Promise<Ledger>;
  #onOpen: (first: boolean) => void;
  #current: Ledger | null = null;
  #opening: Promise<Ledger> | null = null;
  #retryAt = 0;
  #lastError: unknown = null;
  #closed = false;

  constructor(open: () => Promise<Ledger>, onOpen: (first: boolean) => void = () => {}) {
    this.#open = open;
    this.#onOpen = onOpen;
  }

  /** Tries one open now; resolves either way (the error, if any, is returned for the log). */
  async start(): Promise<unknown> {
    try {
      await this.#get();
      return null;
    } catch {
      return this.#lastError;
    }
  }

  #get(): Promise<Ledger> {
    if (this.#current?.broken) {
      const dead = this.#current;
      this.#current = null;
      this.#lastError = new Error("the ledger's thread died");
      void dead.close().catch(() => {});
    }
    if (this.#current) return Promise.resolve(this.#current);
    if (this.#closed) return Promise.reject(unavailable(new Error("the ledger is closed")));
    if (this.#opening) return this.#opening;
    if (performance.now() < this.#retryAt) return Promise.reject(unavailable(this.#lastError));
    const first = this.#lastError === null;
    this.#opening = this.#open().then(
      (ledger) => {
        this.#opening = null;
        if (this.#closed) {
          void ledger.close();
          throw unavailable(new Error("the ledger is closed"));
        }
        this.#current = ledger;
        this.#onOpen(first);
        return ledger;
      },
      (e) => {
        this.#opening = null;
        this.#lastError = e;
        this.#retryAt = performance.now() + RETRY_MS;
        throw unavailable(e);
      },
    );
    return this.#opening;
  }

  createKey: Ledger["createKey"] = async (input) => (await this.#get()).createKey(input);
  listKeys: Ledger["listKeys"] = async () => (await this.#get()).listKeys();
  getKey: Ledger["getKey"] = async (id) => (await this.#get()).getKey(id);
  revokeKey: Ledger["revokeKey"] = async (id) => (await this.#get()).revokeKey(id);
  addCredits: Ledger["addCredits"] = async (id, n) => (await this.#get()).addCredits(id, n);
  lookupKey: Ledger["lookupKey"] = async (id) => (await this.#get()).lookupKey(id);
  authenticate: Ledger["authenticate"] = async (k, s) => (await this.#get()).authenticate(k, s);
  checkRate: Ledger["checkRate"] = async (id, r, b) => (await this.#get()).checkRate(id, r, b);
  charge: Ledger["charge"] = async (req) => (await this.#get()).charge(req);
  settle: Ledger["settle"] = async (keyId, requestId, cost, bytes) =>
    (await this.#get()).settle(keyId, requestId, cost, bytes);
  balance: Ledger["balance"] = async (id) => (await this.#get()).balance(id);
  usage: Ledger["usage"] = async (id) => (await this.#get()).usage(id);
  ping: Ledger["ping"] = async () => (await this.#get()).ping();

  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#opening;
    if (pending) await pending.catch(() => {});
    await this.#current?.close();
  }
}
