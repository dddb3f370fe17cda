// A route's Reply as it goes out: status, headers and body prepared (JSON or bytes, the ETag and
// If-None-Match settled before anything is charged), then sent whole, or through the Delivery of a
// charged response, which counts what the kernel took.
import { hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { BoundedMap } from "../bounded-map.ts";
import { ifNoneMatch } from "../conditional.ts";
import { chooseCoding, codedEtag, compressibleType } from "../content-coding.ts";
import { compressDynamic, type DynamicCoding } from "./compress-reply.ts";
import type { Delivery } from "./delivery.ts";
import { checkHeaderLines } from "./header-budget.ts";
import type { Reply } from "./route.ts";

export interface Prepared {
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
const etagMemo = new BoundedMap<string, string>(ETAG_MEMO_MAX);
/** Text replies smaller than this go out as they are: compressing them saves less than it costs. */
export const DYNAMIC_COMPRESS_MIN_BYTES = 1024;

function etagOf(body: string | Buffer): string {
  if (typeof body !== "string" || body.length > ETAG_MEMO_TEXT) return `"${hash("sha1", body, "base64url")}"`;
  let tag = etagMemo.get(body);
  if (tag === undefined) {
    tag = `"${hash("sha1", body, "base64url")}"`;
    etagMemo.set(body, tag);
  }
  return tag;
}

/**
 * Status, headers and body of a reply, with If-None-Match settled (304) before anything is charged.
 * On a metered route only an ETag the client names answers 304 (free: it holds that body, which
 * it was charged for); `*` names none, so there it is not honoured and the reply is a charged 200.
 */
export function prepareReply(
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
  // A text body of an unmetered reply may go out compressed (a metered one is billed by the bytes
  // of its body as listed, so it never is): Vary says so whatever this body's size.
  const compressible = !metered && status === 200 && compressibleType(headers["Content-Type"]);
  // Added to what the route varies on (the proxy headers a base URL came from), never in its place.
  if (compressible) headers.Vary = headers.Vary ? `${headers.Vary}, Accept-Encoding` : "Accept-Encoding";
  if (status === 200 && ("json" in reply || reply.cache)) {
    // The one-shot hash of the UTF-8 text: the same digest as hashing its bytes, without a Hash
    // object or a copy of the body per reply.
    let etag = etagOf(body);
    let coding: DynamicCoding | undefined;
    if (compressible && byteLengthOf(body) >= DYNAMIC_COMPRESS_MIN_BYTES) {
      const chosen = chooseCoding(req.headers["accept-encoding"], ["br", "gzip"]);
      if (chosen !== "identity") {
        coding = chosen;
        etag = codedEtag(etag, chosen);
      }
    }
    headers.ETag = etag;
    if (ifNoneMatch(req, etag, !metered)) {
      delete headers["Content-Type"];
      return { status: 304, body: "", bytes: 0, headers };
    }
    if (coding) {
      body = compressDynamic(body, coding, etag);
      headers["Content-Encoding"] = coding;
    }
  }
  return { status, body, bytes: byteLengthOf(body), headers };
}

/**
 * Bytes of a body. A text's UTF-8 length is counted once per text object: a warm /point answers
 * the same text again and again, and counting is a pass over it each time.
 */
let lastText = "";
let lastTextBytes = 0;

function byteLengthOf(body: string | Buffer): number {
  if (typeof body !== "string") return body.length;
  if (body !== lastText) {
    lastText = body;
    lastTextBytes = Buffer.byteLength(body);
  }
  return lastTextBytes;
}

export function sendPrepared(res: ServerResponse, p: Prepared): void {
  checkHeaderLines(p.headers);
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
export async function sendMetered(res: ServerResponse, p: Prepared, delivery: Delivery): Promise<void> {
  checkHeaderLines(p.headers);
  for (const k in p.headers) res.setHeader(k, p.headers[k]);
  res.statusCode = p.status;
  res.setHeader("Content-Length", p.bytes);
  const body = typeof p.body === "string" ? Buffer.from(p.body) : p.body;
  if (await delivery.write(body)) res.end();
  else res.destroy();
}
