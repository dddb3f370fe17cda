// Preloaded into a served process by benches (node --import, see loopDelayEnv): the process's own
// event-loop delay (perf_hooks' histogram, 5 ms resolution), which /healthz times seen from
// another process cannot separate from that process's own scheduling. On SIGUSR2 the figures since
// the last signal are appended to the file GRIDCAST_BENCH_LOOP_DELAY names, one JSON line (ms),
// and the histogram starts again: a bench marks its phases with signals.
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.GRIDCAST_BENCH_LOOP_DELAY;
if (file) {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  process.on("SIGUSR2", () => {
    const ms = (ns: number) => ns / 1e6;
    appendFileSync(
      file,
      `${JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), n: h.count })}\n`,
    );
    h.reset();
  });
}
