// Object versions ("stamps") remembered for a short interval. Asking the store for a version on
// every cached chunk read costs a stat (or a HEAD) per read; hot chunks are read by many requests
// at once, so one answer is shared for `ttlMs` and by every concurrent caller. A rewrite is thus
// seen within ttlMs. The map is bounded: past `max` entries it starts over.
export class StampMemo {
  readonly ttlMs: number;
  readonly max: number;
  readonly #entries = new Map<string, { at: number; stamp: Promise<string | undefined> }>();

  constructor(ttlMs: number, max = 100_000) {
    this.ttlMs = ttlMs;
    this.max = max;
  }

  get(key: string, ask: () => Promise<string | undefined>): Promise<string | undefined> {
    const now = performance.now();
    const known = this.#entries.get(key);
    if (known && now - known.at < this.ttlMs) return known.stamp;
    if (this.#entries.size >= this.max) this.#entries.clear();
    const stamp = ask();
    stamp.catch(() => {
      if (this.#entries.get(key)?.stamp === stamp) this.#entries.delete(key);
    });
    this.#entries.set(key, { at: now, stamp });
    return stamp;
  }
}
