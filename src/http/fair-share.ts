// Fair shares of a limited resource (store-reading slots, places for /data requests waiting for
// tokens): each holder (an API key, a client address) may take up to its share freely; beyond
// it, only while a whole share stays free for everyone else. One key or one address can
// therefore never take the last `share` places, so another client always finds one unless many
// clients together fill them (then the instance is truly busy, and says so). A refusal names the
// limit it hit: the holder's share to the greedy one, the instance's capacity to everyone when
// the resource is full.
//
// Each take and release costs a few map operations: nothing scales with the number of holders.

/** The share of a resource one holder may take freely: this fraction of it, at least one place. */
export const FAIR_SHARE_FRACTION = 1 / 4;

export type ShareRefusal =
  | { limit: "capacity"; max: number }
  | { limit: "share"; holder: string; held: number; share: number; max: number };

export class FairShares {
  readonly max: number;
  readonly share: number;
  #used = 0;
  readonly #held = new Map<string, number>();

  constructor(max: number, fraction = FAIR_SHARE_FRACTION) {
    this.max = Math.max(0, Math.floor(max));
    this.share = Math.max(1, Math.ceil(this.max * fraction));
  }

  /** Places taken now, by everyone. */
  get used(): number {
    return this.#used;
  }

  /** Places `holder` holds now. */
  heldBy(holder: string): number {
    return this.#held.get(holder) ?? 0;
  }

  /**
   * One place for a request on behalf of every one of `holders` (e.g. its key and its address):
   * a release function, or the refusal that stands in its way.
   */
  take(holders: readonly string[]): (() => void) | ShareRefusal {
    if (this.#used >= this.max) return { limit: "capacity", max: this.max };
    const freeAfter = this.max - this.#used - 1;
    for (const holder of holders) {
      const held = this.heldBy(holder);
      if (held >= this.share && freeAfter < this.share) {
        return { limit: "share", holder, held, share: this.share, max: this.max };
      }
    }
    this.#used++;
    for (const holder of holders) this.#held.set(holder, this.heldBy(holder) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used--;
      for (const holder of holders) {
        const n = this.heldBy(holder) - 1;
        if (n > 0) this.#held.set(holder, n);
        else this.#held.delete(holder);
      }
    };
  }
}

/**
 * What a refusal says to the client: the instance's capacity, or its own share (naming whose:
 * "this key" or "this address", from the holder's prefix).
 */
export function refusalDetail(r: ShareRefusal, what: string): string {
  if (r.limit === "capacity") return `all ${r.max} ${what} are taken; retry shortly`;
  const whose = r.holder.startsWith("key:") ? "this key" : "this address";
  return (
    `${whose} holds ${r.held} of the ${r.max} ${what}, more than its share of ${r.share} while others ` +
    "may need them; retry when one of its requests is done"
  );
}

/** The holders a request counts against: its client address, and its key when it has one. */
export function holdersOf(client: string, keyId?: string): string[] {
  return keyId ? [`key:${keyId}`, `address:${client}`] : [`address:${client}`];
}
