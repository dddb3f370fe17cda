// Shared bench plumbing: a row format every bench returns (a figure, its baseline measured in the
// same run, and their ratio), a sample store cached under .gridcast/bench, and a loopback server.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Socket } from "node:net";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { DEFAULTS, type Settings } from "../src/config.ts";
import { latestRun } from "../src/forecast/select.ts";
import { type Running, startServer } from "../src/http/server.ts";
import { writeSample } from "../src/sample/index.ts";
import { Store } from "../src/store/store.ts";

export interface BenchRow {
  bench: string;
  figure: string;
  value: number;
  baseline: string;
  baselineValue: number;
  /** value / baselineValue (higher is better) */
  ratio: number;
  /** A ratio to reach (printed "≥ n"), or a target of another kind spelled out. */
  target?: number | string;
  note?: string;
}

export const BENCH_DIR = resolve(import.meta.dirname, "../.gridcast/bench");

/** A sample store for benches, generated once and reused (same preset and seed → same bytes). */
export async function benchStore(preset: "demo" | "full" = "full"): Promise<string> {
  const dir = join(BENCH_DIR, `store-${preset}`);
  if (!existsSync(dir)) {
    mkdirSync(BENCH_DIR, { recursive: true });
    process.stderr.write(`generating the ${preset} sample store for benchmarks…\n`);
    await writeSample(dir, { preset, seed: 1 });
  }
  return dir;
}

export async function benchServer(store: string, overrides: Partial<Settings> = {}): Promise<Running> {
  const dir = join(BENCH_DIR, `run-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return startServer(
    { ...DEFAULTS, store, out: join(BENCH_DIR, "output"), db: join(dir, "ledger.db"), port: 0, ...overrides },
    { log: () => {} },
  );
}

/**
 * The transport alone: a bare node:http server answering every GET with a ready body (`body`,
 * empty until set), what any HTTP service pays on this machine before it reads or decodes a byte.
 */
export async function bareServer(): Promise<{ url: string; body: Uint8Array; close: () => Promise<void> }> {
  const bare = {
    url: "",
    body: new Uint8Array(0),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": bare.body.byteLength });
    res.end(bare.body);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  bare.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return bare;
}

export interface Load {
  requests: number;
  rps: number;
  mbps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Bounded load on loopback: `connections` clients for `seconds`, then it stops by itself. */
export async function load(
  url: string,
  opts: { headers?: Record<string, string>; connections?: number; seconds?: number; paths?: string[] } = {},
): Promise<Load> {
  const r = await autocannon({
    url,
    headers: opts.headers,
    connections: opts.connections ?? 16,
    duration: opts.seconds ?? 5,
    // Several paths are cycled through in order, so no single object stays hot.
    ...(opts.paths
      ? { requests: opts.paths.map((path) => ({ method: "GET" as const, path, headers: opts.headers })) }
      : {}),
  });
  return {
    requests: r.requests.total,
    rps: r.requests.average,
    mbps: r.throughput.average / 1e6,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

/** The whole numbers on a bench's command line, in order (flags and other words left out). */
export function numberArgs(): number[] {
  return process.argv
    .slice(2)
    .filter((a) => /^\d+$/.test(a))
    .map(Number);
}

/** A served process's own event-loop delay over a phase (bench/loop-delay.ts), ms. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  n: number;
}

/**
 * Environment for a child process that reports its own event-loop delay into `file` (preloading
 * bench/loop-delay.ts); read each phase's with loopDelay().
 */
export function loopDelayEnv(file: string): Record<string, string> {
  const preload = resolve(import.meta.dirname, "loop-delay.ts");
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${preload}`.trim(),
    GRIDCAST_BENCH_LOOP_DELAY: file,
  };
}

/** The child's event-loop delay since the last call (or its start), asked for by SIGUSR2. */
export async function loopDelay(pid: number, file: string): Promise<LoopDelay> {
  const lines = () => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);
  const had = lines().length;
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 500; i++) {
    const now = lines();
    if (now.length > had) return JSON.parse(now[now.length - 1]) as LoopDelay;
    await new Promise((ok) => setTimeout(ok, 10));
  }
  throw new Error(`no event-loop delay from process ${pid} in ${file}`);
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export function printRows(rows: BenchRow[]): void {
  const lines = rows.map(
    (r) =>
      `| ${r.bench} | ${r.figure} = ${fmt(r.value)} | ${r.baseline} = ${fmt(r.baselineValue)} | ${r.ratio.toFixed(2)} | ${
        r.target === undefined ? "" : typeof r.target === "string" ? r.target : `≥ ${r.target}`
      } | ${r.note ?? ""} |`,
  );
  process.stdout.write(
    ["| bench | figure | baseline (same run) | ratio | target | note |", "|---|---|---|---|---|---|", ...lines].join(
      "\n",
    ) + "\n",
  );
}

function fmt(v: number): string {
  return v >= 100 ? v.toFixed(0) : v.toFixed(2);
}

// One curl at a time through bench/curl-runner.ts (see there why not spawned from here).
let runner: { child: ChildProcessWithoutNullStreams; replies: AsyncIterator<string> } | undefined;
let queue: Promise<unknown> = Promise.resolve();

function curlRunner() {
  if (!runner) {
    const child = spawn(process.execPath, [resolve(import.meta.dirname, "curl-runner.ts")]);
    child.stderr.pipe(process.stderr);
    runner = { child, replies: createInterface({ input: child.stdout })[Symbol.asyncIterator]() };
  }
  return runner;
}

async function runCurl(
  args: string[] | { get: string; headers: Record<string, string> },
): Promise<{ out: string; cpu?: number }> {
  const r = curlRunner();
  // Held only while a request is out, so the runner never keeps a finished bench alive.
  const pipes = [r.child.stdout, r.child.stdin, r.child.stderr] as unknown as Socket[];
  r.child.ref();
  for (const p of pipes) p.ref();
  r.child.stdin.write(`${JSON.stringify(args)}\n`);
  const next = await r.replies.next();
  r.child.unref();
  for (const p of pipes) p.unref();
  const { out, err, cpu } = JSON.parse(next.value as string) as { out: string; err?: string; cpu?: number };
  if (err) throw new Error(`curl: ${err}`);
  return { out, cpu };
}

/**
 * One GET by curl, a client in its own process that times itself (`time_total` leaves out its
 * start-up): an in-process client would bill its own buffering and garbage to the server's
 * thread. The body is discarded; fails on any status but 200.
 */
export function curlGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ seconds: number; bytes: number; clientCpu: number }> {
  const args = ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  return timedGet(url, [...args, url]);
}

/**
 * One GET from the runner process over a connection it keeps open between calls (an API client
 * with a pool), timed there from the request to the body's end. Fails on any status but 200.
 */
export function keepAliveGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ seconds: number; bytes: number; clientCpu: number }> {
  return timedGet(url, { get: url, headers });
}

/**
 * One job for the runner, queued behind the others; its "status bytes seconds" answer read, and for
 * curl its CPU seconds (start-up included; 10 ms ticks, so only sums over many requests mean much).
 */
async function timedGet(
  url: string,
  job: Parameters<typeof runCurl>[0],
): Promise<{ seconds: number; bytes: number; clientCpu: number }> {
  const run = queue.then(() => runCurl(job));
  queue = run.catch(() => {});
  const { out, cpu } = await run;
  const [code, size, total] = out.trim().split(" ");
  if (code !== "200") throw new Error(`${url} answered ${code}`);
  return { seconds: Number(total), bytes: Number(size), clientCpu: cpu ?? 0 };
}

/** The overlay benches' fields: msl, u10 and v10 of the demo store's global group, latest run, first lead. */
export async function overlayFields(): Promise<{
  grid: { lat: Float64Array; lon: Float64Array; dlon: number };
  f: Record<string, Float32Array>;
}> {
  const store = new Store(await benchStore("demo"));
  const group = await store.forecastGroup("forecast/global");
  const run = latestRun(group);
  const f: Record<string, Float32Array> = {};
  for (const name of ["msl", "u10", "v10"]) {
    const v = group.variables.get(name)!;
    const region = v.roles.map((r, d): [number, number] => {
      if (r === "time") return [run, run + 1];
      return r === "lat" || r === "lon" ? [0, v.array.shape[d]] : [0, 1];
    });
    f[name] = Float32Array.from(await v.array.read(region));
  }
  return { grid: group.grid, f };
}
