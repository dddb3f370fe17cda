// Loaded into a gridcast server the tail bench (bench/public-tail.ts) starts, with
// `node --import ./bench/tail-probe.ts bin/gridcast serve …` and GRIDCAST_TAIL_PROBE naming a
// file: what the server's own process saw while a round ran, written to that file (whole, then
// renamed into place) on SIGUSR2, which also starts the next window. Garbage collections (the
// pause of each), the event loop's delay (a timer armed every millisecond, how late it fired)
// and the CPU the process used. Nothing here runs per request. A signal and a file rather than
// an IPC channel: the launcher restarts a serving process in place (src/cli/young-generation.ts),
// which a channel would not survive (and would prevent).
import { renameSync, writeFileSync } from "node:fs";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";

const file = process.env.GRIDCAST_TAIL_PROBE;
if (file) {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  /** Pause of every collection in the window, ms, and its kind (1 minor, 2 major, 4 incremental, 8 weak callbacks). */
  let pauses: { ms: number; kind: number }[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      pauses.push({ ms: e.duration, kind: (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0 });
  }).observe({ entryTypes: ["gc"] });
  let cpu = process.cpuUsage();
  process.on("SIGUSR2", () => {
    const used = process.cpuUsage(cpu);
    const stats = {
      pauses,
      cpuUs: used.user + used.system,
      loopP50ms: loop.percentile(50) / 1e6,
      loopP99ms: loop.percentile(99) / 1e6,
      loopMaxMs: loop.max / 1e6,
    };
    pauses = [];
    loop.reset();
    cpu = process.cpuUsage();
    writeFileSync(`${file}.part`, JSON.stringify(stats));
    renameSync(`${file}.part`, file);
  });
}
