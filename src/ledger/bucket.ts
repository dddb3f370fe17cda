// Token bucket arithmetic, plus an in-process store of buckets for ledgers that do not share
// limits between servers (sqlite: one file, one host, usually one process).
import type { RateDecision } from "./types.ts";

export const UNLIMITED: RateDecision = { ok: true, retryAfterSeconds: 0, remaining: 0, limit: 0 };

/** The decision for a bucket that holds `tokens` after taking (or failing to take) one. */
export function decision(ok: boolean, tokens: number, rate: number, burst: number): RateDecision {
  // Next whole millisecond strictly after the refill instant: float rounding in the refill
  // arithmetic must not leave a client that waited exactly retryAfterSeconds a hair short.
  const retryAfterSeconds = ok ? 0 : (Math.floor(((1 - tokens) / rate) * 1000) + 1) / 1000;
  return { ok, retryAfterSeconds, remaining: Math.max(0, Math.floor(tokens)), limit: burst };
}

interface Bucket {
  tokens: number;
  at: number;
}

export class MemoryBuckets {
  #buckets = new Map<string, Bucket>();
  #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  take(keyId: string, rate: number, burst: number): RateDecision {
    if (rate <= 0) return UNLIMITED;
    const now = this.#now();
    const b = this.#buckets.get(keyId) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, b.tokens + (Math.max(0, now - b.at) / 1000) * rate);
    const ok = tokens >= 1;
    const left = ok ? tokens - 1 : tokens;
    this.#buckets.set(keyId, { tokens: left, at: now });
    return decision(ok, left, rate, burst);
  }
}
