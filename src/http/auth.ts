// The gate in front of keyed routes: X-API-Key header only, scope check, per-key rate limit.
// On the hot path the ledger answers from its in-process key cache (ledger/key-cache.ts), and a
// key without a rate limit skips the bucket altogether: no database work per request.
import type { IncomingMessage } from "node:http";
import { RateLimitedError, UnauthorizedError } from "../errors.ts";
import type { KeyRecord, Ledger, RateDecision } from "../ledger/types.ts";
import type { KeyInfo } from "./context.ts";
import type { Auth } from "./route.ts";

const QUERY_KEY_NAMES = ["api_key", "apikey", "key", "x-api-key", "token", "access_token"];

export interface GateResult {
  key: KeyInfo;
  rateHeaders: Record<string, string>;
}

/** How a route takes a token from its key's bucket (default: at once, refused when empty). */
export type TakeToken = (keyId: string, rate: number, burst: number) => Promise<RateDecision>;

export function gate(
  req: IncomingMessage,
  /** The request's query parameters (asked only to word the refusal of a missing key). */
  query: () => Map<string, string[]>,
  auth: Exclude<Auth, "public">,
  ledger: Ledger,
  take: TakeToken = (id, rate, burst) => ledger.checkRate(id, rate, burst),
  /** Told the key's id once it is known, before its rate is checked: a 429 is logged with its key. */
  known?: (keyId: string) => void,
): GateResult | Promise<GateResult> {
  const raw = req.headers["x-api-key"];
  if (raw === undefined || raw === "") {
    const params = query();
    const inQuery = QUERY_KEY_NAMES.some((n) => params.has(n));
    throw new UnauthorizedError(
      inQuery
        ? "API keys are accepted only in the X-API-Key header, never in the URL"
        : "this route needs an API key in the X-API-Key header",
    );
  }
  if (Array.isArray(raw)) throw new UnauthorizedError("send exactly one X-API-Key header");
  // A key seen in the last seconds is settled without a promise (same checks, same crypto).
  const cached = ledger.authenticateCached?.(raw, auth);
  if (cached) return admitted(cached, take, known);
  return ledger.authenticate(raw, auth).then((record) => admitted(record, take, known));
}

function admitted(
  record: KeyRecord,
  take: TakeToken,
  known: ((keyId: string) => void) | undefined,
): GateResult | Promise<GateResult> {
  known?.(record.id);
  const key = { id: record.id, name: record.name, scopes: record.scopes };
  if (record.rate <= 0) return { key, rateHeaders: {} };
  return limited(record, key, take);
}

async function limited(record: KeyRecord, key: KeyInfo, take: TakeToken): Promise<GateResult> {
  const rate = await take(record.id, record.rate, record.burst);
  const rateHeaders: Record<string, string> = {};
  const window = Math.max(1, Math.ceil(rate.limit / record.rate));
  rateHeaders["RateLimit-Policy"] = `${rate.limit};w=${window}`;
  rateHeaders.RateLimit = `limit=${rate.limit}, remaining=${Math.max(0, Math.floor(rate.remaining))}, reset=${Math.ceil(rate.retryAfterSeconds)}`;
  if (!rate.ok) {
    throw new RateLimitedError(
      "rate limit exceeded for this key",
      Math.max(1, Math.ceil(rate.retryAfterSeconds)),
      rateHeaders,
    );
  }
  return { key, rateHeaders };
}
