// The tail of a public request's latency under 32 connections (issue 45's p99 ≤ 2 ms), with what
// lies behind it. gridcast runs as `gridcast serve` in a process of its own (as it does in
// production, its access log going to a file), not inside this bench; wrk (an external C client)
// drives /healthz and a static tile, and nginx (one worker) serves the same tile file from the
// same build directory. Rounds alternate every target, server variant and placement, so drifting
// machine load hits all alike.
//
// Placements: "shared" lets the kernel put wrk's threads and the server anywhere on the machine's
// cores (what bench/public.ts does); "pinned" puts the server (every thread of it) or nginx's
// worker on the last core and wrk on the first, so the two never take turns on one core.
// Server variants: Node's own young generation, and the one `gridcast serve` restarts itself with.
//
// Beside wrk's p50/p99/p99.9 each row says where the time went, from the server's side: the run
// queue (how long its main thread was ready but not running: schedstat), involuntary context
// switches, garbage collections (count per 1000 requests, pause p50 and max, and the share of
// requests that had one in their path: every collection stalls all 32 in flight) and the event
// loop's delay p99.
//   node bench/public-tail.ts [seconds per target, default 4] [rounds, default 2]
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { YOUNG_GENERATION_MB } from "../src/cli/young-generation.ts";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, benchStore, numberArgs, printRows } from "./lib.ts";
import { aTile, freePort, nginx, procCpuSeconds } from "./public.ts";

const run$ = promisify(execFile);
const CONNECTIONS = 32;
const P99_MS = 2;
const ROOT = resolve(import.meta.dirname, "..");

interface ServerStats {
  pauses: { ms: number; kind: number }[];
  cpuUs: number;
  loopP50ms: number;
  loopP99ms: number;
  loopMaxMs: number;
}

/** One gridcast server process, started with `flags` before the script. */
interface Served {
  name: string;
  url: string;
  pid: number;
  child: ChildProcess;
  stats: () => Promise<ServerStats>;
  stop: () => Promise<void>;
}

async function serve(name: string, flags: string[], store: string, out: string, dir: string): Promise<Served> {
  return probed(name, flags, dir, (port) => [
    join(ROOT, "bin/gridcast"),
    "serve",
    "--store",
    store,
    "--out",
    out,
    "--db",
    join(dir, `${port}.db`),
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--access-log",
    join(dir, `${port}.access.log`),
  ]);
}

/** A Node process running `script` (given its port) with the probe loaded, once it answers /healthz. */
async function probed(name: string, flags: string[], dir: string, script: (port: number) => string[]): Promise<Served> {
  const port = await freePort();
  const statsFile = join(dir, `${port}.stats.json`);
  const child = spawn(process.execPath, [...flags, "--import", join(ROOT, "bench/tail-probe.ts"), ...script(port)], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, GRIDCAST_TAIL_PROBE: statsFile },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600 || child.exitCode !== null) throw new Error(`${name}: the server did not come up on ${url}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name,
    url,
    pid: child.pid!,
    child,
    stats: async () => {
      rmSync(statsFile, { force: true });
      child.kill("SIGUSR2");
      for (let i = 0; !existsSync(statsFile); i++) {
        if (i > 200) throw new Error(`${name}: the server wrote no figures to ${statsFile}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return JSON.parse(readFileSync(statsFile, "utf8")) as ServerStats;
    },
    stop: async () => {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await gone;
    },
  };
}

/** The main thread's run-queue wait (ns) and involuntary context switches, from /proc. */
function sched(pid: number): { waitNs: number; involuntary: number } {
  const s = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ");
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8");
  return {
    waitNs: Number(s[1]),
    involuntary: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
  };
}

/** Puts every thread of `pid` on `cpus` (a taskset list). */
async function pin(pid: number, cpus: string): Promise<void> {
  await run$("taskset", ["-a", "-p", "-c", cpus, String(pid)]);
}

interface Round {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  p999: number;
  non2xx: number;
  /** Server-side, over the round. */
  cpuUsPerRequest: number;
  runQueueShare: number;
  involuntaryPerS: number;
  gcPer1000: number;
  gcP50ms: number;
  gcMaxMs: number;
  gcShare: number;
  loopP99ms: number;
}

const WRK_SCRIPT = `done = function(summary, latency, requests)
  io.write(string.format("TAIL %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), summary.errors.status))
end
`;

async function wrk(
  url: string,
  seconds: number,
  script: string,
  pinned: boolean,
): Promise<{ requests: number; seconds: number; p50: number; p99: number; p999: number; non2xx: number }> {
  const args = [pinned ? "-t1" : "-t2", `-c${CONNECTIONS}`, `-d${seconds}s`, "--timeout", "10s", "-s", script, url];
  const cpus = `0-${Math.max(0, availableParallelism() - 2)}`;
  const { stdout } = pinned ? await run$("taskset", ["-c", cpus, "wrk", ...args]) : await run$("wrk", args);
  const m = /TAIL (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(stdout);
  if (!m) throw new Error(`wrk printed no summary: ${stdout}`);
  const [requests, us, p50, p99, p999, non2xx] = m.slice(1).map(Number);
  return { requests, seconds: us / 1e6, p50: p50 / 1e3, p99: p99 / 1e3, p999: p999 / 1e3, non2xx };
}

export async function run(seconds = 4, rounds = 2): Promise<BenchRow[]> {
  const cores = availableParallelism();
  if (cores < 2) throw new Error("the pinned placement needs two cores");
  const last = String(cores - 1);
  const store = await benchStore("demo");
  const out = join(BENCH_DIR, "public-tail-output");
  rmSync(out, { recursive: true, force: true });
  await runBuild({ store, out, maxZoom: 3, groups: ["global"], progress: false });
  const build = realpathSync(join(out, "current"));
  const tile = aTile(build, "global.t2m");
  const dir = mkdtempSync(join(tmpdir(), "gridcast-tail-"));
  const script = join(dir, "tail.lua");
  writeFileSync(script, WRK_SCRIPT);
  const servers = [
    // What Node sizes by itself (a size given for Node stops the launcher's restart; 0 is Node's
    // default), and the server as its launcher starts it (src/cli/young-generation.ts).
    await serve("Node's young generation", ["--max-semi-space-size=0"], store, out, dir),
    await serve(`gridcast's (2 × ${YOUNG_GENERATION_MB} MB)`, [], store, out, dir),
  ];
  // Node's floor: the tile's bytes with the very headers gridcast's warm answer carried, from a bare
  // node:http server with the serving young generation (bench/bare-file-server.ts).
  const sent = await fetch(`${servers[1].url}${tile}`);
  await sent.arrayBuffer();
  const heads: Record<string, string> = {};
  sent.headers.forEach((v, k) => {
    if (!["date", "connection", "keep-alive"].includes(k)) heads[k] = v;
  });
  const young = [`--min-semi-space-size=${YOUNG_GENERATION_MB}`, `--max-semi-space-size=${YOUNG_GENERATION_MB}`];
  const bare = await probed("bare node:http, same bytes and headers", young, dir, (port) => [
    join(ROOT, "bench/bare-file-server.ts"),
    join(build, tile),
    String(port),
    JSON.stringify(heads),
  ]);
  const ngx = await nginx(build);
  const sums = new Map<string, Round[]>();
  try {
    type Target = { name: string; url: string; pid: number; server?: Served; placement: "shared" | "pinned" };
    const targets: Target[] = [];
    for (const placement of ["shared", "pinned"] as const) {
      for (const s of servers) {
        targets.push({ name: `/healthz, ${s.name}`, url: `${s.url}/healthz`, pid: s.pid, server: s, placement });
        targets.push({ name: `static tile, ${s.name}`, url: `${s.url}${tile}`, pid: s.pid, server: s, placement });
      }
      targets.push({ name: bare.name, url: `${bare.url}${tile}`, pid: bare.pid, server: bare, placement });
      targets.push({ name: "nginx, same tile file", url: `${ngx.url}${tile}`, pid: ngx.worker, placement });
    }
    const all = `0-${last}`;
    const place = async (t: Target) => {
      for (const s of [...servers, bare]) await pin(s.pid, t.placement === "pinned" ? last : all);
      await pin(ngx.worker, t.placement === "pinned" ? last : all);
    };
    // Every target once, unmeasured: the JIT and the caches settle before anything is counted.
    for (const t of targets) {
      await place(t);
      await wrk(t.url, 1, script, t.placement === "pinned");
    }
    for (let i = 0; i < rounds; i++) {
      for (const t of targets) {
        await place(t);
        await t.server?.stats();
        const s0 = sched(t.pid);
        const cpu0 = procCpuSeconds(t.pid);
        const w = await wrk(t.url, seconds, script, t.placement === "pinned");
        const s1 = sched(t.pid);
        const cpu1 = procCpuSeconds(t.pid);
        if (w.non2xx) throw new Error(`non-2xx under load on ${t.name}: ${w.non2xx}`);
        const st = await t.server?.stats();
        const pauses = (st?.pauses ?? []).map((p) => p.ms).sort((a, b) => a - b);
        const r: Round = {
          rps: w.requests / w.seconds,
          requests: w.requests,
          p50: w.p50,
          p99: w.p99,
          p999: w.p999,
          non2xx: w.non2xx,
          cpuUsPerRequest: ((st ? st.cpuUs / 1e6 : cpu1 - cpu0) * 1e6) / w.requests,
          runQueueShare: (s1.waitNs - s0.waitNs) / 1e9 / w.seconds,
          involuntaryPerS: (s1.involuntary - s0.involuntary) / w.seconds,
          gcPer1000: (pauses.length / w.requests) * 1000,
          gcP50ms: pauses[Math.floor(pauses.length / 2)] ?? 0,
          gcMaxMs: pauses.at(-1) ?? 0,
          gcShare: Math.min(1, (pauses.length * CONNECTIONS) / w.requests),
          loopP99ms: st?.loopP99ms ?? Number.NaN,
        };
        const key = `${t.name} (${t.placement})`;
        sums.set(key, [...(sums.get(key) ?? []), r]);
        process.stderr.write(`round ${i + 1}: ${key}: ${describe(r, !!t.server)}\n`);
      }
    }
  } finally {
    await ngx.stop();
    await bare.stop();
    for (const s of servers) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const rows: BenchRow[] = [];
  const mean = (rs: Round[], f: (r: Round) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  for (const placement of ["shared", "pinned"]) {
    const ng = sums.get(`nginx, same tile file (${placement})`)!;
    const health = sums.get(`/healthz, Node's young generation (${placement})`)!;
    for (const [key, rs] of sums) {
      if (!key.endsWith(`(${placement})`)) continue;
      const p99 = Math.max(...rs.map((r) => r.p99));
      const isNginx = key.startsWith("nginx");
      rows.push({
        bench: "public-tail",
        figure: `${key}: p99 ms (p50 ${fmtMs(Math.max(...rs.map((r) => r.p50)))}, p99.9 ${fmtMs(Math.max(...rs.map((r) => r.p999)))})`,
        value: p99,
        baseline: "nginx p99 ms, same placement",
        baselineValue: Math.max(...ng.map((r) => r.p99)),
        ratio: Math.max(...ng.map((r) => r.p99)) / p99,
        target: `p99 ≤ ${P99_MS} ms ${p99 <= P99_MS ? "✔" : "✘"}`,
        note: `${Math.round(mean(rs, (r) => r.rps))} req/s (${(mean(rs, (r) => r.rps) / mean(health, (r) => r.rps)).toFixed(2)} of /healthz, Node's young generation); ${describe(averaged(rs), !isNginx)}; load ${load}`,
      });
    }
  }
  return rows;
}

function averaged(rs: Round[]): Round {
  const out = { ...rs[0] };
  for (const k of Object.keys(out) as (keyof Round)[]) {
    out[k] = k.endsWith("MaxMs") ? Math.max(...rs.map((r) => r[k])) : rs.reduce((a, r) => a + r[k], 0) / rs.length;
  }
  return out;
}

const fmtMs = (ms: number) => `${ms.toFixed(2)} ms`;

function describe(r: Round, node: boolean): string {
  const common =
    `${Math.round(r.rps)} req/s (a mean of ${fmtMs((CONNECTIONS / r.rps) * 1000)} by Little's law), ` +
    `p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}, p99.9 ${fmtMs(r.p999)}; ` +
    `server CPU ${r.cpuUsPerRequest.toFixed(1)} µs/request, run queue ${(r.runQueueShare * 100).toFixed(1)}% of the time, ` +
    `${Math.round(r.involuntaryPerS)} involuntary switches/s`;
  if (!node) return common;
  return (
    `${common}; GC ${r.gcPer1000.toFixed(2)} per 1000 requests (pause p50 ${fmtMs(r.gcP50ms)}, max ${fmtMs(r.gcMaxMs)}; ` +
    `${(r.gcShare * 100).toFixed(1)}% of requests behind one), event loop delay p99 ${fmtMs(r.loopP99ms)}`
  );
}

if (import.meta.main) {
  const nums = numberArgs();
  printRows(await run(nums[0], nums[1]));
  process.stdout.write(`${(await run$("uptime")).stdout}`);
}
