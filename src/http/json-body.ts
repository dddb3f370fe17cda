// The JSON body of a POST route: read up to a named limit (a larger one is refused, 413, before it
// is read to the end), then parsed; not JSON, or not sent as JSON, is a 400 naming the body.
import type { IncomingMessage } from "node:http";
import { InvalidParameterError, TooLargeError } from "../errors.ts";

/** Largest request body a POST route reads (a search with a detailed polygon fits easily). */
export const MAX_JSON_BODY = 256 * 1024;

export async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const type = String(req.headers["content-type"] ?? "application/json").toLowerCase();
  if (!/^application\/(geo\+)?json\b/.test(type)) {
    req.resume();
    throw new InvalidParameterError("body", "the body must be JSON, sent with Content-Type: application/json");
  }
  const tooLarge = (n: number) =>
    new TooLargeError(
      `the request body is larger than ${MAX_JSON_BODY} bytes`,
      n,
      MAX_JSON_BODY / (1024 * 1024),
      "send a smaller body (a simpler geometry)",
    );
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_JSON_BODY) {
    req.resume();
    throw tooLarge(declared);
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_JSON_BODY) {
      req.resume();
      throw tooLarge(size);
    }
    parts.push(chunk as Buffer);
  }
  const text = Buffer.concat(parts).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidParameterError("body", "the body is not valid JSON");
  }
}
