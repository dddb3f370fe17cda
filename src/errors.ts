// Typed domain errors. Domain code throws these with plain fields; http/problem.ts maps each
// class to a status in one table. Messages are written for the client: never a path, stack or SQL.

export type Extensions = Record<string, unknown>;

export class GridcastError extends Error {
  /** Extra fields carried into the problem+json body (param, available, limit_mb, ...). */
  readonly extensions: Extensions;
  /** Server-side context for the log line (store, key, upstream detail); never sent to clients. */
  logFields: Record<string, unknown> = {};
  constructor(message: string, extensions: Extensions = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.extensions = extensions;
  }
}

/** A setting or CLI argument is wrong. */
export class ConfigError extends GridcastError {}

/** A request parameter is missing or invalid. */
export class InvalidParameterError extends GridcastError {
  constructor(param: string, message: string, extra: Extensions = {}) {
    super(message, { param, ...extra });
  }
}

/** The thing asked for does not exist (group, variable, item, layer, key of a store). */
export class NotFoundError extends GridcastError {}

/** A variable name is not registered or not present in the dataset. */
export class UnknownVariableError extends NotFoundError {}

/** A result would exceed a size limit; raised before any chunk is read. */
export class TooLargeError extends GridcastError {
  constructor(message: string, requestedBytes: number, limitMb: number, advice: string) {
    const requested_mb = Math.round((requestedBytes / (1024 * 1024)) * 1000) / 1000;
    super(message, { requested_mb, requested_bytes: requestedBytes, limit_mb: limitMb, advice });
  }
}

/** The store (or a group in it) cannot be reached right now; retrying later may work. */
export class StoreUnavailableError extends GridcastError {}

/** Stored bytes could not be decoded: the store is damaged, retrying will not help. */
export class CorruptDataError extends GridcastError {}

/**
 * A variable's stored encoding is one gridcast does not understand (an unknown _Unsigned, a
 * non-numeric scale_factor, ...): its values are refused rather than served as stored.
 */
export class UnsupportedEncodingError extends CorruptDataError {}

export class UnauthorizedError extends GridcastError {}
export class ForbiddenError extends GridcastError {}
export class InsufficientCreditsError extends GridcastError {}
export class RateLimitedError extends GridcastError {
  readonly retryAfterSeconds: number;
  /** RateLimit / RateLimit-Policy headers to send with the 429. */
  readonly headers: Record<string, string>;
  constructor(message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(message, { retry_after: retryAfterSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
    this.headers = headers;
  }
}
/**
 * A response header would exceed the line budget (http/header-budget.ts): refused before anything
 * is sent, since clients and proxies cannot read such a line.
 */
export class HeaderTooLargeError extends GridcastError {}
/** The server is at its concurrency cap; the client should retry shortly. */
export class BusyError extends GridcastError {}
/** The key/credit ledger cannot be reached. */
export class LedgerUnavailableError extends GridcastError {}
