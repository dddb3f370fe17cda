// The polka application: the routes registered and dispatched (the auth gate, parameters, the
// balance check, the concurrency cap for heavy routes, the handler and its reply), around what
// every request goes through first (request-intake.ts) and what no route claims (static-files.ts).
// Errors become problem+json (error-reply.ts); charged replies are metered (metering.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import polka from "polka";
import { BoundedMap } from "../bounded-map.ts";
import { BusyError, InsufficientCreditsError } from "../errors.ts";
import { gate, type TakeToken } from "./auth.ts";
import { clientOf } from "./connection-gate.ts";
import type { AppContext, KeyInfo } from "./context.ts";
import { errorReply } from "./error-reply.ts";
import { FairShares, holdersOf, refusalDetail } from "./fair-share.ts";
import { dataWaitersMax } from "./fd-limit.ts";
import { jsonBody } from "./json-body.ts";
import { leanStatic } from "./lean-static.ts";
import { charge, type Meta, metaOf, settle } from "./metering.ts";
import { streamNpy } from "./npy-stream.ts";
import { parseParams, queryValues } from "./params.ts";
import { sendProblem, simpleProblem } from "./problem.ts";
import { TokenWaiter, WAITERS_PER_KEY } from "./rate-wait.ts";
import { prepareReply, sendMetered, sendPrepared } from "./reply.ts";
import { intake, PipelineQueue } from "./request-intake.ts";
import { type Handler, polkaPattern, type RequestContext, type RouteDef } from "./route.ts";
import { matches, type PolkaUrl, pathOf, pathParams, rejectUnknown, splitUrl } from "./route-match.ts";
import { staticFiles, vendorMounts } from "./static-files.ts";
import { Watchdog } from "./watchdog.ts";

export interface App {
  handler: Handler;
  routes: RouteDef[];
  /** Patterns polka actually routes, by method (read from its routing table). */
  registered: () => Record<string, string[]>;
}

/**
 * Queries parsed and accepted, by route and query text: parsing is a function of the two, and a
 * warm client asks the same query again and again. Frozen, as every request with that text shares
 * the object. Bounded: texts up to QUERY_MEMO_TEXT characters, QUERY_MEMO_MAX per route, then it
 * starts again empty. A query refused is not kept (it is parsed again, and refused again).
 */
const QUERY_MEMO_MAX = 256;
const QUERY_MEMO_TEXT = 512;
const parsedQueries = new WeakMap<RouteDef, BoundedMap<string, Readonly<Record<string, unknown>>>>();

function parsedQuery(def: RouteDef, text: string): Readonly<Record<string, unknown>> | undefined {
  return parsedQueries.get(def)?.get(text);
}

function keepParsed(def: RouteDef, text: string, query: Record<string, unknown>): void {
  if (text.length > QUERY_MEMO_TEXT) return;
  let m = parsedQueries.get(def);
  if (!m) {
    m = new BoundedMap(QUERY_MEMO_MAX);
    parsedQueries.set(def, m);
  }
  m.set(text, Object.freeze(query));
}

/**
 * The holders a heavy request counts against, kept per connection: a keep-alive client asks again
 * and again for the same key from the same address, and the same strings each time let the fair
 * share's lookups reuse their hashes instead of building and hashing two new ones per request.
 */
const holdersOnSocket = new WeakMap<object, { client: string; keyId: string | undefined; holders: string[] }>();

function holdersFor(socket: object, client: string, keyId: string | undefined): string[] {
  const kept = holdersOnSocket.get(socket);
  if (kept !== undefined && kept.client === client && kept.keyId === keyId) return kept.holders;
  const holders = holdersOf(client, keyId);
  holdersOnSocket.set(socket, { client, keyId, holders });
  return holders;
}

export function createApp(ctx: AppContext, routes: RouteDef[]): App {
  const waiter = new TokenWaiter(
    ctx.ledger,
    ctx.settings.data_rate_wait_ms,
    WAITERS_PER_KEY,
    dataWaitersMax(ctx.settings.data_rate_waiters_max),
  );
  const slots = new FairShares(ctx.settings.max_heavy_requests);
  ctx.metrics.dataWaiting = () => waiter.total;
  ctx.metrics.dataWaitersMax = waiter.maxTotal;
  const watchdog = new Watchdog({
    deadlineMs: ctx.settings.response_timeout_ms,
    stallMs: ctx.settings.send_stall_ms,
    floorBytesPerS: ctx.settings.send_floor_bytes_per_s,
  });

  const onError = errorReply(ctx);
  const vendor = vendorMounts();
  const serveStatic = staticFiles(ctx, onError, vendor);
  const queue = new PipelineQueue();

  const onNoMatch = (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req);
    const other = routes.filter((r) => matches(r, path));
    if (other.length > 0) {
      const post = other.some((r) => r.method === "POST") ? "POST, " : "";
      const get = other.some((r) => r.method === "GET") ? "GET, HEAD, " : "";
      sendProblem(res, simpleProblem(405, "method-not-allowed", `${req.method} is not allowed here`), {
        Allow: `${get}${post}OPTIONS`,
      });
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendProblem(res, simpleProblem(405, "method-not-allowed", `${req.method} is not allowed here`), {
        Allow: "GET, HEAD, OPTIONS",
      });
      return;
    }
    metaOf.get(req)!.route = "static";
    serveStatic(req, res, path);
  };

  const app = polka({ onError, onNoMatch });

  app.use(queue.middleware());
  app.use(intake(ctx, watchdog));

  for (const def of routes) {
    const handler = (req: IncomingMessage & { params?: Record<string, string> }, res: ServerResponse) => {
      const meta = metaOf.get(req)!;
      meta.route = def.path;
      handle(def, req, res, meta).catch((e) => onError(e, req, res));
    };
    const pattern = polkaPattern(def.path);
    if (def.method === "POST") {
      app.post(pattern, handler);
      continue;
    }
    app.get(pattern, handler);
    // HEAD on a metered route would do the whole read for nothing billable: those answer 405.
    if (!def.cost) app.head(pattern, handler);
  }

  async function handle(
    def: RouteDef,
    req: IncomingMessage & { params?: Record<string, string> },
    res: ServerResponse,
    meta: Meta,
  ): Promise<void> {
    const url = req.url ?? "";
    let rawQuery: Map<string, string[]> | undefined;
    const raw = () => {
      rawQuery ??= queryValues(url);
      return rawQuery;
    };
    const client = clientOf(req.socket.remoteAddress ?? "");
    let key: KeyInfo | undefined;
    let rateHeaders: Record<string, string> = {};
    if (def.auth !== "public") {
      let take: TakeToken | undefined;
      // Every keyed route paces rather than refuses: /data up to data_rate_wait_ms (its clients
      // turn refusals into silent fill values), the others up to rate_wait_ms, so a client that
      // follows its Zarr reads with an export (the README's example) is slowed, not refused.
      const waitMs = def.rateLimit === "wait" ? ctx.settings.data_rate_wait_ms : ctx.settings.rate_wait_ms;
      if (waitMs > 0) {
        // The server lets a half-closed client have its answer (httpAllowHalfOpen), so a client
        // that leaves closes no response: its end of the connection only shows as the socket's
        // end, and a half-close looks the same from here. A waiter holds one of the bounded
        // places; one whose client may be gone must not keep it for up to its wait. So once its
        // socket has ended, a waiter is served like any other for header_timeout_ms more (the
        // bound on a client that is slow to send its request): a token within it is answered as
        // ever, otherwise the wait ends with the 429 and Retry-After that stood. A closed
        // response ends the wait at once. Made only for keys with a rate: an unlimited key never
        // gets here.
        take = async (id, rate, burst) => {
          const gone = new AbortController();
          const sock = req.socket;
          let timer: NodeJS.Timeout | undefined;
          const onClose = () => gone.abort();
          const onEnd = () => {
            timer ??= setTimeout(onClose, ctx.settings.header_timeout_ms);
          };
          res.once("close", onClose);
          if (sock.readableEnded) onEnd();
          else sock.once("end", onEnd);
          try {
            return await waiter.take(id, rate, burst, gone.signal, client, waitMs);
          } finally {
            sock.off("end", onEnd);
            clearTimeout(timer);
            res.off("close", onClose);
          }
        };
      }
      const gated = gate(req, raw, def.auth, ctx.ledger, take, (id) => {
        meta.key = id;
      });
      const g = gated instanceof Promise ? await gated : gated;
      key = g.key;
      rateHeaders = g.rateHeaders;
      meta.key = key.id;
      // The connection counts for its key from here on: within the key's fair share of
      // connections, or answered 503 and closed, which gives its descriptor back.
      const refused = ctx.metrics.connections?.claimForKey(req.socket, key.id);
      if (refused) {
        res.setHeader("Connection", "close");
        throw new BusyError(refusalDetail(refused, "connections"));
      }
    }
    // A parameter the route does not take is refused before anything is read or charged: ignored,
    // it would answer (and bill) something other than what the client asked for.
    const q = url.indexOf("?");
    const queryText = q < 0 ? "" : url.slice(q + 1);
    let query = parsedQuery(def, queryText);
    if (query === undefined) rejectUnknown(def, raw());
    const params = pathParams(def, req.params ?? {}, pathOf(req));
    const body = def.method === "POST" ? await jsonBody(req) : undefined;
    if (query === undefined) {
      query = def.query ? parseParams<Record<string, unknown>>(def.query, raw()) : {};
      keepParsed(def, queryText, query);
    }
    if (def.cost && key) {
      // Refuse an empty balance before doing the work; the exact cost is charged after it.
      const balance = await ctx.ledger.balance(key.id);
      if (balance < 1) {
        throw new InsufficientCreditsError("this key has no credits left", { balance, cost: 1 });
      }
    }
    // A store-reading slot, within the fair share of the request's key and address.
    let freeSlot: (() => void) | undefined;
    if (def.heavy) {
      const got = slots.take(holdersFor(req.socket, client, key?.id));
      if (typeof got !== "function") throw new BusyError(refusalDetail(got, "store-reading slots"));
      freeSlot = got;
    }
    const aborter = new AbortController();
    // A heavy request holds its slot until the response is over, however it ends (sent in full,
    // failed, dropped by the client), and until its handler has returned: buffered bodies of slow
    // readers count against capacity, and a handler stuck on a dead client shows as a taken slot
    // (and in /readyz) rather than vanishing.
    // A charged response is settled at the same moment: by then the bytes that went out are known
    // and so is whether the handler failed.
    let pending = 2;
    const release = () => {
      if (--pending > 0) return;
      if (freeSlot) {
        freeSlot();
        ctx.metrics.inFlight--;
      }
      if (meta.meter) void settle(ctx, meta.meter, res);
    };
    if (freeSlot) ctx.metrics.inFlight++;
    let closed = false;
    // Before the handler: a handler that writes its own response has sent headers when it returns.
    for (const k in rateHeaders) res.setHeader(k, rateHeaders[k]);
    const rc = (signal: AbortSignal): RequestContext => ({
      req,
      res,
      query,
      params,
      body,
      key,
      requestId: String(res.getHeader("X-Request-Id")),
      app: ctx,
      signal,
    });
    // The watchdog (request-intake.ts) destroys a response past its limits; its close aborts the handler.
    const onClosed = () => {
      if (closed) return;
      closed = true;
      if (!res.writableFinished) aborter.abort();
      release();
    };
    res.once("close", onClosed);
    try {
      await respond(def, req, res, meta, rc(aborter.signal), key);
    } catch (e) {
      // Failed on our side with the client still there (not a read stopped by its departure).
      if (meta.meter && !aborter.signal.aborted) meta.meter.fault = true;
      throw e;
    } finally {
      if (res.destroyed) onClosed();
      release();
    }
  }

  async function respond(
    def: RouteDef,
    req: IncomingMessage,
    res: ServerResponse,
    meta: Meta,
    rc: RequestContext,
    key: KeyInfo | undefined,
  ): Promise<void> {
    if (res.destroyed) return;
    const got = def.handler(rc);
    const reply = got instanceof Promise ? await got : got;
    if ("handled" in reply) return;
    if ("npy" in reply) {
      const n = reply.npy;
      const metered = def.cost && key;
      const beforeHead = metered ? () => charge(ctx, def, rc, reply, key, meta, res, n.bytes) : undefined;
      const delivery = metered ? () => meta.meter?.delivery : undefined;
      await streamNpy(req, res, { ...n, signal: rc.signal, beforeHead, delivery });
      return;
    }
    // Nobody is listening any more: no charge, nothing to send.
    if (rc.signal.aborted || res.destroyed) return;
    const prepared = prepareReply(req, reply, def.cost !== undefined);
    if (def.cost && key && prepared.status === 200) {
      if (!(await charge(ctx, def, rc, reply, key, meta, res, prepared.bytes))) return;
      await sendMetered(res, prepared, meta.meter!.delivery);
      return;
    }
    sendPrepared(res, prepared);
  }

  const registered = () => {
    const table = (app as unknown as { handlers: Record<string, Record<string, unknown>> }).handlers;
    return Object.fromEntries(Object.entries(table).map(([m, byPattern]) => [m, Object.keys(byPattern).sort()]));
  };
  // Routes read their query through queryValues (params.ts); polka would parse it once more into
  // req.query, which nothing reads. Handing polka the split URL with no query to parse skips that.
  const route = app.handler as unknown as (req: IncomingMessage, res: ServerResponse, info: PolkaUrl) => void;
  // A warm public file is answered before the router (lean-static.ts), on paths no route claims
  // (by the same two tests the router and onNoMatch apply).
  const router = app as unknown as { find: (method: string, path: string) => unknown };
  const isRouted = (path: string) =>
    routes.some((r) => matches(r, path)) || router.find("GET", path) !== false || router.find("HEAD", path) !== false;
  const lean = leanStatic(ctx, watchdog, queue, vendor, isRouted);
  const handler: Handler = (req, res) => {
    if (!lean(req, res)) route(req, res, splitUrl(req.url ?? "/"));
  };
  return { handler, routes, registered };
}
