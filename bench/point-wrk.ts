// /point warm against /healthz on the same server, both driven by wrk (an external C client, so
// the load generator is not the bottleneck the way a JavaScript one is). Target: ≥ 0.8.
// Rounds alternate healthz, point, point with the key cache off… so drifting machine load hits
// all alike; the third shows in the same run what the key cache saves (a ledger lookup on the
// sqlite reader thread per request).
//   node bench/point-wrk.ts [seconds per round, default 10] [rounds, default 2]
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { KEY_CACHE_TTL_MS, type KeyCachingLedger } from "../src/ledger/key-cache.ts";
import { type BenchRow, benchServer, benchStore } from "./lib.ts";

const run$ = promisify(execFile);

interface Wrk {
  rps: number;
  /** Server CPU (all threads of this process; wrk runs apart) per request, µs. */
  cpuUs: number;
  non2xx: number;
  errors: number;
  p50: string;
  p99: string;
}

async function wrk(url: string, seconds: number, headers: string[] = []): Promise<Wrk> {
  const args = ["-t2", "-c32", `-d${seconds}s`, "--latency", ...headers.flatMap((h) => ["-H", h]), url];
  const cpu0 = process.cpuUsage();
  const { stdout } = await run$("wrk", args, { maxBuffer: 1 << 20 });
  const cpu = process.cpuUsage(cpu0);
  const num = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? 0);
  const requests = num(/(\d+) requests in/);
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    cpuUs: requests ? (cpu.user + cpu.system) / requests : 0,
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    p50: /\n\s+50%\s+(\S+)/.exec(stdout)?.[1] ?? "?",
    p99: /\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? "?",
  };
}

export async function run(seconds = 10, rounds = 2): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const srv = await benchServer(store, { max_heavy_requests: 1000 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const pointUrl = `${srv.url}/point?lat=48.1&lon=11.6&var=t2m`;
    const warm = await fetch(pointUrl, { headers: { "X-API-Key": key } });
    if (warm.status !== 200) throw new Error(`/point answered ${warm.status}: ${await warm.text()}`);
    const cache = srv.ctx.ledger as KeyCachingLedger;
    let health = 0;
    let point = 0;
    let uncached = 0;
    const cpu = { health: 0, point: 0, uncached: 0 };
    let last: Wrk | undefined;
    for (let i = 0; i < rounds; i++) {
      const h = await wrk(`${srv.url}/healthz`, seconds);
      const p = await wrk(pointUrl, seconds, [`X-API-Key: ${key}`]);
      cache.ttlMs = 0;
      const u = await wrk(pointUrl, seconds, [`X-API-Key: ${key}`]);
      cache.ttlMs = KEY_CACHE_TTL_MS;
      for (const [name, r] of [
        ["/healthz", h],
        ["/point", p],
        ["/point uncached", u],
      ] as const) {
        if (r.non2xx || r.errors) throw new Error(`errors under load on ${name}: ${JSON.stringify(r)}`);
      }
      process.stderr.write(
        `round ${i + 1}: /healthz ${h.rps.toFixed(0)}, /point ${p.rps.toFixed(0)}, /point without key cache ${u.rps.toFixed(0)} req/s; ` +
          `server CPU per request ${h.cpuUs.toFixed(0)} / ${p.cpuUs.toFixed(0)} / ${u.cpuUs.toFixed(0)} µs\n`,
      );
      health += h.rps / rounds;
      point += p.rps / rounds;
      uncached += u.rps / rounds;
      cpu.health += h.cpuUs / rounds;
      cpu.point += p.cpuUs / rounds;
      cpu.uncached += u.cpuUs / rounds;
      last = p;
    }
    return [
      {
        bench: "/point warm (wrk -t2 -c32)",
        figure: "req/s",
        value: point,
        baseline: "/healthz req/s (wrk, same server)",
        baselineValue: health,
        ratio: point / health,
        target: 0.8,
        note: `${rounds} alternating rounds of ${seconds} s; last /point p50 ${last?.p50}, p99 ${last?.p99}`,
      },
      {
        bench: "/point warm, key cache on vs off",
        figure: "req/s (cache on)",
        value: point,
        baseline: "req/s with a ledger lookup per request",
        baselineValue: uncached,
        ratio: point / uncached,
        note: "same server, same rounds",
      },
      // CPU time per request hardly depends on what else runs on the machine, unlike req/s.
      {
        bench: "/point warm, server CPU per request",
        figure: "µs (inverse: higher ratio is better)",
        value: cpu.point,
        baseline: "/healthz µs per request",
        baselineValue: cpu.health,
        ratio: cpu.health / cpu.point,
        target: 0.8,
        note: `without the key cache: ${cpu.uncached.toFixed(0)} µs per request`,
      },
    ];
  } finally {
    await srv.close();
  }
}

if (import.meta.main) {
  const { printRows } = await import("./lib.ts");
  const [seconds, rounds] = process.argv.slice(2).map(Number);
  printRows(await run(seconds || 10, rounds || 2));
}
