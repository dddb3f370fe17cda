// Build progress on stderr: on a terminal one line redrawn in place (bar, tiles/s, ETA); in a log
// (CI, a batch job) a plain line every few seconds, so logs stay readable.

export interface Progress {
  add(tiles: number): void;
  finish(): void;
}

export interface ProgressOptions {
  total: number;
  label: string;
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Interval of the plain lines when the stream is not a terminal. */
  logEveryMs?: number;
}

const REDRAW_MS = 100;
const BAR = 24;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

export function createProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const every = tty ? REDRAW_MS : (opts.logEveryMs ?? 5000);
  const started = performance.now();
  let done = 0;
  let shownAt = started;

  const line = (): string => {
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    // The plan's count is exact (256 px tiles, rendered or linked); should work ever outrun it,
    // the count done is the total, so the line never shows more than 100 % or an ETA below zero.
    const total = Math.max(opts.total, done);
    const frac = total > 0 ? done / total : 1;
    const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
    const stats = `${done}/${total} tiles ${Math.round(rate)} tiles/s ETA ${duration(eta)}`;
    if (!tty) return `${opts.label}: ${(frac * 100).toFixed(0)}% ${stats}\n`;
    const fill = Math.round(frac * BAR);
    return `\r\x1b[K${opts.label} [${"#".repeat(fill)}${"-".repeat(BAR - fill)}] ${(frac * 100).toFixed(0).padStart(3)}% ${stats}`;
  };

  return {
    add(tiles) {
      done += tiles;
      const now = performance.now();
      if (now - shownAt >= every) {
        shownAt = now;
        stream.write(line());
      }
    },
    finish() {
      if (tty) stream.write(`${line()}\n`);
    },
  };
}
