// Object storage (or any static file server) reached over HTTP(S). Every reply is checked before
// its bytes go anywhere: a ranged read must come back as 206 with a Content-Range naming exactly
// the bytes asked for, or as 200 with the whole object (which is then sliced, if it is long
// enough); a body shorter than its Content-Length is refused. Servers and proxies that ignore
// Range are common, and taking their whole-object reply as "the requested bytes" decodes the
// wrong part of a shard into plausible numbers.
import { type Backend, fault, type RangeQuery, rangeHeader, sliceWhole } from "./backend.ts";
import { confineKey } from "./keys.ts";
import { type NOT_YET, StampMemo } from "./stamp-memo.ts";

/** How long a remote object's validators are trusted before they are asked for again. */
export const REMOTE_STAMP_TTL_MS = 2000;
const RETRY_DELAY_MS = 100;

export class HttpBackend implements Backend {
  readonly base: URL;
  readonly description: string;
  readonly timeoutMs: number;
  readonly #stamps = new StampMemo(REMOTE_STAMP_TTL_MS);

  constructor(url: string, timeoutMs = 15_000) {
    this.base = new URL(url.endsWith("/") ? url : `${url}/`);
    this.description = `http store ${this.base.origin}${this.base.pathname}`;
    this.timeoutMs = timeoutMs;
  }

  #url(key: string): URL {
    const rel = confineKey(key);
    return new URL(rel.split("/").map(encodeURIComponent).join("/"), this.base);
  }

  /**
   * One request, retried once after a connection error or a 5xx: object stores shed load that way,
   * and a client of /data turns a failed chunk into fill values. Timeouts are not retried (the
   * caller has waited long enough) and neither are 4xx answers.
   */
  async #request(
    key: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
    method: "GET" | "HEAD" = "GET",
  ): Promise<Response | undefined> {
    let res: Response | undefined;
    try {
      res = await this.#once(key, headers, signal, method);
    } catch (e) {
      const cause = e instanceof Error ? (e.cause as Error | undefined) : undefined;
      if (signal?.aborted || cause?.name === "TimeoutError" || cause?.name === "AbortError") throw e;
    }
    if (res && res.status < 500) return res;
    await res?.body?.cancel();
    await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
    return this.#once(key, headers, signal, method);
  }

  async #once(
    key: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    method: "GET" | "HEAD",
  ): Promise<Response | undefined> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await fetch(this.#url(key), {
        method,
        // Content-Range and Content-Length speak of the stored bytes, not of a compressed transfer.
        headers: { "Accept-Encoding": "identity", ...headers },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (e) {
      throw fault(this, key, "the store cannot be read right now", { cause: e });
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    return res;
  }

  async #body(res: Response, key: string): Promise<Uint8Array> {
    let body: Uint8Array;
    try {
      body = new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      throw fault(this, key, "the store cannot be read right now", { cause: e });
    }
    const declared = res.headers.get("content-length");
    if (declared !== null && Number(declared) !== body.byteLength) {
      throw fault(this, key, "the store sent an incomplete object", {
        detail: `body ${body.byteLength} bytes, Content-Length ${declared}`,
      });
    }
    return body;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    const res = await this.#request(key, {}, opts?.signal);
    if (!res) return undefined;
    if (res.status !== 200) {
      await res.body?.cancel();
      throw fault(this, key, "the store answered with an error", { upstream_status: res.status });
    }
    return this.#body(res, key);
  }

  async getRange(key: string, range: RangeQuery, opts?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    const res = await this.#request(key, { Range: rangeHeader(range) }, opts?.signal);
    if (!res) return undefined;
    if (res.status === 206) return this.#partial(res, key, range);
    if (res.status === 200) {
      // The server ignored Range: the body is the whole object; take the asked part of it.
      return sliceWhole(this, key, await this.#body(res, key), range);
    }
    await res.body?.cancel();
    // 416 means the object is shorter than its own index says: damaged or being replaced.
    throw fault(this, key, "the store answered with an error", { upstream_status: res.status });
  }

  async #partial(res: Response, key: string, range: RangeQuery): Promise<Uint8Array> {
    const cr = parseContentRange(res.headers.get("content-range"));
    if (!cr) {
      await res.body?.cancel();
      throw fault(this, key, "the store sent a partial reply without a valid Content-Range", {
        detail: `Content-Range ${JSON.stringify(res.headers.get("content-range"))}`,
      });
    }
    const want = expected(range, cr.total);
    if (!want || cr.start !== want.start || cr.end !== want.end) {
      await res.body?.cancel();
      throw fault(this, key, "the store sent a different byte range than the one asked for", {
        detail: `asked ${rangeHeader(range)}, got bytes ${cr.start}-${cr.end}/${cr.total ?? "*"}`,
      });
    }
    const body = await this.#body(res, key);
    if (body.byteLength !== cr.end - cr.start + 1) {
      throw fault(this, key, "the store sent an incomplete byte range", {
        detail: `${body.byteLength} bytes for bytes ${cr.start}-${cr.end}`,
      });
    }
    return body;
  }

  /**
   * Version of a remote object from its validators (ETag, else Last-Modified + Content-Length),
   * asked for with HEAD at most once per REMOTE_STAMP_TTL_MS per key: a chunk rewritten in place
   * on object storage stops being served from a decoded cache within that interval.
   */
  remoteStamp(key: string): Promise<string | undefined> {
    return this.#stamps.get(key, () => this.#head(key));
  }

  /** remoteStamp() without waiting, when a version is in hand (see Backend.stampNow). */
  stampNow(key: string): string | undefined | typeof NOT_YET {
    return this.#stamps.peek(key, () => this.#head(key));
  }

  async #head(key: string): Promise<string | undefined> {
    const res = await this.#request(key, {}, undefined, "HEAD");
    if (!res) return undefined;
    await res.body?.cancel();
    if (res.status !== 200) throw fault(this, key, "the store answered with an error", { upstream_status: res.status });
    const etag = res.headers.get("etag");
    if (etag) return etag;
    return `${res.headers.get("last-modified") ?? ""}|${res.headers.get("content-length") ?? ""}`;
  }
}

interface ContentRange {
  start: number;
  end: number;
  total: number | null;
}

export function parseContentRange(value: string | null): ContentRange | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value?.trim() ?? "");
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === "*" ? null : Number(m[3]);
  if (end < start || (total !== null && end >= total)) return undefined;
  return { start, end, total };
}

/** The inclusive byte span a correct 206 reply covers; undefined when it cannot be known. */
function expected(range: RangeQuery, total: number | null): { start: number; end: number } | undefined {
  if ("suffixLength" in range) {
    if (total === null) return undefined;
    // Every suffix read here is a shard index: an object shorter than it is damaged, not "all of it".
    if (range.suffixLength > total) return undefined;
    return { start: total - range.suffixLength, end: total - 1 };
  }
  return { start: range.offset, end: range.offset + range.length - 1 };
}

/** The asked part of a whole object, or a refusal when the object is too short to hold it. */
