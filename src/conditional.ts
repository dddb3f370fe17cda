// RFC 9110 conditional and range requests, read the same way wherever gridcast answers them: the
// build's static files (published/static.ts) and the byte replies of /data (http/byte-reply.ts).
import type { IncomingMessage } from "node:http";

export type Range = { start: number; end: number } | "unsatisfiable" | undefined;

/** The one range a Range header asks for; undefined when it should be ignored (RFC 9110 §14.2). */
export function parseRange(header: string | undefined, size: number): Range {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (end < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { start, end: Math.min(end, size - 1) };
}

/** Whether If-None-Match names this (strong) ETag, or is "*" (unless `star` is false). */
export function ifNoneMatch(req: IncomingMessage, etag: string, star = true): boolean {
  const inm = req.headers["if-none-match"];
  if (!inm) return false;
  if (inm.trim() === "*") return star;
  return inm.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/**
 * Whether If-Modified-Since says the client's copy is current (RFC 9110 §13.1.3): only without
 * If-None-Match (which takes precedence), only for an HTTP date, compared at whole seconds.
 */
export function notModifiedSince(req: IncomingMessage, mtimeMs: number): boolean {
  if (req.headers["if-none-match"] !== undefined) return false;
  const ims = req.headers["if-modified-since"];
  if (!ims) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}
