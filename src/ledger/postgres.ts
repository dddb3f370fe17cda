// Ledger on PostgreSQL: for several API servers sharing one set of keys, balances and rate limits.
// Every decision that must hold across servers (debit, token bucket) is one statement, so the
// row lock PostgreSQL takes for it is the only coordination needed.
import pg from "pg";
import { InsufficientCreditsError, InvalidParameterError, NotFoundError } from "../errors.ts";
import { decision, UNLIMITED } from "./bucket.ts";
import { guard, ID_ATTEMPTS, LEDGER_TIMEOUT_MS, MAX_CREDITS, unavailable } from "./guard.ts";
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
  id text PRIMARY KEY,
  name text NOT NULL,
  key_hash bytea NOT NULL,
  scopes text[] NOT NULL,
  credits bigint NOT NULL CHECK (credits >= 0),
  rate double precision NOT NULL,
  burst integer NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS usage (
  id bigserial PRIMARY KEY,
  key_id text NOT NULL REFERENCES keys (id),
  route text NOT NULL,
  item text,
  cost bigint NOT NULL,
  bytes bigint NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  request_id text
);
CREATE INDEX IF NOT EXISTS usage_key ON usage (key_id, id);
CREATE TABLE IF NOT EXISTS rate_buckets (
  key_id text PRIMARY KEY,
  tokens double precision NOT NULL,
  allowed boolean NOT NULL,
  updated_at timestamptz NOT NULL
);
`;

const KEY_COLUMNS = "id, name, scopes, credits, rate, burst, expires_at, revoked_at, created_at";

// One data-modifying statement is one transaction: the guarded debit and the usage row commit
// together or not at all, and the key row stays locked for a single round trip only. The
// usage insert selects from the debit, so it writes nothing when the balance was short.
const CHARGE = `
WITH debit AS (
  UPDATE keys SET credits = credits - $2 WHERE id = $1 AND credits >= $2 RETURNING credits
), logged AS (
  INSERT INTO usage (key_id, route, item, cost, bytes, request_id)
  SELECT $1, $3, $4, $2, $5::bigint, $6 FROM debit
)
SELECT credits FROM debit`;

// Lower one request's charge to $3 credits and at most $4 bytes (its usage row goes at 0) and
// return the difference, in one statement. The row lock taken by FOR UPDATE makes a concurrent
// settle of the same request wait and then see the lowered cost, so nothing returns twice.
const SETTLE = `
WITH old AS (
  SELECT id, cost FROM usage WHERE key_id = $1 AND request_id = $2 FOR UPDATE
), gone AS (
  DELETE FROM usage u USING old WHERE u.id = old.id AND $3::bigint = 0
  RETURNING old.cost AS back
), lowered AS (
  UPDATE usage u SET cost = least(old.cost, $3::bigint), bytes = least(u.bytes, $4::bigint)
  FROM old WHERE u.id = old.id AND $3::bigint > 0
  RETURNING greatest(0, old.cost - $3::bigint) AS back
), total AS (
  SELECT coalesce(sum(back), 0)::bigint AS n FROM (SELECT back FROM gone UNION ALL SELECT back FROM lowered) b
), credited AS (
  UPDATE keys SET credits = credits + total.n FROM total WHERE id = $1 AND total.n > 0 RETURNING credits
)
SELECT n AS returned, (SELECT count(*) FROM credited) AS updated FROM total`;

// Tokens available now: the stored count refilled at $2/s since the last call, capped at $3.
// The database clock is the one clock every server agrees on.
const AVAIL = `least($3::float8, b.tokens + $2::float8 *
  greatest(0, extract(epoch FROM statement_timestamp() - b.updated_at)::float8))`;

// Take a token if there is one. A single upsert, so concurrent servers serialise on the row;
// `allowed` records this call's verdict because RETURNING only sees the new row.
const TAKE = `
INSERT INTO rate_buckets AS b (key_id, tokens, allowed, updated_at)
VALUES ($1, $3::float8 - 1, true, statement_timestamp())
ON CONFLICT (key_id) DO UPDATE SET
  tokens = CASE WHEN ${AVAIL} >= 1 THEN ${AVAIL} - 1 ELSE ${AVAIL} END,
  allowed = ${AVAIL} >= 1,
  updated_at = greatest(b.updated_at, statement_timestamp())
RETURNING tokens, allowed`;

type Row = Record<string, unknown>;

const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);

function toRecord(r: Row): KeyRecord {
  return {
    id: r.id as string,
    name: r.name as string,
    scopes: r.scopes as Scope[],
    credits: Number(r.credits),
    rate: r.rate as number,
    burst: r.burst as number,
    expiresAt: iso(r.expires_at),
    revokedAt: iso(r.revoked_at),
    createdAt: iso(r.created_at) as string,
  };
}

function toUsage(r: Row): UsageRow {
  return {
    keyId: r.key_id as string,
    route: r.route as string,
    item: (r.item as string | null) ?? null,
    cost: Number(r.cost),
    bytes: Number(r.bytes),
    at: iso(r.at) as string,
    requestId: (r.request_id as string | null) ?? null,
  };
}

export class PostgresLedger implements Ledger {
  #pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Connects and creates the schema when missing; throws LedgerUnavailableError. `timeoutMs`
   * bounds every query: the server cancels a statement (and any lock wait) after it, the client
   * gives up on a connection that stops answering shortly after, and waiting for a pooled
   * connection is bounded by it too, so a call answers within about twice the timeout.
   */
  static async open(url: string, opts: { max?: number; timeoutMs?: number } = {}): Promise<PostgresLedger> {
    const timeout = Math.max(1, Math.trunc(opts.timeoutMs ?? LEDGER_TIMEOUT_MS));
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: timeout,
      statement_timeout: timeout,
      lock_timeout: timeout,
      idle_in_transaction_session_timeout: timeout * 2,
      // Client side: a server that stops answering altogether never sends the cancellation.
      // A timed-out connection is dropped from the pool, not reused.
      query_timeout: timeout + 500,
      keepAlive: true,
    });
    // An idle client losing its server emits here; without a listener that would kill the process.
    // The next query fails on its own and surfaces as LedgerUnavailableError.
    pool.on("error", () => {});
    try {
      const client = await pool.connect();
      try {
        // Servers starting together would otherwise race on CREATE TABLE IF NOT EXISTS.
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtext('gridcast.ledger.schema'))");
        await client.query(SCHEMA);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {});
        throw e;
      } finally {
        client.release();
      }
    } catch (e) {
      await pool.end().catch(() => {});
      throw unavailable(e);
    }
    return new PostgresLedger(pool);
  }

  async #rows(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.#pool.query(sql, params)).rows;
  }

  #missing(id: string): NotFoundError {
    return new NotFoundError(`no API key with id "${id}"`);
  }

  createKey(input: NewKey): Promise<CreatedKey> {
    return guard(async () => {
      const f = keyFields(input);
      for (let i = 0; i < ID_ATTEMPTS; i++) {
        const id = newKeyId();
        const key = mintKey(id);
        const [row] = await this.#rows(
          `INSERT INTO keys (id, name, key_hash, scopes, credits, rate, burst, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING RETURNING ${KEY_COLUMNS}`,
          [id, f.name, hashKey(key), f.scopes, f.credits, f.rate, f.burst, f.expiresAt],
        );
        if (row) return { key, record: toRecord(row) };
      }
      throw new Error("could not allocate a key id");
    });
  }

  listKeys(): Promise<KeyRecord[]> {
    return guard(async () =>
      (await this.#rows(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, id`)).map(toRecord),
    );
  }

  getKey(id: string): Promise<KeyRecord | null> {
    return guard(async () => {
      const [row] = await this.#rows(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1`, [id]);
      return row ? toRecord(row) : null;
    });
  }

  revokeKey(id: string): Promise<KeyRecord> {
    return guard(async () => {
      const [row] = await this.#rows(
        `UPDATE keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
        [id],
      );
      if (!row) throw this.#missing(id);
      return toRecord(row);
    });
  }

  addCredits(id: string, n: number): Promise<number> {
    return guard(async () => {
      positiveInt("credits", n);
      const [row] = await this.#rows(
        "UPDATE keys SET credits = credits + $2 WHERE id = $1 AND credits <= $3 RETURNING credits",
        [id, n, MAX_CREDITS - n],
      );
      if (row) return Number(row.credits);
      await this.balance(id);
      throw new InvalidParameterError("credits", "balance would exceed the largest exact credit count");
    });
  }

  lookupKey(id: string): Promise<KeyLookup | null> {
    return guard(async () => {
      const [row] = await this.#rows(`SELECT ${KEY_COLUMNS}, key_hash FROM keys WHERE id = $1`, [id]);
      return row ? { record: toRecord(row), hash: new Uint8Array(row.key_hash as Buffer) } : null;
    });
  }

  authenticate(plaintext: string | null | undefined, requiredScope: Scope): Promise<KeyRecord> {
    return authenticateWith((id) => this.lookupKey(id), plaintext, requiredScope);
  }

  checkRate(keyId: string, rate: number, burst: number): Promise<RateDecision> {
    return guard(async () => {
      checkRateArgs(rate, burst);
      if (rate <= 0) return UNLIMITED;
      const [row] = await this.#rows(TAKE, [keyId, rate, burst]);
      return decision(row.allowed as boolean, row.tokens as number, rate, burst);
    });
  }

  charge(req: ChargeRequest): Promise<ChargeResult> {
    return guard(async () => {
      const c = chargeFields(req);
      const [row] = await this.#rows(CHARGE, [c.keyId, c.cost, c.route, c.item, c.bytes, c.requestId]);
      if (row) return { charged: c.cost, remaining: Number(row.credits) };
      // Read after the failed debit: the balance reported is informative, the refusal was atomic.
      const balance = await this.balance(c.keyId);
      throw new InsufficientCreditsError("not enough credits for this request", { balance, cost: c.cost });
    });
  }

  settle(keyId: string, requestId: string, cost: number, bytes: number): Promise<number> {
    return guard(async () => {
      const c = settleFields(cost, bytes);
      const [row] = await this.#rows(SETTLE, [keyId, requestId, c.cost, c.bytes]);
      return Number(row.returned);
    });
  }

  balance(keyId: string): Promise<number> {
    return guard(async () => {
      const [row] = await this.#rows("SELECT credits FROM keys WHERE id = $1", [keyId]);
      if (!row) throw this.#missing(keyId);
      return Number(row.credits);
    });
  }

  usage(keyId?: string): Promise<UsageRow[]> {
    return guard(async () => {
      const rows =
        keyId === undefined
          ? await this.#rows("SELECT * FROM usage ORDER BY id")
          : await this.#rows("SELECT * FROM usage WHERE key_id = $1 ORDER BY id", [keyId]);
      return rows.map(toUsage);
    });
  }

  ping(): Promise<void> {
    return guard(async () => {
      await this.#pool.query("SELECT 1");
    });
  }

  async close(): Promise<void> {
    if (!this.#pool.ended) await this.#pool.end();
  }
}
