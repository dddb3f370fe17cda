// A response head handed to Node ready-made. res.writeHead checks and joins every header on every
// response; for a warm public file the same headers go out thousands of times a second, so the lean
// path checks and joins them once per file (preparedLines) and gives Node the finished head text
// per request (setRawHead), with only the request id, Date and the connection's keep-alive lines
// filled in. Node then writes head and body together exactly as it would after writeHead.
//
// This leans on ServerResponse's internals (its `_header` text and the keep-alive fields it sets
// for each request), which Node has kept for many years but does not promise. So it is used only
// on the Node major the test suite checks it on (test/published/raw-head.test.ts compares its bytes
// with writeHead's for GET, HEAD, 304, keep-alive, Connection: close and HTTP/1.0), and only for a
// plain HTTP/1.1 keep-alive exchange; anything else goes through writeHead as before.
import { type IncomingMessage, type ServerResponse, validateHeaderName, validateHeaderValue } from "node:http";

/** The Node majors whose ServerResponse internals the tests have checked this against. */
const CHECKED_MAJORS = new Set([24]);
export const RAW_HEAD_AVAILABLE = CHECKED_MAJORS.has(Number(process.versions.node.split(".")[0]));

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
 * changed nothing, when this exchange is not a plain HTTP/1.1 keep-alive one on a checked Node: the
 * caller then uses writeHead. Headers set on `res` before (setHeader) would not be sent: the lean
 * path calls this before anything sets one.
 */
export function setRawHead(
  req: IncomingMessage,
  res: ServerResponse,
  status: 200 | 304,
  first: string,
  lines: string,
): boolean {
  if (!RAW_HEAD_AVAILABLE) return false;
  const r = res as unknown as Internals;
  if (
    req.httpVersionMajor !== 1 ||
    req.httpVersionMinor !== 1 ||
    !res.shouldKeepAlive ||
    !res.sendDate ||
    res.headersSent ||
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
