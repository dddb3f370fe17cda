// Every error a request ends in, as problem+json (problem.ts maps error classes to statuses): the
// headers some statuses carry (Retry-After, RateLimit, WWW-Authenticate), and an error log line for
// server faults, naming the store and key a fault carries, which the body never does.
import type { IncomingMessage, ServerResponse } from "node:http";
import { BusyError, GridcastError, RateLimitedError } from "../errors.ts";
import type { AppContext } from "./context.ts";
import { problemFor, sendProblem } from "./problem.ts";
import { pathOf } from "./route-match.ts";

/** The application's error handler: sends the problem for `err` and logs server faults. */
export function errorReply(ctx: AppContext): (err: unknown, req: IncomingMessage, res: ServerResponse) => void {
  return (err: unknown, req: IncomingMessage, res: ServerResponse) => {
    const problem = problemFor(err, pathOf(req));
    const headers: Record<string, string> = {};
    if (err instanceof RateLimitedError) {
      Object.assign(headers, err.headers, { "Retry-After": String(err.retryAfterSeconds) });
    }
    if (err instanceof BusyError) headers["Retry-After"] = "1";
    if (problem.status === 401) headers["WWW-Authenticate"] = 'ApiKey header="X-API-Key"';
    // Store faults carry the store and key in logFields: the log names them, the body never does.
    const located = err instanceof GridcastError && Object.keys(err.logFields).length > 0;
    if (problem.status >= 500 && (located || !(err instanceof GridcastError && problem.status === 503))) {
      const fields = err instanceof GridcastError ? err.logFields : {};
      ctx.log({ level: "error", request_id: res.getHeader("X-Request-Id"), ...fields, error: describe(err) });
    }
    sendProblem(res, problem, headers);
  };
}

/** An error as log fields: name, message and cause. */
export function describe(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { name: err.name, message: err.message, cause: String(err.cause ?? "") };
  return { message: String(err) };
}
