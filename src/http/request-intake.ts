// What every request goes through before a route sees it: pipelined requests on one connection
// queued one behind another; then a request id, the watchdog on its response, the access log
// line written when the response closes, CORS, the answer to OPTIONS, and the rule that GET and
// HEAD carry no body.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppContext } from "./context.ts";
import { type Meta, metaOf } from "./metering.ts";
import { sendProblem, simpleProblem } from "./problem.ts";
import { isoNow, requestId } from "./request-marks.ts";
import type { Watchdog } from "./watchdog.ts";

export const EXPOSED_HEADERS = [
  "Content-Range",
  "Content-Length",
  "ETag",
  "X-SVC-Field",
  "X-Credits-Charged",
  "X-Credits-Remaining",
  "X-Request-Id",
  "X-Gridcast-Build",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
];

export const EXPOSED_LIST = EXPOSED_HEADERS.join(", ");

/** The path of a request's URL, without its query. */
function pathOnly(url: string | undefined): string {
  const u = url ?? "";
  const q = u.indexOf("?");
  return q < 0 ? u : u.slice(0, q);
}

type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Pipelined requests on one connection are handled one after another, as their responses go
 * out anyway: otherwise one connection with hundreds of requests in one packet would open
 * hundreds of files at once, and the descriptor budget per connection (fd-limit.ts) would not hold.
 * The queue remembers the newest response of each connection; the lean path for warm public files
 * (lean-static.ts) asks it whether a connection is idle and marks its own responses in it too.
 */
export class PipelineQueue {
  readonly #last = new WeakMap<object, ServerResponse>();

  /** Whether a response on `socket` is still open: a request behind it must wait its turn. */
  busy(socket: object): boolean {
    const last = this.#last.get(socket);
    return last !== undefined && !last.closed;
  }

  /** `res` is now the newest response on `socket`: the next request there waits for its close. */
  mark(socket: object, res: ServerResponse): void {
    this.#last.set(socket, res);
  }

  middleware(): Middleware {
    return (req, res, next) => {
      const before = this.#last.get(req.socket);
      this.#last.set(req.socket, res);
      // When the connection dies, every response queued on it closes at once: the requests behind
      // a dropped one are not started (they would all open their files together, for nobody).
      if (before !== undefined && !before.closed)
        before.once("close", () => (req.socket.destroyed ? undefined : next()));
      else next();
    };
  }
}

/** The access log's record of a finished response (the fields README's logging section names). */
export function accessRecord(
  id: string,
  method: string | undefined,
  route: string,
  status: number,
  ms: number,
  bytes: number,
  keyId: string | null,
  aborted: boolean,
  credits: number | undefined,
  path: string | undefined,
): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    t: isoNow(),
    request_id: id,
    method,
    route,
    status,
    ms,
    bytes,
    key_id: keyId,
  };
  if (aborted) entry.aborted = true;
  if (credits && !aborted) entry.credits = credits;
  if (path !== undefined) entry.path = path;
  return entry;
}

/** Every request: id, watchdog, access log, CORS, method and body rules. */
export function intake(ctx: AppContext, watchdog: Watchdog): Middleware {
  return (req, res, next) => {
    const started = performance.now();
    const id = requestId();
    const meta: Meta = { route: "unmatched" };
    metaOf.set(req, meta);
    res.setHeader("X-Request-Id", id);
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", EXPOSED_LIST);
    // Every response, whatever serves it (routes, the build's files and archives, the viewer and
    // vendor files), is dropped once it has taken response_timeout_ms in all or its client has
    // left sent bytes unread for send_stall_ms: nothing holds a socket and a file for ever.
    const watch = watchdog.watch(res, (why) => {
      ctx.log({ level: "warn", request_id: id, event: `response-${why}`, route: meta.route });
      res.destroy();
    });
    // On close, not finish: a response the client dropped half-way is logged too, as aborted.
    res.once("close", () => {
      watch.stop();
      const ms = performance.now() - started;
      const aborted = !res.writableFinished;
      ctx.metrics.observe(meta.route, aborted ? 499 : res.statusCode, ms / 1000);
      ctx.log(
        accessRecord(
          id,
          req.method,
          meta.route,
          res.statusCode,
          Math.round(ms * 10) / 10,
          Number(res.getHeader("Content-Length") ?? 0),
          meta.key ?? null,
          aborted,
          meta.charged,
          // Static files and unknown paths have no route template to name them; their path (no query) does.
          meta.route === "static" || meta.route === "unmatched" ? pathOnly(req.url).slice(0, 512) : undefined,
        ),
      );
    });
    if (req.method === "OPTIONS") {
      res.statusCode = 204;
      res.setHeader("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS");
      res.setHeader("Access-Control-Allow-Headers", "X-API-Key, Range, If-None-Match, Content-Type");
      res.setHeader("Access-Control-Max-Age", "600");
      res.end();
      return;
    }
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    // Only POST routes read a body (bounded, json-body.ts): a connection whose request carries one
    // is closed once the answer is out (a 405 for a POST elsewhere, say), rather than kept open
    // while a slow client trickles in a body nobody reads, until request_timeout_ms.
    if (hasBody) res.setHeader("Connection", "close");
    if ((req.method === "GET" || req.method === "HEAD") && hasBody) {
      req.resume();
      sendProblem(res, simpleProblem(400, "body-not-allowed", "GET and HEAD requests must not carry a body"), {
        Connection: "close",
      });
      return;
    }
    next();
  };
}
