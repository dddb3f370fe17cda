// A public file answered from memory (static-cache.ts): the coding chosen by Accept-Encoding,
// then If-None-Match / If-Modified-Since (304), If-Range and Range (206, 416) on the chosen body,
// HEAD. Nothing here touches the disk or waits: a warm file is answered in the request's own turn.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ifNoneMatch, notModifiedSince, parseRange } from "../conditional.ts";
import { chooseCoding } from "../content-coding.ts";
import type { CachedBody, CachedFile } from "./static-cache.ts";

const NOT_SATISFIABLE = JSON.stringify({
  type: "/problems/range-not-satisfiable",
  title: "Range Not Satisfiable",
  status: 416,
});

/** The body of `file` a request gets: a compressed twin when the client accepts it, else identity. */
export function bodyFor(req: IncomingMessage, file: CachedFile): CachedBody {
  if (file.codings.length === 0) return file.identity;
  const coding = chooseCoding(req.headers["accept-encoding"], file.codings);
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
