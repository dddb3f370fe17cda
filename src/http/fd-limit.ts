// The process's limit on open file descriptors (the soft RLIMIT_NOFILE), which every socket and
// open file counts against. Read from /proc on Linux; undefined where it cannot be read.
import { readFileSync } from "node:fs";

export function openFileLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!m) return undefined;
    return m[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(m[1]);
  } catch {
    return undefined;
  }
}

/** The fd limit assumed where it cannot be read: Linux's usual default soft limit. */
export const ASSUMED_FD_LIMIT = 1024;

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
