// Argument checks shared by both ledgers, so bad input is refused the same way before any SQL runs.
import { InvalidParameterError } from "../errors.ts";
import { type ChargeRequest, type NewKey, SCOPES, type Scope } from "./types.ts";

export interface KeyFields {
  name: string;
  scopes: Scope[];
  credits: number;
  rate: number;
  burst: number;
  expiresAt: string | null;
}

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

function nonNegativeInt(param: string, n: unknown): number {
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw new InvalidParameterError(param, `${param} must be a non-negative integer`);
  }
  return n;
}

export function positiveInt(param: string, n: unknown): number {
  if (nonNegativeInt(param, n) === 0) throw new InvalidParameterError(param, `${param} must be a positive integer`);
  return n as number;
}

export function defaultBurst(rate: number): number {
  return rate > 0 ? Math.max(1, Math.ceil(rate)) : 0;
}

export function checkRateArgs(rate: number, burst: number): void {
  if (!Number.isFinite(rate) || rate < 0) throw new InvalidParameterError("rate", "rate must be a number >= 0");
  if (rate > 0 && (!Number.isSafeInteger(burst) || burst < 1)) {
    throw new InvalidParameterError("burst", "burst must be an integer >= 1");
  }
}

// Control characters (C0, DEL, C1) and bidirectional overrides: a name holding them could rewrite
// an operator's terminal or reorder what `keys list` shows.
export const UNPRINTABLE = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

export function keyFields(input: NewKey): KeyFields {
  const name = typeof input.name === "string" ? input.name.trim() : "";
  if (!name || name.length > 200) throw new InvalidParameterError("name", "name must be 1-200 characters");
  if (UNPRINTABLE.test(name)) {
    throw new InvalidParameterError("name", "name must not contain control or text-direction characters");
  }
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0) throw new InvalidParameterError("scopes", "at least one scope is required");
  for (const s of scopes) {
    if (!isScope(s)) throw new InvalidParameterError("scopes", `unknown scope "${s}" (known: ${SCOPES.join(", ")})`);
  }
  const credits = nonNegativeInt("credits", input.credits);
  const rate = input.rate;
  const burst = rate > 0 ? (input.burst ?? defaultBurst(rate)) : 0;
  checkRateArgs(rate, burst);
  let expiresAt: string | null = null;
  if (input.expiresAt !== undefined && input.expiresAt !== null) {
    const t = input.expiresAt instanceof Date ? input.expiresAt.getTime() : Date.parse(input.expiresAt);
    if (!Number.isFinite(t)) throw new InvalidParameterError("expiresAt", "expiresAt is not a valid date");
    expiresAt = new Date(t).toISOString();
  }
  return { name, scopes, credits, rate, burst, expiresAt };
}

/** What a settle lowers a charge to: whole credits and bytes, never negative. */
export function settleFields(cost: number, bytes: number): { cost: number; bytes: number } {
  return { cost: nonNegativeInt("cost", cost), bytes: nonNegativeInt("bytes", bytes) };
}

export function chargeFields(req: ChargeRequest): Required<ChargeRequest> {
  if (typeof req.route !== "string" || !req.route) throw new InvalidParameterError("route", "route is required");
  return {
    keyId: req.keyId,
    cost: nonNegativeInt("cost", req.cost),
    route: req.route,
    item: req.item ?? null,
    bytes: nonNegativeInt("bytes", req.bytes ?? 0),
    requestId: req.requestId ?? null,
  };
}
