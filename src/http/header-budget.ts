// No response header line gridcast writes is longer than HEADER_LINE_MAX: curl, Python's
// http.client and nginx (8 KiB proxy buffers by default) cannot read longer ones, and a client
// that cannot read the head cannot read the answer. The reply helpers check every line a route
// sets; the one header that carries store metadata, an export's X-SVC-Field, is built within the
// budget: text cut to ATTRIBUTE_MAX_CHARS with a note, and, should it still not fit, its long
// coordinate lists left out, saying so (the /data Zarr view holds them).
import { HeaderTooLargeError } from "../errors.ts";
import { ATTRIBUTE_MAX_CHARS, shownAttribute } from "../store/attribute-budget.ts";

/** Longest response header line ("Name: value"), in bytes. */
export const HEADER_LINE_MAX = 8 * 1024;
/** Lists longer than this are what X-SVC-Field leaves out when it would not fit otherwise. */
const LIST_KEPT = 8;
/** Characters of each string X-SVC-Field keeps when even its lists left out do not make it fit. */
const SHORT_TEXT = 512;

function lineBytes(name: string, value: string | number): number {
  return name.length + 2 + Buffer.byteLength(String(value));
}

/** Throws HeaderTooLargeError (500, before anything is sent) naming a header whose line is too long. */
export function checkHeaderLines(headers: Record<string, string | number>): void {
  for (const name in headers) {
    const bytes = lineBytes(name, headers[name]);
    if (bytes > HEADER_LINE_MAX) {
      const err = new HeaderTooLargeError(
        `the ${name} header of this answer would be ${bytes} bytes, more than the ${HEADER_LINE_MAX} a header line may have`,
        { header: name, limit_bytes: HEADER_LINE_MAX },
      );
      err.logFields = { header: name, header_bytes: bytes };
      throw err;
    }
  }
}

/**
 * The X-SVC-Field value of an export's description: its JSON with every string cut to the
 * attribute budget; when that is still longer than a header line, every list longer than a few
 * entries replaced by its count, first and last entries, named in `omitted`; and should even that
 * not fit, strings cut to SHORT_TEXT. Refused (HeaderTooLargeError) if nothing makes it fit.
 */
export function fieldHeader(field: Record<string, unknown>): string {
  const clip = (max: number) => (_k: string, v: unknown) => (typeof v === "string" ? shownAttribute(v, max) : v);
  const text = JSON.stringify(field, clip(ATTRIBUTE_MAX_CHARS));
  if (lineBytes("X-SVC-Field", text) <= HEADER_LINE_MAX) return text;
  const omitted: string[] = [];
  const shorten = (v: unknown, path: string): unknown => {
    if (Array.isArray(v)) {
      if (v.length <= LIST_KEPT) return v.map((x, i) => shorten(x, `${path}[${i}]`));
      omitted.push(path);
      return { count: v.length, first: v[0], last: v[v.length - 1], omitted: true };
    }
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x, path ? `${path}.${k}` : k)]));
    }
    return v;
  };
  const short = {
    ...(shorten(JSON.parse(text), "") as Record<string, unknown>),
    omitted,
    omitted_note: `lists too long for a ${HEADER_LINE_MAX}-byte header line are given as count, first and last; the /data Zarr view of the group holds every coordinate`,
  };
  let out = JSON.stringify(short);
  if (lineBytes("X-SVC-Field", out) > HEADER_LINE_MAX) out = JSON.stringify(short, clip(SHORT_TEXT));
  checkHeaderLines({ "X-SVC-Field": out });
  return out;
}
