// The EDR `datetime` parameter: an instant, or an interval whose ends may be open (".."), in
// RFC 3339 (a time without zone is UTC; a date alone is its midnight). Matched against valid times.
import { InvalidParameterError } from "../../errors.ts";

export interface TimeFilter {
  /** Inclusive bounds in UTC ms; undefined for an open end. */
  start: number | undefined;
  end: number | undefined;
}

const STAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?([Zz]|[+-]\d{2}:\d{2})?$/;

function instant(text: string): number {
  const m = STAMP.exec(text.trim());
  if (!m) {
    throw new InvalidParameterError(
      "datetime",
      `datetime: "${text.slice(0, 40)}" is not an RFC 3339 time (2026-11-20T12:00:00Z), an interval a/b, or an open interval ../b, a/..`,
    );
  }
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone = "Z"] = m;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${zone.toUpperCase() === "Z" ? "Z" : zone}`;
  const t = Date.parse(iso);
  if (!Number.isFinite(t))
    throw new InvalidParameterError("datetime", `datetime: "${text.slice(0, 40)}" is not a valid time`);
  return t;
}

export function parseDatetime(text: string): TimeFilter {
  const parts = text.split("/");
  if (parts.length === 1) {
    const t = instant(parts[0]);
    return { start: t, end: t };
  }
  if (parts.length !== 2) throw new InvalidParameterError("datetime", "datetime: an interval has two ends, a/b");
  const open = (p: string) => p === ".." || p === "";
  if (open(parts[0]) && open(parts[1])) {
    throw new InvalidParameterError("datetime", "datetime: an interval needs at least one closed end");
  }
  const start = open(parts[0]) ? undefined : instant(parts[0]);
  const end = open(parts[1]) ? undefined : instant(parts[1]);
  if (start !== undefined && end !== undefined && start > end) {
    throw new InvalidParameterError("datetime", "datetime: the interval's start is after its end");
  }
  return { start, end };
}

export function timeMatches(f: TimeFilter | undefined, t: number): boolean {
  if (!f) return true;
  return (f.start === undefined || t >= f.start) && (f.end === undefined || t <= f.end);
}
