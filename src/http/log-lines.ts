// The access log's writer: one JSON line per record, handed to the output once per turn of the
// event loop rather than once per request. Under load a turn answers dozens of requests; giving
// the output (a file stream, or stdout, whose writes to a file or pipe are synchronous) one text a
// turn costs one write where there were dozens, each with its own buffer and bookkeeping. A line
// is made when its record is logged, so the record may change afterwards; lines keep their order;
// and closing hands over what is pending and waits until the output has taken it.
import type { Writable } from "node:stream";

/** Pending text handed over at once past this many characters, not left for the turn's end. */
const FLUSH_AT = 64 * 1024;

export interface LineLog {
  (record: Record<string, unknown>): void;
  /** Hands over what is pending; for an output of its own, ends it and waits until it is written. */
  close(): Promise<void>;
}

/** A line log onto `out`; `owned` says it is this log's alone to end (a file, not stdout). */
export function lineLog(out: Writable, owned: boolean): LineLog {
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    out.write(text);
  };
  const log = ((record: Record<string, unknown>) => {
    pending += `${JSON.stringify(record)}\n`;
    if (pending.length > FLUSH_AT) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }) as LineLog;
  log.close = () => {
    flush();
    if (!owned) return Promise.resolve();
    return new Promise<void>((ok) => out.end(ok));
  };
  return log;
}
