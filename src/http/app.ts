// The polka application: request ids, access log, CORS, method and body rules, the auth gate,
// the concurrency cap, metering, problem+json for every error, and static files from the
// published build (then the viewer) for everything no route claims.
import { hash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import polka from "polka";
import sirv from "sirv";
import { ifNoneMatch } from "../conditional.ts";
import {
  BusyError,
  GridcastError,
  InsufficientCreditsError,
  InvalidParameterError,
  RateLimitedError,
} from "../errors.ts";
import { gate, type TakeToken } from "./auth.ts";
import type { AppContext, KeyInfo } from "./context.ts";
import { Delivery, flatRule } from "./delivery.ts";
import { dataWaitersMax } from "./fd-limit.ts";
import { streamNpy } from "./npy-stream.ts";
import { decodeSegment, parseParams, queryValues } from "./params.ts";
import { problemFor, sendProblem, simpleProblem } from "./problem.ts";
import { isPublicLocation, publicPath } from "./public-path.ts";
import { TokenWaiter } from "./rate-wait.ts";
import { type Handler, polkaPattern, type Reply, type RequestContext, type RouteDef } from "./route.ts";
import { Watchdog } from "./watchdog.ts";

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

const MODULES = resolve(import.meta.dirname, "../../node_modules");

/** Front-end packages served from node_modules so docs and the viewer work offline. */
export const VENDOR_MOUNTS = [
  { prefix: "/vendor/swagger-ui/", dir: join(MODULES, "swagger-ui-dist") },
  { prefix: "/vendor/redoc/", dir: join(MODULES, "redoc/bundles") },
  { prefix: "/vendor/leaflet/", dir: join(MODULES, "leaflet/dist") },
  { prefix: "/vendor/world-atlas/", dir: join(MODULES, "world-atlas") },
  { prefix: "/vendor/topojson-client/", dir: join(MODULES, "topojson-client/dist") },
  { prefix: "/vendor/pmtiles/", dir: join(MODULES, "pmtiles/dist") },
];

interface Meta {
  route: string;
  key?: string;
  charged?: number;
  /** A metered response that was charged: settled once it is over (see settle). */
  meter?: Meter;
}

interface Meter {
  keyId: string;
  requestId: string;
  /** What the charge debited: the cost of the whole body. */
  charged: number;
  /** The whole body's length. */
  bytes: number;
  delivery: Delivery;
  /** The response failed on the server's side (a store read after the headers): nothing is owed. */
  fault: boolean;
}

const metaOf = new WeakMap<IncomingMessage, Meta>();

export interface App {
  handler: Handler;
  routes: RouteDef[];
  /** Patterns polka actually routes, by method (read from its routing table). */
  registered: () => Record<string, string[]>;
}

export function createApp(ctx: AppContext, routes: RouteDef[]): App {
  const webStatic = sirv(ctx.webDir, { dev: false, etag: true, dotfiles: false });
  const vendor = VENDOR_MOUNTS.map(({ prefix, dir }) => ({
    prefix,
    serve: sirv(dir, { dev: false, etag: true, maxAge: 86400 }),
  }));

  const waiter = new TokenWaiter(
    ctx.ledger,
    ctx.settings.data_rate_wait_ms,
    1024,
    dataWaitersMax(ctx.settings.data_rate_waiters_max),
  );
  ctx.metrics.dataWaiting = () => waiter.total;
  ctx.metrics.dataWaitersMax = waiter.maxTotal;
  const watchdog = new Watchdog({ deadlineMs: ctx.settings.response_timeout_ms, stallMs: ctx.settings.send_stall_ms });

  const onError = (err: unknown, req: IncomingMessage, res: ServerResponse) => {
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

  const onNoMatch = (req: IncomingMessage, res: ServerResponse) => {
    const path = pathOf(req);
    const other = routes.find((r) => matches(r, path));
    if (other) {
      sendProblem(res, simpleProblem(405, "method-not-allowed", `${req.method} is not allowed here`), {
        Allow: "GET, HEAD, OPTIONS",
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
    // sirv (the viewer and vendor files) answers "bytes=-n" with the first n+1 bytes as a 206:
    // wrong content. Without the header the whole file goes out (200), which RFC 9110 allows for
    // any Range request. The build's own files (published/static.ts) answer suffixes correctly.
    const noSuffixRange = () => {
      if (/^\s*bytes=\s*-/i.test(req.headers.range ?? "")) delete req.headers.range;
    };
    const notFound = () => sendProblem(res, simpleProblem(404, "not-found", "no such resource", { instance: path }));
    // Decide on the decoded, normalised path, and serve exactly that path (see public-path.ts).
    const decided = publicPath(path);
    if (!decided.ok) {
      if (decided.status === 400) sendProblem(res, simpleProblem(400, "bad-path", "the request path is not valid"));
      else notFound();
      return;
    }
    const query = req.url?.includes("?") ? req.url.slice(req.url.indexOf("?")) : "";
    req.url = decided.url + query;
    const mount = vendor.find((m) => decided.path.startsWith(m.prefix));
    if (mount) {
      req.url = decided.url.slice(mount.prefix.length - 1) + query;
      noSuffixRange();
      mount.serve(req, res, notFound);
      return;
    }
    ctx.published.current().then(
      (snap) => {
        const fallback = () => {
          noSuffixRange();
          webStatic(req, res, notFound);
        };
        if (snap) snap.serveStatic(req, res, decided.path, fallback, (e) => onError(e, req, res), isPublicLocation);
        else fallback();
      },
      (e) => onError(e, req, res),
    );
  };

  const app = polka({ onError, onNoMatch });

  // Pipelined requests on one connection are handled one after another, as their responses go
  // out anyway: otherwise one connection with hundreds of requests in one packet would open
  // hundreds of files at once, and the descriptor budget per connection (fd-limit.ts) would not hold.
  const lastOn = new WeakMap<IncomingMessage["socket"], Promise<void>>();
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const before = lastOn.get(req.socket);
    lastOn.set(req.socket, new Promise<void>((ok) => res.once("close", ok)));
    // When the connection dies, every response queued on it closes at once: the requests behind
    // a dropped one are not started (they would all open their files together, for nobody).
    if (before) before.then(() => (req.socket.destroyed ? undefined : next()));
    else next();
  });

  // Every request: id, log, CORS, method and body rules.
  app.use((req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const started = process.hrtime.bigint();
    const id = randomUUID();
    const meta: Meta = { route: "unmatched" };
    const urlPath = (req.url ?? "").split("?")[0];
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
        ...(meta.route === "static" || meta.route === "unmatched" ? { path: urlPath.slice(0, 512) } : {}),
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
    if ((req.method === "GET" || req.method === "HEAD") && hasBody) {
      req.resume();
      sendProblem(res, simpleProblem(400, "body-not-allowed", "GET and HEAD requests must not carry a body"), {
        Connection: "close",
      });
      return;
    }
    next();
  });

  for (const def of routes) {
    const handler = (req: IncomingMessage & { params?: Record<string, string> }, res: ServerResponse) => {
      const meta = metaOf.get(req)!;
      meta.route = def.path;
      handle(def, req, res, meta).catch((e) => onError(e, req, res));
    };
    const pattern = polkaPattern(def.path);
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
    const rawQuery = queryValues(req.url ?? "");
    let key: KeyInfo | undefined;
    let rateHeaders: Record<string, string> = {};
    if (def.auth !== "public") {
      let take: TakeToken | undefined;
      if (def.rateLimit === "wait") {
        const gone = new AbortController();
        res.once("close", () => gone.abort());
        take = (id, rate, burst) => waiter.take(id, rate, burst, gone.signal);
      }
      const gated = gate(req, rawQuery, def.auth, ctx.ledger, take);
      const g = gated instanceof Promise ? await gated : gated;
      key = g.key;
      rateHeaders = g.rateHeaders;
      meta.key = key.id;
    }
    // A parameter the route does not take is refused before anything is read or charged: ignored,
    // it would answer (and bill) something other than what the client asked for.
    rejectUnknown(def, rawQuery);
    const params = pathParams(def, req.params ?? {}, pathOf(req));
    const query = def.query ? parseParams<Record<string, unknown>>(def.query, rawQuery) : {};
    if (def.cost && key) {
      // Refuse an empty balance before doing the work; the exact cost is charged after it.
      const balance = await ctx.ledger.balance(key.id);
      if (balance < 1) {
        throw new InsufficientCreditsError("this key has no credits left", { balance, cost: 1 });
      }
    }
    if (def.heavy && ctx.metrics.inFlight >= ctx.settings.max_heavy_requests) {
      throw new BusyError("the server is busy; retry shortly");
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
      if (def.heavy) ctx.metrics.inFlight--;
      if (meta.meter) void settle(meta.meter, res);
    };
    if (def.heavy) ctx.metrics.inFlight++;
    let closed = false;
    // Before the handler: a handler that writes its own response has sent headers when it returns.
    for (const k in rateHeaders) res.setHeader(k, rateHeaders[k]);
    const rc = (signal: AbortSignal): RequestContext => ({
      req,
      res,
      query,
      params,
      key,
      requestId: String(res.getHeader("X-Request-Id")),
      app: ctx,
      signal,
    });
    // The watchdog (above) destroys a response past its limits; its close aborts the handler.
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
      const beforeHead = metered ? () => charge(def, rc, reply, key, meta, res, n.bytes) : undefined;
      const delivery = metered ? () => meta.meter?.delivery : undefined;
      await streamNpy(req, res, { ...n, signal: rc.signal, beforeHead, delivery });
      return;
    }
    // Nobody is listening any more: no charge, nothing to send.
    if (rc.signal.aborted || res.destroyed) return;
    const prepared = prepareReply(req, reply, def.cost !== undefined);
    if (def.cost && key && prepared.status === 200) {
      if (!(await charge(def, rc, reply, key, meta, res, prepared.bytes))) return;
      await sendMetered(res, prepared, meta.meter!.delivery);
      return;
    }
    sendPrepared(res, prepared);
  }

  /**
   * Charge a metered reply that is about to be sent: the cost of the whole body, debited at once
   * (a balance that does not cover it is a 402 and nothing goes out). False when the client went
   * away meanwhile: nothing should be sent, and the settlement gives everything back. The body
   * then goes out through a Delivery, which counts what the kernel took; a response that does not
   * finish is settled down to what that part costs by the same rule (see settle).
   */
  async function charge(
    def: RouteDef,
    rc: RequestContext,
    reply: Reply,
    key: KeyInfo,
    meta: Meta,
    res: ServerResponse,
    bytes: number,
  ): Promise<boolean> {
    if (rc.signal.aborted || res.destroyed) return false;
    const charged = await ctx.ledger.charge({
      keyId: key.id,
      cost: def.cost!(rc, reply),
      route: def.path,
      item: def.item?.(rc) ?? "",
      bytes,
      requestId: rc.requestId,
    });
    ctx.metrics.creditsCharged += charged.charged;
    const rule = def.meterRule?.(rc, reply, charged.charged) ?? flatRule(charged.charged);
    meta.meter = {
      keyId: key.id,
      requestId: rc.requestId,
      charged: charged.charged,
      bytes,
      delivery: new Delivery(res, rc.signal, rule),
      fault: false,
    };
    if (res.destroyed) return false;
    meta.charged = charged.charged;
    res.setHeader("X-Credits-Charged", String(charged.charged));
    res.setHeader("X-Credits-Remaining", String(charged.remaining));
    return true;
  }

  /**
   * Once a charged response is over: one that finished keeps its charge; one cut short keeps what
   * the body bytes the kernel took cost (nothing when none did, or when the server failed it) and
   * gets the rest back, its usage row recording the bytes sent.
   */
  async function settle(m: Meter, res: ServerResponse): Promise<void> {
    if (res.writableFinished && !m.fault) return;
    const sent = m.delivery.sent;
    const keep = m.fault ? 0 : Math.min(m.charged, m.delivery.cost);
    const entry = { request_id: m.requestId, key_id: m.keyId, bytes_sent: sent, of_bytes: m.bytes };
    try {
      const returned = await ctx.ledger.settle(m.keyId, m.requestId, keep, sent);
      ctx.metrics.creditsCharged -= returned;
      ctx.log({
        level: "info",
        event: "settled",
        ...entry,
        credits: keep,
        returned,
        ...(m.fault ? { fault: true } : {}),
      });
    } catch (e) {
      ctx.log({ level: "error", event: "settle-failed", ...entry, credits: keep, error: describe(e) });
    }
  }

  const registered = () => {
    const table = (app as unknown as { handlers: Record<string, Record<string, unknown>> }).handlers;
    return Object.fromEntries(Object.entries(table).map(([m, byPattern]) => [m, Object.keys(byPattern).sort()]));
  };
  // Routes read their query through queryValues (params.ts); polka would parse it once more into
  // req.query, which nothing reads. Handing polka the split URL with no query to parse skips that.
  const route = app.handler as unknown as (req: IncomingMessage, res: ServerResponse, info: PolkaUrl) => void;
  const handler: Handler = (req, res) => route(req, res, splitUrl(req.url ?? "/"));
  return { handler, routes, registered };
}

const NO_PARAMS = new Set<string>();
const paramNames = new WeakMap<object, Set<string>>();

/** InvalidParameterError naming the first query parameter the route does not declare. */
export function rejectUnknown(def: RouteDef, raw: Map<string, string[]>): void {
  if (raw.size === 0) return;
  let known = NO_PARAMS;
  if (def.query) {
    known = paramNames.get(def.query) ?? new Set(Object.keys((def.query as { properties?: object }).properties ?? {}));
    paramNames.set(def.query, known);
  }
  for (const name of raw.keys()) {
    if (known.has(name)) continue;
    const takes = known.size ? `it takes ${[...known].join(", ")}` : "it takes none";
    throw new InvalidParameterError(name, `unknown query parameter "${name.slice(0, 40)}" for this route; ${takes}`);
  }
}

function pathParams(def: RouteDef, raw: Record<string, string>, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    // polka's "*" param holds one segment only; the {key+} value is cut from the raw path below.
    if (name !== "*" && name !== "wild") out[name] = decodeSegment(name, value);
  }
  if (/\{\w+\+\}$/.test(def.path))
    out.key = path
      .split("/")
      .slice(def.path.split("/").length - 1)
      .join("/");
  if (def.pathParams) {
    const asMap = new Map(Object.entries(out).map(([k, v]) => [k, [v]] as [string, string[]]));
    return parseParams<Record<string, string>>(def.pathParams, asMap);
  }
  return out;
}

interface Prepared {
  status: number;
  /** JSON and text stay strings: handed to res.end as one, they leave in one write with the head. */
  body: string | Buffer;
  /** Length of the body in bytes (what Content-Length says and the usage row records). */
  bytes: number;
  headers: Record<string, string>;
}

/**
 * ETags of the text bodies answered last, by body: a warm /point answers the same few hundred
 * bytes again and again, and a Map lookup of the text costs a fraction of its SHA-1. The tag is a
 * function of the body alone, so a remembered one is the one hashing would give. Bounded: once
 * full it starts again empty.
 */
const ETAG_MEMO_MAX = 1024;
/** Bodies longer than this are hashed every time (hashing dwarfs a lookup there anyway). */
const ETAG_MEMO_TEXT = 4096;
const etagMemo = new Map<string, string>();

function etagOf(body: string | Buffer): string {
  if (typeof body !== "string" || body.length > ETAG_MEMO_TEXT) return `"${hash("sha1", body, "base64url")}"`;
  let tag = etagMemo.get(body);
  if (tag === undefined) {
    tag = `"${hash("sha1", body, "base64url")}"`;
    if (etagMemo.size >= ETAG_MEMO_MAX) etagMemo.clear();
    etagMemo.set(body, tag);
  }
  return tag;
}

/**
 * Status, headers and body of a reply, with If-None-Match settled (304) before anything is charged.
 * On a metered route only an ETag the client names answers 304 (free: it holds that body, which
 * it was charged for); `*` names none, so there it is not honoured and the reply is a charged 200.
 */
function prepareReply(
  req: IncomingMessage,
  reply: Exclude<Reply, { handled: true } | { npy: unknown }>,
  metered: boolean,
): Prepared {
  let body: string | Buffer;
  const headers: Record<string, string> = {};
  if ("json" in reply) {
    body = reply.text ?? JSON.stringify(reply.json);
    headers["Content-Type"] = "application/json; charset=utf-8";
  } else {
    body =
      typeof reply.body === "string"
        ? reply.body
        : Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength);
    headers["Content-Type"] = reply.type;
  }
  if (reply.headers) Object.assign(headers, reply.headers);
  headers["Cache-Control"] = reply.cache ?? "no-store";
  const status = reply.status ?? 200;
  if (status === 200 && ("json" in reply || reply.cache)) {
    // The one-shot hash of the UTF-8 text: the same digest as hashing its bytes, without a Hash
    // object or a copy of the body per reply.
    const etag = etagOf(body);
    headers.ETag = etag;
    if (ifNoneMatch(req, etag, !metered)) {
      delete headers["Content-Type"];
      return { status: 304, body: "", bytes: 0, headers };
    }
  }
  return { status, body, bytes: typeof body === "string" ? Buffer.byteLength(body) : body.length, headers };
}

function sendPrepared(res: ServerResponse, p: Prepared): void {
  for (const k in p.headers) res.setHeader(k, p.headers[k]);
  res.statusCode = p.status;
  if (p.status === 304) {
    res.end();
    return;
  }
  res.setHeader("Content-Length", p.bytes);
  res.end(p.body);
}

/** A charged 200 whose body goes out through its Delivery, which counts what the kernel took. */
async function sendMetered(res: ServerResponse, p: Prepared, delivery: Delivery): Promise<void> {
  for (const k in p.headers) res.setHeader(k, p.headers[k]);
  res.statusCode = p.status;
  res.setHeader("Content-Length", p.bytes);
  const body = typeof p.body === "string" ? Buffer.from(p.body) : p.body;
  if (await delivery.write(body)) res.end();
  else res.destroy();
}

/** What polka takes from @polka/url's parse: the same fields, with `query` left unparsed. */
interface PolkaUrl {
  _raw: string;
  href: string;
  path: string;
  pathname: string;
  search: string | null;
  query: null;
}

function splitUrl(url: string): PolkaUrl {
  const q = url.indexOf("?", 1);
  return {
    _raw: url,
    href: url,
    path: url,
    pathname: q < 0 ? url : url.slice(0, q),
    search: q < 0 ? null : url.slice(q),
    query: null,
  };
}

function pathOf(req: IncomingMessage): string {
  const u = req.url ?? "/";
  const q = u.indexOf("?");
  return q < 0 ? u : u.slice(0, q);
}

function matches(def: RouteDef, path: string): boolean {
  const parts = def.path.split("/").map((seg) => {
    if (/^\{\w+\+\}$/.test(seg)) return ".+";
    if (/^\{\w+\}$/.test(seg)) return "[^/]+";
    return seg.replace(/[.*+?^$()|[\]\\{}]/g, "\\$&");
  });
  return new RegExp(`^${parts.join("/")}$`).test(path);
}

function describe(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { name: err.name, message: err.message, cause: String(err.cause ?? "") };
  return { message: String(err) };
}
