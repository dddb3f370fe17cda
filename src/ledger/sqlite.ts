// Ledger on one node:sqlite file: the default for a single server. WAL lets readers run beside the
// writer; BEGIN IMMEDIATE takes the write lock up front so concurrent connections queue on
// busy_timeout instead of failing mid-transaction. Rate buckets live in this process's memory.
// node:sqlite is synchronous, so a lock wait here blocks the calling thread: servers and the CLI
// reach this class through sqlite-thread.ts, which runs it on a worker thread.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { InsufficientCreditsError, InvalidParameterError, NotFoundError } from "../errors.ts";
import { MemoryBuckets } from "./bucket.ts";
import { guard, ID_ATTEMPTS, MAX_CREDITS, unavailable } from "./guard.ts";
import { chargeFields, checkRateArgs, keyFields, positiveInt, settleFields } from "./input.ts";
import { authenticateWith, hashKey, mintKey, newKeyId } from "./keyformat.ts";
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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS keys (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  key_hash BLOB NOT NULL,
  scopes TEXT NOT NULL,
  credits INTEGER NOT NULL CHECK (credits >= 0),
  rate REAL NOT NULL,
  burst INTEGER NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  created_at TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS usage (
  id INTEGER PRIMARY KEY,
  key_id TEXT NOT NULL REFERENCES keys (id),
  route TEXT NOT NULL,
  item TEXT,
  cost INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  at TEXT NOT NULL,
  request_id TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS usage_key ON usage (key_id, id);
`;

const KEY_COLUMNS = "id, name, scopes, credits, rate, burst, expires_at, revoked_at, created_at";

type Row = Record<string, unknown>;

function toRecord(r: Row): KeyRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    scopes: (r.scopes as string).split(",") as Scope[],
    credits: r.credits as number,
    rate: r.rate as number,
    burst: r.burst as number,
    expiresAt: (r.expires_at as string | null) ?? null,
    revokedAt: (r.revoked_at as string | null) ?? null,
    createdAt: r.created_at as string,
  };
}

function toUsage(r: Row): UsageRow {
  return {
    keyId: r.key_id as string,
    route: r.route as string,
    item: (r.item as string | null) ?? null,
    cost: r.cost as number,
    bytes: r.bytes as number,
    at: r.at as string,
    requestId: (r.request_id as string | null) ?? null,
  };
}

export class SqliteLedger implements Ledger {
  #db: DatabaseSync;
  #buckets = new MemoryBuckets();
  #q: Record<
    | "insert"
    | "list"
    | "get"
    | "getWithHash"
    | "revoke"
    | "credit"
    | "debit"
    | "balance"
    | "log"
    | "charged"
    | "unlog"
    | "lower"
    | "usageAll"
    | "usageKey",
    StatementSync
  >;

  /** Opens (creating when needed) the file at `path`; throws LedgerUnavailableError. */
  constructor(path: string, opts: { busyTimeoutMs?: number } = {}) {
    let db: DatabaseSync | undefined;
    try {
      this.#db = db = new DatabaseSync(path);
      // busy_timeout first: even switching to WAL needs a lock another connection may hold.
      this.#db.exec(`PRAGMA busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`);
      this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
      this.#db.exec(SCHEMA);
      const p = (sql: string) => this.#db.prepare(sql);
      this.#q = {
        insert: p(
          `INSERT INTO keys (id, name, key_hash, scopes, credits, rate, burst, expires_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING ${KEY_COLUMNS}`,
        ),
        list: p(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`),
        get: p(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`),
        getWithHash: p(`SELECT ${KEY_COLUMNS}, key_hash FROM keys WHERE id = ?`),
        revoke: p(`UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING ${KEY_COLUMNS}`),
        credit: p(`UPDATE keys SET credits = credits + ? WHERE id = ? AND credits <= ? RETURNING credits`),
        // The guarded debit: the balance test and the subtraction are one statement.
        debit: p("UPDATE keys SET credits = credits - ? WHERE id = ? AND credits >= ? RETURNING credits"),
        balance: p("SELECT credits FROM keys WHERE id = ?"),
        log: p("INSERT INTO usage (key_id, route, item, cost, bytes, at, request_id) VALUES (?, ?, ?, ?, ?, ?, ?)"),
        charged: p("SELECT id, cost FROM usage WHERE key_id = ? AND request_id = ?"),
        unlog: p("DELETE FROM usage WHERE id = ?"),
        lower: p("UPDATE usage SET cost = min(cost, ?), bytes = min(bytes, ?) WHERE id = ?"),
        usageAll: p("SELECT * FROM usage ORDER BY id"),
        usageKey: p("SELECT * FROM usage WHERE key_id = ? ORDER BY id"),
      };
    } catch (e) {
      if (db?.isOpen) db.close();
      throw unavailable(e);
    }
  }

  #tx<T>(fn: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const out = fn();
      this.#db.exec("COMMIT");
      return out;
    } catch (e) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw e;
    }
  }

  #missing(id: string): NotFoundError {
    return new NotFoundError(`no API key with id "${id}"`);
  }

  createKey(input: NewKey): Promise<CreatedKey> {
    return guard(() => {
      const f = keyFields(input);
      for (let i = 0; i < ID_ATTEMPTS; i++) {
        const id = newKeyId();
        const key = mintKey(id);
        const row = this.#q.insert.get(
          id,
          f.name,
          hashKey(key),
          f.scopes.join(","),
          f.credits,
          f.rate,
          f.burst,
          f.expiresAt,
          new Date().toISOString(),
        );
        if (row) return { key, record: toRecord(row) };
      }
      throw new Error("could not allocate a key id");
    });
  }

  listKeys(): Promise<KeyRecord[]> {
    return guard(() => this.#q.list.all().map(toRecord));
  }

  getKey(id: string): Promise<KeyRecord | null> {
    return guard(() => {
      const row = this.#q.get.get(id);
      return row ? toRecord(row) : null;
    });
  }

  revokeKey(id: string): Promise<KeyRecord> {
    return guard(() => {
      const row = this.#q.revoke.get(new Date().toISOString(), id);
      if (!row) throw this.#missing(id);
      return toRecord(row);
    });
  }

  addCredits(id: string, n: number): Promise<number> {
    return guard(() => {
      positiveInt("credits", n);
      const row = this.#q.credit.get(n, id, MAX_CREDITS - n);
      if (row) return row.credits as number;
      if (!this.#q.balance.get(id)) throw this.#missing(id);
      throw new InvalidParameterError("credits", "balance would exceed the largest exact credit count");
    });
  }

  lookupKey(id: string): Promise<KeyLookup | null> {
    return guard(() => {
      const row = this.#q.getWithHash.get(id);
      return row ? { record: toRecord(row), hash: row.key_hash as Uint8Array } : null;
    });
  }

  authenticate(plaintext: string | null | undefined, requiredScope: Scope): Promise<KeyRecord> {
    return authenticateWith((id) => this.lookupKey(id), plaintext, requiredScope);
  }

  /** How long the next statements may wait for a lock another connection holds. */
  setBusyTimeout(ms: number): void {
    this.#db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(ms))}`);
  }

  checkRate(keyId: string, rate: number, burst: number): Promise<RateDecision> {
    return guard(() => {
      checkRateArgs(rate, burst);
      return this.#buckets.take(keyId, rate, burst);
    });
  }

  charge(req: ChargeRequest): Promise<ChargeResult> {
    return guard(() => {
      const c = chargeFields(req);
      return this.#tx(() => {
        const row = this.#q.debit.get(c.cost, c.keyId, c.cost);
        if (!row) {
          const bal = this.#q.balance.get(c.keyId);
          if (!bal) throw this.#missing(c.keyId);
          throw new InsufficientCreditsError("not enough credits for this request", {
            balance: bal.credits as number,
            cost: c.cost,
          });
        }
        this.#q.log.run(c.keyId, c.route, c.item, c.cost, c.bytes, new Date().toISOString(), c.requestId);
        return { charged: c.cost, remaining: row.credits as number };
      });
    });
  }

  settle(keyId: string, requestId: string, cost: number, bytes: number): Promise<number> {
    return guard(() => {
      const c = settleFields(cost, bytes);
      return this.#tx(() => {
        let back = 0;
        for (const row of this.#q.charged.all(keyId, requestId)) {
          const was = row.cost as number;
          if (c.cost === 0) this.#q.unlog.run(row.id as number);
          else this.#q.lower.run(c.cost, c.bytes, row.id as number);
          back += Math.max(0, was - c.cost);
        }
        if (back > 0) this.#q.credit.run(back, keyId, MAX_CREDITS - back);
        return back;
      });
    });
  }

  balance(keyId: string): Promise<number> {
    return guard(() => {
      const row = this.#q.balance.get(keyId);
      if (!row) throw this.#missing(keyId);
      return row.credits as number;
    });
  }

  usage(keyId?: string): Promise<UsageRow[]> {
    return guard(() => (keyId === undefined ? this.#q.usageAll.all() : this.#q.usageKey.all(keyId)).map(toUsage));
  }

  ping(): Promise<void> {
    return guard(() => {
      this.#db.prepare("SELECT 1").get();
    });
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }
}
