// The lean path for warm public files: a GET or HEAD of a build file or vendor file that is in
// memory already (static-cache.ts) is answered before the router and the shared intake, with its
// whole header set worked out once per file and coding (static-reply.ts, leanHeads) and written in
// one writeHead and one end. Everything the intake gives other requests, it gives these too: a
// request id, CORS headers, the access log line (the same fields), the metrics, the pipelined-request
// queue, and the watchdog whenever bytes are left waiting for the client. A response whose body
// the kernel took whole at once has nothing left to watch: no stall or deadline can hold anything
// of it, so it skips the watchdog's entry. Anything else (a cold file, a Range, a request with a
// body, a path a route claims, a connection with a response still open) goes the full way.
import type { IncomingMessage, ServerResponse } from "node:http";
import { memoByText } from "../bounded-map.ts";
import { cacheControlOf, type Snapshot } from "../published/snapshot.ts";
import { pathParts } from "../published/static.ts";
import type { CachedFile } from "../published/static-cache.ts";
import { type CorsHeads, sendLean } from "../published/static-reply.ts";
import type { AppContext } from "./context.ts";
import { isPublicLocation } from "./public-path.ts";
import { accessRecord, EXPOSED_LIST, type PipelineQueue } from "./request-intake.ts";
import { requestId } from "./request-marks.ts";
import { decidedPath, mountOf, VENDOR_CACHE_CONTROL, type VendorMount } from "./static-files.ts";
import { type Watchdog, waiting } from "./watchdog.ts";

const CORS: CorsHeads = { allowOrigin: "*", exposeHeaders: EXPOSED_LIST };
/** The route name static files carry in the access log and the metrics. */
const ROUTE = "static";

/** What a request path names, worked out once per path: where its file would be, and its headers. */
interface Plan {
  readonly parts: readonly string[];
  readonly key: string;
  /** The vendor mount it is below, or undefined for a build file. */
  readonly mount: VendorMount | undefined;
  readonly cache: string;
  /** The path as the access log records it (normalised, re-encoded, at most 512 characters). */
  readonly logPath: string;
}

/** Paths remembered (each a few hundred bytes), and the longest path kept. */
const PLAN_MEMO_MAX = 4096;
const PLAN_MEMO_TEXT = 512;

/**
 * The lean handler: true when it answered the request, false (having done nothing) when the full
 * path must. `isRouted` says whether a route claims a path, for any method.
 */
export function leanStatic(
  ctx: AppContext,
  watchdog: Watchdog,
  queue: PipelineQueue,
  vendor: VendorMount[],
  isRouted: (path: string) => boolean,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const planOf = memoByText(
    (path): Plan | null => {
      if (isRouted(path)) return null;
      const decided = decidedPath(path);
      if (!decided.ok) return null;
      const mount = mountOf(vendor, decided.path);
      const named = pathParts(mount ? decided.path.slice(mount.prefix.length - 1) : decided.path);
      if (!named) return null;
      return Object.freeze({
        parts: named.parts,
        key: named.key,
        mount,
        cache: mount ? VENDOR_CACHE_CONTROL : cacheControlOf(named.parts),
        logPath: decided.url.slice(0, 512),
      });
    },
    PLAN_MEMO_MAX,
    PLAN_MEMO_TEXT,
  );

  return (req, res) => {
    const method = req.method;
    if (method !== "GET" && method !== "HEAD") return false;
    const h = req.headers;
    // A body (the intake answers it 400 and closes), or a Range (sendCached answers it).
    if (h["transfer-encoding"] !== undefined || Number(h["content-length"] ?? 0) > 0) return false;
    if (h.range !== undefined) return false;
    const socket = req.socket;
    // A pipelined request behind an open response waits its turn in the full path's queue.
    if (queue.busy(socket)) return false;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const plan = planOf(q < 0 ? url : url.slice(0, q));
    if (plan === null) return false;
    let file: CachedFile | undefined;
    let build: string | undefined;
    if (plan.mount) file = plan.mount.files?.warm(plan.key);
    else {
      // now() also starts the look for a newer build when one is due: a publish drops this cache.
      const snap: Snapshot | undefined = ctx.published.now();
      file = snap?.warmStatic(plan.parts, plan.key, isPublicLocation);
      build = snap?.buildId;
    }
    if (file === undefined) return false;
    const started = performance.now();
    const id = requestId();
    const sent = sendLean(req, res, file, plan.cache, build, CORS, id);
    queue.mark(socket, res);
    // Bytes the kernel did not take at once (a large body, a client not reading, a response queued
    // behind another): watched like every other response, dropped past its limits.
    const watch =
      waiting(res) > 0
        ? watchdog.watch(res, (why) => {
            ctx.log({ level: "warn", request_id: id, event: `response-${why}`, route: ROUTE });
            res.destroy();
          })
        : undefined;
    res.on("close", () => {
      watch?.stop();
      const ms = performance.now() - started;
      const aborted = !res.writableFinished;
      ctx.metrics.observe(ROUTE, aborted ? 499 : sent.status, ms / 1000);
      ctx.log(
        accessRecord(
          id,
          method,
          ROUTE,
          sent.status,
          Math.round(ms * 10) / 10,
          sent.bytes,
          null,
          aborted,
          undefined,
          plan.logPath,
        ),
      );
    });
    return true;
  };
}
