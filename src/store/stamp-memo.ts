// Object versions ("stamps") remembered for a short interval. Asking the store for a version on
// every cached chunk read costs a stat (or a HEAD) per read; hot chunks are read by many requests
// at once, so one answer is shared for `ttlMs`. Past that, the version in hand is still answered
// while a fresh one is asked for in the background: a cached read never waits for I/O (which
// would also hold its slot under the heavy-request cap), and a rewrite is seen within about
// ttlMs plus one stat. Only the first read of a key waits. The map is bounded: past `max`
// entries it starts over.

interface Entry {
  at: number;
  /** The answer in hand (undefined: absent object); `known` says whether there is one. */
  value: string | undefined;
  known: boolean;
  pending: Promise<string | undefined> | undefined;
}

/** What peek() answers when no version is in hand yet (the caller must wait on get()). */
export const NOT_YET: unique symbol = Symbol("no version in hand yet");

export class StampMemo {
  readonly ttlMs: number;
  readonly max: number;
  readonly #entries = new Map<string, Entry>();

  constructor(ttlMs: number, max = 100_000) {
    this.ttlMs = ttlMs;
    this.max = max;
  }

  get(key: string, ask: () => Promise<string | undefined>): Promise<string | undefined> {
    let e = this.#entries.get(key);
    if (!e) {
      if (this.#entries.size >= this.max) this.#entries.clear();
      // Never asked: stale whatever the clock says (performance.now() starts near 0 with the process).
      e = { at: Number.NEGATIVE_INFINITY, value: undefined, known: false, pending: undefined };
      this.#entries.set(key, e);
    }
    const fresh = performance.now() - e.at < this.ttlMs;
    if (!fresh && !e.pending) this.#refresh(key, e, ask);
    if (e.known) return Promise.resolve(e.value);
    return e.pending!;
  }

  /**
   * get() without a promise, for warm paths that finish synchronously: the version get() would
   * resolve with at once (asking for a fresh one in the background when stale, exactly as get()
   * does), or NOT_YET when get() would have to wait for the first answer.
   */
  peek(key: string, ask: () => Promise<string | undefined>): string | undefined | typeof NOT_YET {
    const e = this.#entries.get(key);
    if (!e?.known) return NOT_YET;
    if (!(performance.now() - e.at < this.ttlMs) && !e.pending) this.#refresh(key, e, ask);
    return e.value;
  }

  #refresh(key: string, e: Entry, ask: () => Promise<string | undefined>): void {
    const p = ask();
    e.pending = p;
    p.then(
      (v) => {
        e.value = v;
        e.known = true;
        e.at = performance.now();
        e.pending = undefined;
      },
      () => {
        // The caller that waited sees the error; a version in hand stays until the next try.
        e.pending = undefined;
        if (!e.known) this.#entries.delete(key);
      },
    );
  }
}
