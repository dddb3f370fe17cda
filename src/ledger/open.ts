// Picks the ledger implementation from the `db` setting: a PostgreSQL URL or a sqlite file path.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { unavailable } from "./guard.ts";
import { PostgresLedger } from "./postgres.ts";
import { ThreadedSqliteLedger } from "./sqlite-thread.ts";
import type { Ledger } from "./types.ts";

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

export interface LedgerOptions {
  /** Bound on one ledger call in ms (default LEDGER_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Opens the ledger, creating its schema (and a sqlite file's directory) when missing. */
export async function openLedger(db: string, opts: LedgerOptions = {}): Promise<Ledger> {
  if (isPostgresUrl(db)) return PostgresLedger.open(db, opts);
  const file = resolve(db);
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (e) {
    throw unavailable(e);
  }
  return ThreadedSqliteLedger.open(file, opts);
}
