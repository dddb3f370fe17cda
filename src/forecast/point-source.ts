// What a point answer was read from, and a memo of answers that holds each only as long as the
// store still holds exactly that. A warm /point asks the same few questions over and over; with
// the groups and the chunk version unchanged its answer is the same text, so the memo gives that
// text again instead of choosing the patch, copying the column and writing the JSON each time.
import { BoundedMap } from "../bounded-map.ts";
import { isPending, type Soon } from "../soon.ts";
import type { Range } from "../store/region.ts";
import type { ForecastGroup, Store, StoredArray } from "../store/store.ts";

export interface PointSource {
  /** The group the request named, as the store had it. */
  requested: ForecastGroup;
  /** The readable groups a regional patch was chosen among (undefined: none was considered). */
  others: readonly ForecastGroup[] | undefined;
  /** The array read and the region of it (inside one chunk). */
  array: StoredArray;
  region: Range[];
  /** That chunk's cache key with the stored object's version (StoredArray.chunkKeyNow). */
  chunk: string;
  /**
   * For an answer read from the build's point copy: whether the copy still holds the column as the
   * store holds it now (every chunk behind it at the version the copy was made from), known at
   * once. Takes the place of the one-chunk check.
   */
  held?: () => boolean;
}

/**
 * Whether the store holds, at once, what a source was read from: the same group objects (a group
 * whose metadata changed is rebuilt as a new object, and a group added, dropped or rebuilt
 * changes the list patches are chosen among) and the same version of the chunk. False whenever
 * any of these would have to be waited for: then the answer is read again.
 */
export function sourceCurrent(store: Store, s: PointSource): boolean {
  let now: Soon<ForecastGroup>;
  try {
    now = store.forecastGroup(s.requested.id);
  } catch {
    return false;
  }
  if (now !== s.requested) {
    if (isPending(now)) now.catch(() => {}); // the read that follows reports it
    return false;
  }
  if (s.others) {
    const others = store.readableGroups(s.requested.id);
    if (isPending(others)) {
      others.catch(() => {});
      return false;
    }
    if (others.length !== s.others.length) return false;
    for (let i = 0; i < others.length; i++) if (others[i] !== s.others[i]) return false;
  }
  if (s.held) return s.held();
  return s.array.chunkKeyNow(s.region) === s.chunk;
}

/** Answers by request key, each given only while sourceCurrent() holds for what it was read from. */
export class AnswerMemo<T> {
  readonly #entries: BoundedMap<string, { value: T; source: PointSource }>;

  /** At most `max` answers: once full it starts again empty. */
  constructor(max: number) {
    this.#entries = new BoundedMap(max);
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The answer kept for `key` if the store still holds what it was read from; else undefined (and
   * forgotten). With `copies` false (point_copy 0) an answer read from the build's point copy is
   * not given: the store is to be read.
   */
  get(store: Store, key: string, copies = true): T | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if ((copies || !e.source.held) && sourceCurrent(store, e.source)) return e.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, source: PointSource, value: T): void {
    this.#entries.set(key, { value, source });
  }
}
