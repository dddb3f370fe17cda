// The byte-level store interface every backend satisfies (zarrita's readable get/getRange, plus
// the optional reads gridcast's fast paths use), and the helpers all backends share to slice a
// whole object and to name a failing key. A missing key is undefined; other I/O failures become
// StoreUnavailableError so callers answer 503 without leaking paths. Backends: directory-backend.ts,
// http-backend.ts; counting-backend.ts wraps either and opens the right one for a root.
import { StoreUnavailableError } from "../errors.ts";
import type { NOT_YET } from "./stamp-memo.ts";

export type RangeQuery = { offset: number; length: number } | { suffixLength: number };

export interface Backend {
  /** Human description without secrets (used in logs and inspect). */
  readonly description: string;
  get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined>;
  getRange?(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined>;
  /**
   * A whole object read into a buffer from `take`, for bulk reads that reuse buffers; undefined
   * when absent. `expect` is the most the caller expects it to hold: with it, the buffer may be
   * taken at that size before the object's own is known (the result is then a view of its start).
   * Backends without it are read with `get`.
   */
  getInto?(key: string, take: (size: number) => Uint8Array, expect?: number): Promise<Uint8Array | undefined>;
  /** Child names under a prefix, directories only; undefined when the backend cannot list. */
  listDirs?(prefix: string): Promise<string[] | undefined>;
  /** Size of an object without reading it, when the backend can tell. */
  size?(key: string): Promise<number | undefined>;
  /**
   * A cheap version of an object without reading it (changes when the object is rewritten);
   * undefined when absent. Only backends that can tell without a round trip implement it.
   */
  stamp?(key: string): Promise<string | undefined>;
  /**
   * stamp() asked of the object now, never a version remembered from an earlier ask: what
   * metadata revalidation uses, so a new cycle is seen by the first check after it was written.
   */
  freshStamp?(key: string): Promise<string | undefined>;
  /** freshStamp() of many keys, answered at once (a local store's stats in one loop). */
  freshStamps?(keys: readonly string[]): (string | undefined)[];
  /** A version that costs a round trip (HEAD), cached by the backend for a short interval. */
  remoteStamp?(key: string): Promise<string | undefined>;
  /**
   * The answer stamp() (else remoteStamp()) would give without waiting, when one is in hand;
   * NOT_YET when that call would have to wait. Lets a warm read finish without a promise.
   */
  stampNow?(key: string): string | undefined | typeof NOT_YET;
}

export function rangeHeader(range: RangeQuery): string {
  return "suffixLength" in range
    ? `bytes=-${range.suffixLength}`
    : `bytes=${range.offset}-${range.offset + range.length - 1}`;
}

export function sliceWhole(backend: Backend, key: string, whole: Uint8Array, range: RangeQuery): Uint8Array {
  if ("suffixLength" in range) {
    if (range.suffixLength > whole.byteLength) {
      throw fault(backend, key, "the stored object is shorter than the range asked for", {
        detail: `asked ${rangeHeader(range)} of a ${whole.byteLength}-byte object`,
      });
    }
    return whole.subarray(whole.byteLength - range.suffixLength);
  }
  if (range.offset + range.length > whole.byteLength) {
    throw fault(backend, key, "the stored object is shorter than the range asked for", {
      detail: `asked ${rangeHeader(range)} of a ${whole.byteLength}-byte object`,
    });
  }
  return whole.subarray(range.offset, range.offset + range.length);
}

/** A 503 whose log line names the store and key; the client sees only the message. */
export function fault(
  backend: Pick<Backend, "description">,
  key: string,
  message: string,
  extra: { cause?: unknown; detail?: string; upstream_status?: number } = {},
): StoreUnavailableError {
  const { cause, ...log } = extra;
  const ext = extra.upstream_status !== undefined ? { upstream_status: extra.upstream_status } : {};
  const err = new StoreUnavailableError(message, ext, cause === undefined ? {} : { cause });
  err.logFields = { store: backend.description, key: key.replace(/^\/+/, ""), ...log };
  return err;
}
