// RFC 9457 problem+json. One table maps domain error classes to HTTP statuses; everything the
// client sees comes from the error's message and extensions, never from a stack or a path.
import type { ServerResponse } from "node:http";
import {
  BusyError,
  ConfigError,
  CorruptDataError,
  ForbiddenError,
  GridcastError,
  HeaderTooLargeError,
  InsufficientCreditsError,
  InvalidParameterError,
  LedgerUnavailableError,
  NotFoundError,
  RateLimitedError,
  StoreUnavailableError,
  TooLargeError,
  UnauthorizedError,
  UnsupportedEncodingError,
} from "../errors.ts";

type ErrorClass = abstract new (...args: never[]) => GridcastError;

/** Checked in order: subclasses before their parents. */
export const STATUS_TABLE: [ErrorClass, number, string][] = [
  [InvalidParameterError, 400, "invalid-parameter"],
  [UnauthorizedError, 401, "unauthorized"],
  [InsufficientCreditsError, 402, "insufficient-credits"],
  [ForbiddenError, 403, "forbidden"],
  [NotFoundError, 404, "not-found"],
  [TooLargeError, 413, "too-large"],
  [RateLimitedError, 429, "rate-limited"],
  [UnsupportedEncodingError, 500, "unsupported-encoding"],
  [CorruptDataError, 500, "corrupt-data"],
  [StoreUnavailableError, 503, "store-unavailable"],
  [LedgerUnavailableError, 503, "ledger-unavailable"],
  [BusyError, 503, "busy"],
  [ConfigError, 500, "server-misconfigured"],
  [HeaderTooLargeError, 500, "header-too-large"],
];

export const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  411: "Length Required",
  413: "Content Too Large",
  416: "Range Not Satisfiable",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [ext: string]: unknown;
}

/** Problem types are relative URIs; the OpenAPI description documents each of them. */
export const PROBLEM_BASE = "/problems/";

export function problemFor(err: unknown, instance?: string): Problem {
  if (err instanceof GridcastError) {
    for (const [cls, status, slug] of STATUS_TABLE) {
      if (err instanceof cls) {
        return {
          type: PROBLEM_BASE + slug,
          title: TITLES[status] ?? "Error",
          status,
          detail: err.message,
          ...(instance ? { instance } : {}),
          ...edrCode(instance, slug),
          ...err.extensions,
        };
      }
    }
  }
  return {
    type: PROBLEM_BASE + "internal",
    title: TITLES[500],
    status: 500,
    detail: "the server could not complete the request",
    ...(instance ? { instance } : {}),
    ...edrCode(instance, "internal"),
  };
}

/** OGC API – EDR's exception schema requires a `code`: its problems carry the type's slug as one. */
function edrCode(instance: string | undefined, slug: string): { code?: string } {
  return instance === "/edr" || instance?.startsWith("/edr/") ? { code: slug } : {};
}

export function simpleProblem(
  status: number,
  slug: string,
  detail: string,
  ext: Record<string, unknown> = {},
): Problem {
  return { type: PROBLEM_BASE + slug, title: TITLES[status] ?? "Error", status, detail, ...ext };
}

/** Write a problem response (no body for HEAD, as for any response). */
export function sendProblem(res: ServerResponse, problem: Problem, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(problem);
  res.statusCode = problem.status;
  for (const h of [
    "Content-Encoding",
    "Content-Range",
    "ETag",
    "Last-Modified",
    "Content-Disposition",
    "X-SVC-Field",
  ]) {
    res.removeHeader(h);
  }
  res.setHeader("Content-Type", "application/problem+json");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.setHeader("Cache-Control", "no-store");
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(body);
}
