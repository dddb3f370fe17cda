// Rate limiting that paces instead of refusing, for /data. Zarr clients (zarr-python 2 through
// fsspec in particular) fetch a selection's chunks in one concurrent burst and turn any failed
// chunk, a 429 included, into fill values without a word: refusing a chunk request is a silent
// wrong answer. So a /data request that finds its key's bucket empty waits in a per-key FIFO
// queue for the next token, up to a bound, and is only refused (429) past it. One waiter per key
// asks the ledger at a time, so a burst of N requests costs about N ledger calls, not N².
//
// Every waiter holds a socket. Besides the per-key bound (maxQueue, refused 429 like the key's own
// limit) there is one across all keys (maxTotal, sized from the fd limit in fd-limit.ts), shared
// fairly (fair-share.ts) between keys and between client addresses: a key or address that already
// holds its share of the places, while fewer than a share are free, and anyone once every place is
// taken, is refused at once with BusyError (503 + Retry-After) naming the limit it hit. So one
// rate-limited key, from however many addresses, can never take the places another client needs.
import { BusyError } from "../errors.ts";
import type { Ledger, RateDecision } from "../ledger/types.ts";
import { FairShares, holdersOf, refusalDetail } from "./fair-share.ts";

/** Requests of one key that may wait for tokens at once; past it they are refused (429). */
export const WAITERS_PER_KEY = 1024;

interface Queue {
  tail: Promise<void>;
  waiting: number;
}

export class TokenWaiter {
  readonly #ledger: Pick<Ledger, "checkRate">;
  readonly maxWaitMs: number;
  readonly maxQueue: number;
  readonly maxTotal: number;
  readonly #queues = new Map<string, Queue>();
  readonly #places: FairShares;

  constructor(
    ledger: Pick<Ledger, "checkRate">,
    maxWaitMs: number,
    maxQueue = WAITERS_PER_KEY,
    maxTotal = Number.POSITIVE_INFINITY,
  ) {
    this.#ledger = ledger;
    this.maxWaitMs = maxWaitMs;
    this.maxQueue = maxQueue;
    this.maxTotal = maxTotal;
    this.#places = new FairShares(maxTotal);
  }

  /** Requests of a key waiting for a token right now (for tests and metrics). */
  waiting(keyId: string): number {
    return this.#queues.get(keyId)?.waiting ?? 0;
  }

  /** Requests of every key waiting for a token right now. */
  get total(): number {
    return this.#places.used;
  }

  /**
   * Take a token, waiting (FIFO per key) up to maxWaitMs for one. Resolves with the ledger's
   * decision: ok, or the refusal that stood when the wait bound, the queue bound or the client's
   * departure (signal) ended the wait. `client` is the request's client address (fair shares).
   */
  async take(
    keyId: string,
    rate: number,
    burst: number,
    signal?: AbortSignal,
    client = "",
    maxWaitMs = this.maxWaitMs,
  ): Promise<RateDecision> {
    const queued = this.#queues.get(keyId);
    // With others already waiting, a newcomer queues behind them instead of taking the token the
    // first of them is waiting for.
    const first = queued ? undefined : await this.#ledger.checkRate(keyId, rate, burst);
    if (first && (first.ok || maxWaitMs <= 0)) return first;
    const q = this.#queues.get(keyId) ?? { tail: Promise.resolve(), waiting: 0 };
    if (q.waiting >= this.maxQueue) return first ?? this.#ledger.checkRate(keyId, rate, burst);
    const place = this.#places.take(holdersOf(client, keyId));
    if (typeof place !== "function") {
      throw new BusyError(refusalDetail(place, "places for /data requests waiting for rate-limit tokens"));
    }
    this.#queues.set(keyId, q);
    q.waiting++;
    const deadline = performance.now() + maxWaitMs;
    const prev = q.tail;
    let release!: () => void;
    q.tail = new Promise<void>((r) => {
      release = r;
    });
    let turn = false;
    try {
      turn = await until(prev, deadline, signal);
      let last = first ?? (await this.#ledger.checkRate(keyId, rate, burst));
      if (last.ok) return last;
      while (turn) {
        last = await this.#ledger.checkRate(keyId, rate, burst);
        if (last.ok) return last;
        const waitMs = last.retryAfterSeconds * 1000;
        if (performance.now() + waitMs > deadline) return last;
        if (!(await sleep(waitMs, signal))) return last;
      }
      return last;
    } finally {
      q.waiting--;
      place();
      // Whoever queued behind us may go once our own turn has come and gone.
      if (turn) release();
      else prev.then(release);
      if (q.waiting === 0 && this.#queues.get(keyId) === q) this.#queues.delete(keyId);
    }
  }
}

/** Resolves true when `p` settles before the deadline and the signal, false otherwise. */
function until(p: Promise<void>, deadline: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((ok) => {
    if (signal?.aborted) return ok(false);
    const done = (v: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      ok(v);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), Math.max(0, deadline - performance.now()));
    signal?.addEventListener("abort", onAbort, { once: true });
    p.then(() => done(true));
  });
}

/** Resolves true after ms, or false at once when the signal aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return until(new Promise((r) => setTimeout(r, ms)), performance.now() + ms + 1000, signal);
}
