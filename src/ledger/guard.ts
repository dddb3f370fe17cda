// Database failures leave the ledger as one typed error: callers answer 503 and retry, and the
// driver's message (SQL, paths, hosts) stays in `cause` for the logs, never in the client's view.
import { GridcastError, LedgerUnavailableError } from "../errors.ts";

export function unavailable(cause: unknown): LedgerUnavailableError {
  return new LedgerUnavailableError("the key ledger is unavailable; retry later", {}, { cause });
}

export async function guard<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof GridcastError) throw e;
    throw unavailable(e);
  }
}

/** Largest balance kept exact by a JS number. */
export const MAX_CREDITS = Number.MAX_SAFE_INTEGER;

/** How many fresh ids createKey tries before giving up (48-bit ids: a clash is already rare). */
export const ID_ATTEMPTS = 5;

/**
 * Default bound on one ledger call (ms): a PostgreSQL statement, or a sqlite call waiting for a
 * write lock another process holds. Past it the call fails with LedgerUnavailableError (503).
 */
export const LEDGER_TIMEOUT_MS = 2000;
