// The ledger contract: keys, scopes, credits, usage and rate limits. sqlite.ts and postgres.ts
// implement it with the same behaviour and are exercised by one shared test suite.

export const SCOPES = ["weather", "embeddings"] as const;
export type Scope = (typeof SCOPES)[number];

/** A key as stored, minus its hash. Timestamps are ISO 8601 strings (UTC). */
export interface KeyRecord {
  /** Short public id; also the middle part of the plaintext key. */
  id: string;
  name: string;
  scopes: Scope[];
  /** Credit balance; never negative. */
  credits: number;
  /** Requests per second allowed by the token bucket; 0 means unlimited. */
  rate: number;
  /** Bucket size: requests that may arrive at once after an idle spell. */
  burst: number;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

export interface NewKey {
  name: string;
  scopes: Scope[];
  credits: number;
  rate: number;
  /** Defaults to max(1, ceil(rate)); ignored when rate is 0. */
  burst?: number;
  expiresAt?: Date | string | null;
}

export interface CreatedKey {
  /** The plaintext key. Only its hash is stored, so this is the one chance to show it. */
  key: string;
  record: KeyRecord;
}

export interface RateDecision {
  ok: boolean;
  /** Seconds until the next request would be admitted (fractional; 0 when ok). */
  retryAfterSeconds: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** The burst size; 0 when the rate is unlimited. */
  limit: number;
}

export interface ChargeRequest {
  keyId: string;
  cost: number;
  route: string;
  item?: string | null;
  bytes?: number;
  requestId?: string | null;
}

export interface ChargeResult {
  charged: number;
  /** Balance after the debit. */
  remaining: number;
}

export interface UsageRow {
  keyId: string;
  route: string;
  item: string | null;
  cost: number;
  bytes: number;
  at: string;
  requestId: string | null;
}

/** A stored key with its hash, as authentication needs it. */
export interface KeyLookup {
  record: KeyRecord;
  hash: Uint8Array;
}

export interface Ledger {
  createKey(input: NewKey): Promise<CreatedKey>;
  listKeys(): Promise<KeyRecord[]>;
  /** null when there is no such key. */
  getKey(id: string): Promise<KeyRecord | null>;
  /** Idempotent: a revoked key keeps its first revocation time. Throws NotFoundError. */
  revokeKey(id: string): Promise<KeyRecord>;
  /** Adds n (a positive integer) and returns the new balance. Throws NotFoundError. */
  addCredits(id: string, n: number): Promise<number>;
  /** The key and its stored hash by id; null when there is no such key. */
  lookupKey(id: string): Promise<KeyLookup | null>;
  /** Throws UnauthorizedError (missing, malformed, unknown, revoked, expired) or ForbiddenError (scope). */
  authenticate(plaintext: string | null | undefined, requiredScope: Scope): Promise<KeyRecord>;
  /**
   * authenticate() without waiting, for a ledger that can answer from memory: the record (or
   * the refusal, thrown) after the same checks, or undefined when it has to look the key up.
   */
  authenticateCached?(plaintext: string, requiredScope: Scope): KeyRecord | undefined;
  /** Takes one token from the key's bucket when there is one. */
  checkRate(keyId: string, rate: number, burst: number): Promise<RateDecision>;
  /** Debits cost and logs usage atomically; throws InsufficientCreditsError {balance, cost}. */
  charge(req: ChargeRequest): Promise<ChargeResult>;
  /**
   * Lowers the charge of one request to what was delivered: its usage row keeps `cost` credits
   * and at most `bytes` bytes, or goes when `cost` is 0, and the difference returns to the
   * balance, in one transaction. Never raises a charge, so it is idempotent and safe to repeat;
   * returns the credits given back (0 when nothing matched or nothing was lower).
   */
  settle(keyId: string, requestId: string, cost: number, bytes: number): Promise<number>;
  /** Throws NotFoundError. */
  balance(keyId: string): Promise<number>;
  /** Usage rows, oldest first; all keys when keyId is omitted. */
  usage(keyId?: string): Promise<UsageRow[]>;
  /** True once this object can never answer again (its sqlite thread died); absent: never. */
  readonly broken?: boolean;
  /** Resolves when the ledger answers a trivial query; throws LedgerUnavailableError otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
