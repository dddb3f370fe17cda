// The process's open-file limit and the connection cap sized from it. Every accepted socket is a
// file descriptor, and a response streaming a build file holds a second one (the file), so the
// cap is half of what is left after a reserve for everything else the process opens (store
// chunks being read, the ledger, archives, log files, Node's own). Past the limit accept() fails
// with EMFILE and the server stops answering anyone, health probes included. The limit read is
// the soft one, which Node itself raises to the hard one when it starts (test/http/fd-limit-shares
// checks it), so an administrator's hard limit is what counts.
import { readFileSync } from "node:fs";

/** Descriptors kept out of the connection budget for the store, the ledger and Node itself. */
export const FD_RESERVE = 256;
/** The automatic cap never goes below this, however low the limit. */
export const MIN_CONNECTIONS = 32;
/** Assumed when the limit cannot be read (no /proc): the usual soft default. */
export const ASSUMED_FD_LIMIT = 1024;

/** The soft RLIMIT_NOFILE of this process, from /proc/self/limits; undefined when it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!line) return undefined;
    return line[1] === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(line[1]);
  } catch {
    return undefined;
  }
}

/**
 * Connections the server keeps open at once: `configured` when set (> 0), else
 * max(MIN_CONNECTIONS, floor((limit − FD_RESERVE) / 2)) — 384 for the common limit of 1024.
 */
export function connectionCap(configured: number, limit = openFileLimit()): number {
  if (configured > 0) return Math.floor(configured);
  const fds = Math.min(limit ?? ASSUMED_FD_LIMIT, 1 << 24);
  return Math.max(MIN_CONNECTIONS, Math.floor((fds - FD_RESERVE) / 2));
}

/** Most /data requests that may wait for rate-limit tokens at once when the setting is 0 (auto). */
export const AUTO_DATA_WAITERS_CAP = 8192;

/**
 * The total cap on /data requests waiting for tokens: the setting when it is positive, otherwise a
 * quarter of the fd limit (each waiter holds one socket; the rest is left to files, the ledger and
 * every other client), at least 16 and at most AUTO_DATA_WAITERS_CAP.
 */
export function dataWaitersMax(setting: number, fdLimit = openFileLimit()): number {
  if (setting > 0) return Math.floor(setting);
  const limit = fdLimit ?? ASSUMED_FD_LIMIT;
  return Math.min(AUTO_DATA_WAITERS_CAP, Math.max(16, Math.floor(limit / 4)));
}

/** Client addresses that can each hold their whole per-address share of connections at once. */
export const MIN_CLIENTS_SERVED = 10;

/**
 * Connections one client address may hold: the setting when it is positive, else
 * ⌊max_connections / MIN_CLIENTS_SERVED⌋ (at least 1), so that ten addresses each at their cap
 * still fit under the total — 38 for the limit of 1024, where a fixed 128 let three addresses
 * take everything.
 */
export function perClientCap(setting: number, maxConnections: number): number {
  if (setting > 0) return Math.floor(setting);
  return Math.max(1, Math.floor(maxConnections / MIN_CLIENTS_SERVED));
}
