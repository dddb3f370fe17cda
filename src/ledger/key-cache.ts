// The keyed request path without a database round trip per request: key lookups (record and
// stored hash, or "no such id") are kept in process memory for KEY_CACHE_TTL_MS. Every request
// still hashes the presented key and compares it in constant time, and still checks revocation,
// expiry and scope against the cached record, so a cached entry can only be as stale as its age:
//  - a key revoked through this ledger object (this server) is dropped from the cache at once;
//  - a key revoked elsewhere (the CLI, another server) is refused within KEY_CACHE_TTL_MS.
// Credits never come from here: balance checks and charges always go to the ledger itself.
// Any call that finds the ledger unavailable empties the cache, so during an outage keyed routes
// answer 503 like the metered ones instead of running on for the rest of the TTL.
import { LedgerUnavailableError } from "../errors.ts";
import { admit, authenticateWith, parseKeyId } from "./keyformat.ts";
import type { KeyLookup, KeyRecord, Ledger, Scope } from "./types.ts";

export const KEY_CACHE_TTL_MS = 2000;
// Bounds memory against a flood of made-up ids; the oldest entries go first.
const MAX_ENTRIES = 10_000;

interface Entry {
  found: KeyLookup | null;
  at: number;
}

export class KeyCachingLedger implements Ledger {
  #inner: Ledger;
  #ttl: number;
  #entries = new Map<string, Entry>();
  // Concurrent first requests for one id share one lookup.
  #inFlight = new Map<string, Promise<KeyLookup | null>>();
  #lookups = 0;
  // Bumped by every invalidation: a lookup that started before one must not refill the cache
  // with what it read before the change.
  #generation = 0;

  constructor(inner: Ledger, ttlMs = KEY_CACHE_TTL_MS) {
    this.#inner = inner;
    this.#ttl = ttlMs;
  }

  /** Entry lifetime in ms. 0 sends every check to the ledger, one lookup per request: the bench's baseline. */
  set ttlMs(ms: number) {
    this.#ttl = ms;
    this.invalidate();
  }

  /** How many lookups reached the ledger behind the cache (for tests and metrics). */
  get lookups(): number {
    return this.#lookups;
  }

  lookupKey(id: string): Promise<KeyLookup | null> {
    if (this.#ttl <= 0) {
      this.#lookups++;
      return this.#pass(this.#inner.lookupKey(id));
    }
    const e = this.#entries.get(id);
    if (e && performance.now() - e.at < this.#ttl) return Promise.resolve(e.found);
    let p = this.#inFlight.get(id);
    if (!p) {
      this.#lookups++;
      const generation = this.#generation;
      p = this.#inner.lookupKey(id).then(
        (found) => {
          if (this.#inFlight.get(id) === p) this.#inFlight.delete(id);
          // Stored hashes arrive as plain Uint8Arrays (from a thread or a driver); as Buffers, like
          // the dummy an unknown id is compared with, both comparisons take the same path.
          const entry = found && { record: found.record, hash: Buffer.from(found.hash) };
          if (generation !== this.#generation) return entry;
          this.#entries.delete(id);
          if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
          this.#entries.set(id, { found: entry, at: performance.now() });
          return entry;
        },
        (err) => {
          // Failures are not cached: the next request asks the ledger again.
          if (this.#inFlight.get(id) === p) this.#inFlight.delete(id);
          this.#failed(err);
          throw err;
        },
      );
      this.#inFlight.set(id, p);
    }
    return p;
  }

  #failed(err: unknown): void {
    if (err instanceof LedgerUnavailableError) this.invalidate();
  }

  /** Runs a call on the ledger behind; an outage it reveals empties the cache. */
  async #pass<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (e) {
      this.#failed(e);
      throw e;
    }
  }

  /** Forget one key (after a change made through this object) or all. */
  invalidate(id?: string): void {
    this.#generation++;
    if (id !== undefined) this.#inFlight.delete(id);
    if (id === undefined) this.#entries.clear();
    else this.#entries.delete(id);
  }

  authenticate: Ledger["authenticate"] = (plaintext, scope) =>
    authenticateWith((id) => this.lookupKey(id), plaintext, scope);

  /**
   * The warm path of authenticate(): a key whose id has a fresh entry is admitted (or refused)
   * here and now, by the same hash, constant-time comparison and checks, without the promises a
   * lookup needs. Undefined for a malformed key or an id without a fresh entry (then await
   * authenticate(), which counts and makes the lookup). Known and unknown ids, both cached, take
   * the same path here as they do there.
   */
  authenticateCached(plaintext: string, scope: Scope): KeyRecord | undefined {
    if (this.#ttl <= 0) return undefined;
    const id = parseKeyId(plaintext);
    if (id === null) return undefined;
    const e = this.#entries.get(id);
    if (!e || performance.now() - e.at >= this.#ttl) return undefined;
    return admit(plaintext, e.found, scope);
  }

  createKey: Ledger["createKey"] = async (input) => {
    const created = await this.#pass(this.#inner.createKey(input));
    this.invalidate(created.record.id); // a probe may have cached the id as unknown
    return created;
  };

  revokeKey: Ledger["revokeKey"] = async (id) => {
    try {
      return await this.#pass(this.#inner.revokeKey(id));
    } finally {
      this.invalidate(id);
    }
  };

  listKeys: Ledger["listKeys"] = () => this.#pass(this.#inner.listKeys());
  getKey: Ledger["getKey"] = (id) => this.#pass(this.#inner.getKey(id));
  addCredits: Ledger["addCredits"] = (id, n) => this.#pass(this.#inner.addCredits(id, n));
  checkRate: Ledger["checkRate"] = (id, rate, burst) => this.#pass(this.#inner.checkRate(id, rate, burst));
  charge: Ledger["charge"] = (req) => this.#pass(this.#inner.charge(req));
  settle: Ledger["settle"] = (keyId, requestId, cost, bytes) =>
    this.#pass(this.#inner.settle(keyId, requestId, cost, bytes));
  balance: Ledger["balance"] = (id) => this.#pass(this.#inner.balance(id));
  usage: Ledger["usage"] = (id) => this.#pass(this.#inner.usage(id));
  ping: Ledger["ping"] = () => this.#pass(this.#inner.ping());
  close: Ledger["close"] = () => this.#inner.close();
}
