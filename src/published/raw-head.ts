// A response head handed to Node ready-made. res.writeHead checks and joins every header on every
// response; for a warm public file the same headers go out thousands of times a second, so the lean
// path checks and joins them once per file (preparedLines) and gives Node the finished head text
// per request (setRawHead), with only the request id, Date and the connection's keep-alive lines
// filled in. Node then writes head and body together exactly as it would after writeHead.
//
// This leans on ServerResponse's internals (its `_header` text and the keep-alive fields it sets
// for each request), which Node has kept for many years but does not promise. So it is used only
// on the Node major the test suite checks it on (test/published/raw-head.test.ts compares its bytes
// with writeHead's for GET, HEAD, 304, keep-alive, Connection: close and HTTP/1.0), only for a
// plain HTTP/1.1 keep-alive exchange, and only once this process has checked it on its own Node
// (checkRawHead: the same answers both ways over loopback, byte for byte, before the server
// listens). Anything else goes through writeHead as before.
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
  validateHeaderName,
  validateHeaderValue,
} from "node:http";
import { connect } from "node:net";

/** The Node majors whose ServerResponse internals the tests have checked this against. */
const CHECKED_MAJORS = new Set([24]);
const CHECKED_NODE = CHECKED_MAJORS.has(Number(process.versions.node.split(".")[0]));
/** Whether setRawHead hands heads over: on a checked major, once checkRawHead has passed. */
let inUse = false;

export function rawHeadInUse(): boolean {
  return inUse;
}

/** Whether this Node is one the raw head is meant for (a failed check on it is worth a warning). */
export function rawHeadExpected(): boolean {
  return CHECKED_NODE;
}

/** The fields of ServerResponse this reads or sets (all set by Node for every response). */
interface Internals {
  _header: string | null;
  _keepAliveTimeout?: number;
  _defaultKeepAlive?: boolean;
  _maxRequestsPerSocket?: number;
  _removedConnection?: boolean;
  maxRequestsOnConnectionReached?: boolean;
}

/** `name: value\r\n` lines of a flat [name, value, …] list, each checked as writeHead would. */
export function preparedLines(flat: readonly string[]): string {
  let out = "";
  for (let i = 0; i < flat.length; i += 2) {
    validateHeaderName(flat[i]);
    validateHeaderValue(flat[i], flat[i + 1]);
    out += `${flat[i]}: ${flat[i + 1]}\r\n`;
  }
  return out;
}

let dateAt = -1;
let dateText = "";

/** The Date header's value for now (IMF-fixdate), formatted at most once a second. */
export function httpDate(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== dateAt) {
    dateAt = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

const keepAliveTails = new Map<number, string>();

/** The Connection and Keep-Alive lines Node writes for a keep-alive answer with this timeout (ms). */
function keepAliveTail(timeoutMs: number): string {
  let tail = keepAliveTails.get(timeoutMs);
  if (tail === undefined) {
    tail = `Connection: keep-alive\r\n${timeoutMs ? `Keep-Alive: timeout=${Math.floor(timeoutMs / 1000)}\r\n` : ""}`;
    keepAliveTails.set(timeoutMs, tail);
  }
  return tail;
}

const STATUS_LINES: Record<number, string> = { 200: "HTTP/1.1 200 OK\r\n", 304: "HTTP/1.1 304 Not Modified\r\n" };

/**
 * Sets `res`'s head to the status line, `first` (already formatted lines), `lines` (from
 * preparedLines), Date and the keep-alive lines, for the res.end that follows. Returns false, having
 * changed nothing, when the raw head is not in use or this exchange is not a plain HTTP/1.1
 * keep-alive one: the caller then uses writeHead. Headers set on `res` before (setHeader) would not
 * be sent: the lean path calls this before anything sets one.
 */
export function setRawHead(
  req: IncomingMessage,
  res: ServerResponse,
  status: 200 | 304,
  first: string,
  lines: string,
): boolean {
  return inUse && applyRawHead(req, res, status, first, lines);
}

type HeadSetter = typeof setRawHead;

function applyRawHead(...[req, res, status, first, lines]: Parameters<HeadSetter>): boolean {
  const r = res as unknown as Internals;
  if (
    req.httpVersionMajor !== 1 ||
    req.httpVersionMinor !== 1 ||
    !res.shouldKeepAlive ||
    !res.sendDate ||
    r._header !== null ||
    r._removedConnection ||
    r.maxRequestsOnConnectionReached ||
    r._defaultKeepAlive !== true ||
    (r._maxRequestsPerSocket ?? 0) > 0
  )
    return false;
  res.statusCode = status;
  r._header = `${STATUS_LINES[status]}${first}${lines}Date: ${httpDate()}\r\n${keepAliveTail(r._keepAliveTimeout ?? 0)}\r\n`;
  return true;
}

/** The answers the check compares, and the headers they carry. */
const PROBE_BODY = Buffer.from("gridcast raw head check\r\n\r\n");
const PROBE_HEADS = ["Cache-Control", "public, max-age=60", "ETag", '"p"', "Content-Type", "text/plain"];
const PROBE_OK = [...PROBE_HEADS, "Content-Length", String(PROBE_BODY.length)];
const PROBE_REQUESTS = (way: string) =>
  `GET /${way}/a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /${way}/b HTTP/1.1\r\nHost: x\r\n\r\n` +
  `GET /${way}/304 HTTP/1.1\r\nHost: x\r\n\r\nGET /end HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
const CHECK_MS = 5000;

let checked: Promise<{ ok: boolean; why?: string }> | undefined;

/**
 * Checks the raw head on this process's Node: a GET, a HEAD and a 304 on one keep-alive
 * connection of a loopback server, answered once with `set` and once with writeHead, must be the
 * same bytes (Date aside). Turns the raw head on when they are; once per process (a `set` other
 * than the real one is checked afresh and turns nothing on: the tests' broken setters).
 */
export function checkRawHead(set: HeadSetter = applyRawHead): Promise<{ ok: boolean; why?: string }> {
  if (!CHECKED_NODE) return Promise.resolve({ ok: false, why: `was not made for Node ${process.versions.node}` });
  if (set !== applyRawHead) return compareWays(set);
  checked ??= compareWays(set).then((r) => {
    inUse = r.ok;
    return r;
  });
  return checked;
}

async function compareWays(set: HeadSetter): Promise<{ ok: boolean; why?: string }> {
  let took = 0;
  const server = createServer((req, res) => {
    const notModified = req.url?.endsWith("/304") ?? false;
    const status = notModified ? 304 : 200;
    const flat = notModified ? PROBE_HEADS : PROBE_OK;
    const raw =
      req.url?.startsWith("/raw/") === true && set(req, res, status, "X-Request-Id: c\r\n", preparedLines(flat));
    if (raw) took++;
    else res.writeHead(status, ["X-Request-Id", "c", ...flat]);
    res.end(notModified || req.method === "HEAD" ? undefined : PROBE_BODY);
  });
  const timer = setTimeout(() => server.closeAllConnections(), CHECK_MS);
  try {
    await new Promise<void>((ok, fail) => server.listen(0, "127.0.0.1", ok).once("error", fail));
    const port = (server.address() as { port: number }).port;
    const raw = await exchange(port, PROBE_REQUESTS("raw"));
    const plain = await exchange(port, PROBE_REQUESTS("plain"));
    if (took !== 3) return { ok: false, why: `the raw way answered ${took} of 3 probe requests` };
    if (raw !== plain) return { ok: false, why: "its bytes differ from writeHead's" };
    return { ok: true };
  } catch (e) {
    return { ok: false, why: `loopback: ${(e as Error).message}` };
  } finally {
    clearTimeout(timer);
    server.close();
  }
}

/** Every byte a connection returns for `text`, until the server closes it; Date lines blanked. */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    // Not half-closed: the last request's Connection: close ends the exchange.
    const s = connect(port, "127.0.0.1", () => s.write(text));
    s.on("data", (d) => chunks.push(d));
    s.on("close", () =>
      ok(
        Buffer.concat(chunks)
          .toString("latin1")
          .replace(/\r\nDate: [^\r]+\r\n/g, "\r\nDate: -\r\n"),
      ),
    );
    s.on("error", fail);
  });
}
