// Picks the ledger implementation from the `db` setting: a PostgreSQL URL or a sqlite file path.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { unavailable } from "./guard.ts";
import { PostgresLedger } from "./postgres.ts";
import { SqliteLedger } from "./sqlite.ts";
import type { Ledger } from "./types.ts";

export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db);
}

/** Opens the ledger, creating its schema (and a sqlite file's directory) when missing. */
export async function openLedger(db: string): Promise<Ledger> {
  if (isPostgresUrl(db)) return PostgresLedger.open(db);
  const file = resolve(db);
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (e) {
    throw unavailable(e);
  }
  return new SqliteLedger(file);
}
