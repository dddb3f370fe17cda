// A public file answered from memory (static-cache.ts): the coding chosen by Accept-Encoding,
// then If-None-Match / If-Modified-Since (304), If-Range and Range (206, 416) on the chosen body,
// HEAD. Nothing here touches the disk or waits: a warm file is answered in the request's own turn.
import type { IncomingMessage, ServerResponse } from "node:http";
import { memoByText } from "../bounded-map.ts";
import { ifNoneMatch, notModifiedSince, parseRange } from "../conditional.ts";
import { type Chosen, type Coding, chooseCoding } from "../content-coding.ts";
import { preparedLines, setRawHead } from "./raw-head.ts";
import type { CachedBody, CachedFile, LeanHeads } from "./static-cache.ts";

/** Accept-Encoding texts remembered per set of codings: a browser sends the same one every time. */
const CODING_MEMO_MAX = 256;
const CODING_MEMO_TEXT = 256;
const choosers = new Map<string, (acceptEncoding: string) => Chosen>();

/** chooseCoding over `codings`, remembered by header text (one shared memo per set of codings). */
function chooserFor(codings: readonly Coding[]): (acceptEncoding: string) => Chosen {
  const key = codings.join(",");
  let choose = choosers.get(key);
  if (!choose) {
    choose = memoByText((header) => chooseCoding(header, codings), CODING_MEMO_MAX, CODING_MEMO_TEXT);
    choosers.set(key, choose);
  }
  return choose;
}

const NOT_SATISFIABLE = JSON.stringify({
  type: "/problems/range-not-satisfiable",
  title: "Range Not Satisfiable",
  status: 416,
});

/** The body of `file` a request gets: a compressed twin when the client accepts it, else identity. */
export function bodyFor(req: IncomingMessage, file: CachedFile): CachedBody {
  if (file.codings.length === 0) return file.identity;
  const header = req.headers["accept-encoding"];
  if (header === undefined) return file.identity;
  file.choose ??= chooserFor(file.codings);
  const coding = file.choose(header);
  return coding === "identity" ? file.identity : file.coded[coding]!;
}

/**
 * Answers with `file`. `vary` names request headers besides Accept-Encoding the answer depends on
 * (a document whose base URL came from the proxy headers).
 */
export function sendCached(
  req: IncomingMessage,
  res: ServerResponse,
  file: CachedFile,
  cache: string,
  vary?: string,
): void {
  const body = bodyFor(req, file);
  // A cache in between must keep one copy per coding, even of an identity answer.
  if (file.varies) res.setHeader("Vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
  else if (vary) res.setHeader("Vary", vary);
  res.setHeader("Cache-Control", cache);
  res.setHeader("ETag", body.etag);
  res.setHeader("Last-Modified", file.lastModified);
  if (ifNoneMatch(req, body.etag) || notModifiedSince(req, file.mtimeMs)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.setHeader("Content-Type", file.type);
  res.setHeader("Accept-Ranges", "bytes");
  if (body.coding !== "identity") res.setHeader("Content-Encoding", body.coding);
  const size = body.bytes.length;
  // Ranges count bytes of the body as coded (RFC 9110 §14.1.2); a range of another version
  // (If-Range naming another tag or an older date) gets the whole body.
  const ifRange = req.headers["if-range"];
  const current = ifRange === undefined || ifRange === body.etag || ifRange === file.lastModified;
  const span = current ? parseRange(req.headers.range, size) : undefined;
  if (span === "unsatisfiable") {
    res.statusCode = 416;
    res.setHeader("Content-Range", `bytes */${size}`);
    res.setHeader("Content-Type", "application/problem+json");
    res.removeHeader("Content-Encoding");
    res.setHeader("Content-Length", NOT_SATISFIABLE.length);
    res.end(NOT_SATISFIABLE);
    return;
  }
  const bytes = span ? body.bytes.subarray(span.start, span.end + 1) : body.bytes;
  res.statusCode = span ? 206 : 200;
  if (span) res.setHeader("Content-Range", `bytes ${span.start}-${span.end}/${size}`);
  res.setHeader("Content-Length", bytes.length);
  res.end(req.method === "HEAD" ? undefined : bytes);
}

/** The CORS headers every response carries (request-intake.ts sets them on the others). */
export interface CorsHeads {
  allowOrigin: string;
  exposeHeaders: string;
}

/**
 * The header arrays of `body` of `file` answered with Cache-Control `cache`, made on first use and
 * kept on the body. The same headers, in the same order, as the intake and sendCached set one by
 * one: X-Request-Id, CORS, the build, Vary, caching and validators, then (not on a 304) the type,
 * Accept-Ranges, the coding and the length. An entry belongs to one build's cache (or a vendor
 * mount's), so `build` is the same on every call for it.
 */
export function leanHeads(
  file: CachedFile,
  body: CachedBody,
  cache: string,
  build: string | undefined,
  cors: CorsHeads,
): LeanHeads {
  let heads = body.heads?.get(cache);
  if (heads) return heads;
  const common = [
    "X-Request-Id",
    "",
    "Access-Control-Allow-Origin",
    cors.allowOrigin,
    "Access-Control-Expose-Headers",
    cors.exposeHeaders,
  ];
  if (build !== undefined) common.push("X-Gridcast-Build", build);
  if (file.varies) common.push("Vary", "Accept-Encoding");
  common.push("Cache-Control", cache, "ETag", body.etag, "Last-Modified", file.lastModified);
  const ok = [...common, "Content-Type", file.type, "Accept-Ranges", "bytes"];
  if (body.coding !== "identity") ok.push("Content-Encoding", body.coding);
  ok.push("Content-Length", String(body.bytes.length));
  heads = {
    ok,
    notModified: common,
    okLines: preparedLines(ok.slice(2)),
    notModifiedLines: preparedLines(common.slice(2)),
  };
  body.heads ??= new Map();
  body.heads.set(cache, heads);
  return heads;
}

/**
 * Answers a GET or HEAD without Range (the caller sends a Range to sendCached) from memory with the
 * heads above, in one writeHead and one end: 304 when the client's copy is current, else 200.
 * Returns the status and the Content-Length sent (0 for a 304), for the access log.
 */
export function sendLean(
  req: IncomingMessage,
  res: ServerResponse,
  file: CachedFile,
  cache: string,
  build: string | undefined,
  cors: CorsHeads,
  id: string,
): { status: number; bytes: number } {
  const body = bodyFor(req, file);
  const heads = leanHeads(file, body, cache, build, cors);
  if (ifNoneMatch(req, body.etag) || notModifiedSince(req, file.mtimeMs)) {
    if (!setRawHead(req, res, 304, `X-Request-Id: ${id}\r\n`, heads.notModifiedLines)) {
      heads.notModified[1] = id;
      res.writeHead(304, heads.notModified);
    }
    res.end();
    return { status: 304, bytes: 0 };
  }
  if (!setRawHead(req, res, 200, `X-Request-Id: ${id}\r\n`, heads.okLines)) {
    heads.ok[1] = id;
    res.writeHead(200, heads.ok);
  }
  res.end(req.method === "HEAD" ? undefined : body.bytes);
  return { status: 200, bytes: body.bytes.length };
}
