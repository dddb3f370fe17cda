// The access log's writer: one JSON line per record, handed to the output in batches rather than
// one write per request. Under load a server answers tens of thousands of requests a second; a
// write per line costs a buffer, the stream's bookkeeping and (for a file) a wake-up of the thread
// that writes it, which then takes the core from the thread answering requests. Lines are handed
// over once FLUSH_AT characters are pending or FLUSH_MS after the first pending line, whichever
// comes first, so a quiet server's lines still reach the output within FLUSH_MS. A line is made
// when its record is logged (the record may change afterwards); lines keep their order; closing
// hands over what is pending and waits until the output has taken it.
import { writeSync } from "node:fs";
import type { Writable } from "node:stream";

/** Pending text handed over at once past this many characters. */
const FLUSH_AT = 64 * 1024;
/** The longest a line waits before it is handed over. */
export const FLUSH_MS = 25;

export interface LineLog {
  (record: Record<string, unknown>): void;
  /** Hands over what is pending; for an output of its own, ends it and waits until it is written. */
  close(): Promise<void>;
}

/** The pending text of every open line log, handed over by one exit hook on any other exit. */
const open = new Set<() => void>();
let hooked = false;

/** A line log onto `out`; `owned` says it is this log's alone to end (a file, not stdout). */
export function lineLog(out: Writable, owned: boolean): LineLog {
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (pending === "") return;
    const text = pending;
    pending = "";
    out.write(text);
  };
  // At exit nothing asynchronous runs any more: stdout to a file or pipe is written synchronously
  // anyway, and a file stream's descriptor takes a synchronous write.
  const atExit = () => {
    if (pending === "") return;
    const fd = (out as Writable & { fd?: unknown }).fd;
    if (owned && typeof fd === "number") writeSync(fd, pending);
    else out.write(pending);
    pending = "";
  };
  open.add(atExit);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const f of open) f();
    });
  }
  const log = ((record: Record<string, unknown>) => {
    pending += `${JSON.stringify(record)}\n`;
    if (pending.length > FLUSH_AT) flush();
    // Unref'd: pending lines alone do not keep a process alive that is otherwise done (close()
    // hands them over on a stop, and the exit hook on any other exit).
    else if (timer === undefined) timer = setTimeout(flush, FLUSH_MS).unref();
  }) as LineLog;
  log.close = () => {
    flush();
    open.delete(atExit);
    if (!owned) return Promise.resolve();
    return new Promise<void>((ok) => out.end(ok));
  };
  return log;
}
