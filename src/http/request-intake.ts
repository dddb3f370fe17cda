// What every request goes through before a route sees it: pipelined requests on one connection
// queued one behind another; then a request id, the watchdog on its response, the access log
// line written when the response closes, CORS, the answer to OPTIONS, and the rule that GET and
// HEAD carry no body.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AppContext } from "./context.ts";
import { type Meta, metaOf } from "./metering.ts";
import { sendProblem, simpleProblem } from "./problem.ts";
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

const EXPOSED_LIST = EXPOSED_HEADERS.join(", ");

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
 */
export function pipelineQueue(): Middleware {
  const lastOn = new WeakMap<IncomingMessage["socket"], Promise<void>>();
  return (req, res, next) => {
    const before = lastOn.get(req.socket);
    lastOn.set(req.socket, new Promise<void>((ok) => res.once("close", ok)));
    // When the connection dies, every response queued on it closes at once: the requests behind
    // a dropped one are not started (they would all open their files together, for nobody).
    if (before) before.then(() => (req.socket.destroyed ? undefined : next()));
    else next();
  };
}

/** Every request: id, watchdog, access log, CORS, method and body rules. */
export function intake(ctx: AppContext, watchdog: Watchdog): Middleware {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const id = randomUUID();
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
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const aborted = !res.writableFinished;
      ctx.metrics.observe(meta.route, aborted ? 499 : res.statusCode, seconds);
      ctx.log({
        t: new Date().toISOString(),
        request_id: id,
        method: req.method,
        route: meta.route,
        status: res.statusCode,
        ms: Math.round(seconds * 1e4) / 10,
        bytes: Number(res.getHeader("Content-Length") ?? 0),
        key_id: meta.key ?? null,
        ...(aborted ? { aborted: true } : {}),
        ...(meta.charged && !aborted ? { credits: meta.charged } : {}),
        // Static files and unknown paths have no route template to name them; their path (no query) does.
        ...(meta.route === "static" || meta.route === "unmatched" ? { path: pathOnly(req.url).slice(0, 512) } : {}),
      });
    });
    if (req.method === "OPTIONS") {
      res.statusCode = 204;
      res.setHeader("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
      res.setHeader("Access-Control-Allow-Headers", "X-API-Key, Range, If-None-Match, Content-Type");
      res.setHeader("Access-Control-Max-Age", "600");
      res.end();
      return;
    }
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    // No route reads a request body: a connection whose request carries one is closed once the
    // answer is out (a 405 for a POST, say), rather than kept open while a slow client trickles
    // in a body nobody reads, until request_timeout_ms.
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
