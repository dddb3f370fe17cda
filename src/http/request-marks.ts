// What tells one request's lines apart in the access log: its id and the time it was logged. Both
// are made for every request, so both are cheap: the id is a random per-process prefix and a
// counter (unique within the process by the counter, across processes by the 80 random bits),
// laid out as a UUID so log tooling that expects one keeps working; the log's ISO time is
// formatted once per millisecond, not once per request.
import { randomBytes } from "node:crypto";

const PREFIX = (() => {
  const h = randomBytes(10).toString("hex");
  // 8-4-4-4-12: the last four hex digits of the prefix open the last group, the counter fills it.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-`;
})();
/** The counter fills 12 hex digits: 2^48 requests before it wraps, centuries at any real rate. */
const COUNTER_SPAN = 2 ** 48;
let counter = 0;

/** A new request id: 36 characters of [0-9a-f-], unique within this process. */
export function requestId(): string {
  counter = (counter + 1) % COUNTER_SPAN;
  return PREFIX + counter.toString(16).padStart(12, "0");
}

let isoAt = -1;
let iso = "";

/** Now as an ISO 8601 string (as `new Date().toISOString()`), formatted at most once a millisecond. */
export function isoNow(): string {
  const now = Date.now();
  if (now !== isoAt) {
    isoAt = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}
