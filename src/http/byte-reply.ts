// A bytes response the way object stores answer it, which Zarr clients rely on: strong ETag with
// If-None-Match → 304, single byte ranges (bytes=a-b, a-, -n) → 206 with Content-Range, an
// unsatisfiable range → 416, HEAD with the same headers as GET. Bodies are never content-encoded:
// chunk bytes are already compressed and a client must get them exactly as listed.
import { hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ifNoneMatch, parseRange } from "../conditional.ts";
import { sendProblem, simpleProblem } from "./problem.ts";

export interface ByteReply {
  body: Uint8Array;
  type: string;
  cache: string;
}

export { parseRange };

export function etagOf(body: Uint8Array): string {
  // One-shot: no Hash object per reply.
  return `"${hash("sha1", body, "base64url")}"`;
}

export function sendBytes(req: IncomingMessage, res: ServerResponse, r: ByteReply): void {
  const size = r.body.byteLength;
  const etag = etagOf(r.body);
  res.setHeader("ETag", etag);
  res.setHeader("Cache-Control", r.cache);
  res.setHeader("Accept-Ranges", "bytes");
  if (ifNoneMatch(req, etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  // A range of an older version (If-Range names another ETag) gets the whole new body instead.
  const ifRange = req.headers["if-range"];
  const range = ifRange && ifRange !== etag ? undefined : parseRange(req.headers.range, size);
  if (range === "unsatisfiable") {
    sendProblem(
      res,
      simpleProblem(416, "range-not-satisfiable", `the range lies outside the ${size} bytes of this object`),
      {
        "Content-Range": `bytes */${size}`,
      },
    );
    return;
  }
  const body = range ? r.body.subarray(range.start, range.end + 1) : r.body;
  res.statusCode = range ? 206 : 200;
  if (range) res.setHeader("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
  res.setHeader("Content-Type", r.type);
  res.setHeader("Content-Length", body.byteLength);
  res.end(req.method === "HEAD" ? undefined : body);
}
