// A value built from store metadata that is trusted for a bounded interval, then revalidated
// cheaply: the keys read while building it are "stamped" (a stat of each file, or a hash of each
// small document over HTTP) and the value is rebuilt only when a stamp changed. A new forecast
// cycle therefore shows up within one interval, without a restart and without re-reading
// metadata on every request. The interval is a bound on staleness, not a hint: once it has
// passed, the next callers wait for the check (a stat per document) rather than be answered
// from metadata that may be older, so every route moves to a new cycle within one interval of
// its metadata being written, however idle the server was before.

export interface Stamped<T> {
  value: T;
  /** Changes whenever a document the value was built from changed. */
  stamp: string;
}

interface Loaded<T> extends Stamped<T> {
  keys: string[];
}

export class Revalidated<T> {
  readonly #load: (touch: (key: string) => void) => Promise<T>;
  readonly #stampOf: (keys: string[]) => Promise<string>;
  readonly #intervalMs: number;
  #current: Promise<Loaded<T>> | undefined;
  /** The value #current resolved to, once it has (for peek, which cannot wait). */
  #settled: { of: Promise<Loaded<T>>; value: Loaded<T> } | undefined;
  #checkedAt = 0;
  #checking: Promise<void> | undefined;

  constructor(
    load: (touch: (key: string) => void) => Promise<T>,
    stampOf: (keys: string[]) => Promise<string>,
    intervalMs: number,
  ) {
    this.#load = load;
    this.#stampOf = stampOf;
    this.#intervalMs = intervalMs;
  }

  /**
   * The current value. Within the interval after the last check, the value in hand; once the
   * interval has passed, a check starts and this call (like every other until the check ends)
   * waits for it, and for the new value when a document changed. A store that cannot be reached
   * for the check keeps the value in hand (an outage is not a new cycle).
   */
  async get(): Promise<Stamped<T>> {
    if (!this.#current) this.#start();
    else {
      const checking = this.#due();
      if (checking) await checking;
    }
    return this.#current!;
  }

  /**
   * What get() would answer, when it can be had without waiting: the loaded value in hand while
   * its last check is younger than the interval. Undefined while the first load (or a reload after
   * a failure) or a due check is under way: the caller then awaits get().
   */
  peek(): Stamped<T> | undefined {
    const cur = this.#current;
    if (!cur || this.#due()) return undefined;
    const s = this.#settled;
    return s !== undefined && s.of === this.#current ? s.value : undefined;
  }

  /** The check under way, started now when the interval has passed; undefined when none is due. */
  #due(): Promise<void> | undefined {
    if (!this.#checking && performance.now() - this.#checkedAt >= this.#intervalMs) {
      this.#checking = this.#check()
        .catch(() => {
          // Store unreachable: keep the value in hand and try again after another interval.
          this.#checkedAt = performance.now();
        })
        .finally(() => {
          this.#checking = undefined;
        });
    }
    return this.#checking;
  }

  #adopt(p: Promise<Loaded<T>>): void {
    this.#current = p;
    p.then(
      (value) => {
        if (this.#current === p) this.#settled = { of: p, value };
      },
      () => {},
    );
  }

  /** Revalidate at the next get() or peek(), whatever the interval (after a publish, say). */
  expire(): void {
    this.#checkedAt = Number.NEGATIVE_INFINITY;
  }

  #start(before?: { keys: string[]; stamp: string }): void {
    this.#checkedAt = performance.now();
    const p = this.#build(before);
    p.catch(() => {
      if (this.#current === p) this.#current = undefined;
    });
    this.#adopt(p);
  }

  async #build(before?: { keys: string[]; stamp: string }): Promise<Loaded<T>> {
    const touched = new Set<string>();
    const value = await this.#load((k) => touched.add(k));
    const keys = [...touched].sort();
    // The stamp taken before reading is the safe one: a write that lands during the read changes
    // the stamp again and is picked up by the next check instead of being missed.
    const same = before && before.keys.length === keys.length && before.keys.every((k, i) => k === keys[i]);
    const stamp = same ? before.stamp : await this.#stampOf(keys);
    return { value, keys, stamp };
  }

  async #check(): Promise<void> {
    // The check counts from when its stamps were taken, not from when it ended: a document written
    // while the check ran is then certain to be looked at again within one interval of the write.
    const startedAt = performance.now();
    let cur: Loaded<T>;
    try {
      cur = await this.#current!;
    } catch {
      this.#start();
      return;
    }
    const stamp = await this.#stampOf(cur.keys);
    if (stamp === cur.stamp) {
      this.#checkedAt = startedAt;
      return;
    }
    // Load the new value beside the old one; swap only once it has loaded.
    const next = this.#build({ keys: cur.keys, stamp });
    const value = await next;
    this.#current = next;
    this.#settled = { of: next, value };
    this.#checkedAt = startedAt;
  }
}
