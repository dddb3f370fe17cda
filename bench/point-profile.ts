// Where /point's server time goes beyond /healthz's: the server runs in this process, wrk drives
// each route for a window while V8's sampling profiler (50 µs) records, and the self time of every
// function is divided by the requests wrk counted. Prints both routes' largest functions and the
// functions that /point spends most beyond /healthz. Not a pass/fail bench: it names what stands
// between /point and the ≥ 0.8 goal that bench/point-wrk.ts measures.
//   node bench/point-profile.ts [seconds per route, default 5]
import { execFile } from "node:child_process";
import { Session } from "node:inspector/promises";
import { promisify } from "node:util";
import { benchServer, benchStore } from "./lib.ts";

const run$ = promisify(execFile);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Self µs by "function file:line" over the profile. */
function selfTime(p: Profile): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i])!;
    const f = n.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(src|node_modules)\//, "$1/")}:${f.lineNumber + 1}` : "";
    const key = `${f.functionName || "(anonymous)"} ${where}`.trim();
    out.set(key, (out.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return out;
}

async function profiled(session: Session, url: string, seconds: number, headers: string[]) {
  await session.post("Profiler.start");
  const { stdout } = await run$("wrk", ["-t2", "-c32", `-d${seconds}s`, ...headers.flatMap((h) => ["-H", h]), url]);
  const { profile } = (await session.post("Profiler.stop")) as { profile: Profile };
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  if (/Non-2xx/.test(stdout)) throw new Error(`non-2xx answers from ${url}`);
  const self = selfTime(profile);
  const perRequest = new Map([...self].map(([k, us]) => [k, us / requests]));
  return { requests, perRequest, total: [...perRequest.values()].reduce((a, b) => a + b, 0) };
}

const seconds = Number(process.argv[2] ?? 5);
const store = await benchStore("demo");
const srv = await benchServer(store, { max_heavy_requests: 1000 });
const session = new Session();
session.connect();
try {
  const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
  const pointUrl = `${srv.url}/point?lat=48.1&lon=11.6&var=t2m`;
  const warm = await fetch(pointUrl, { headers: { "X-API-Key": key } });
  if (warm.status !== 200) throw new Error(`/point answered ${warm.status}`);
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 50 });
  // Unmeasured first: the JIT settles.
  await profiled(session, `${srv.url}/healthz`, 2, []);
  await profiled(session, pointUrl, 2, [`X-API-Key: ${key}`]);
  const h = await profiled(session, `${srv.url}/healthz`, seconds, []);
  const p = await profiled(session, pointUrl, seconds, [`X-API-Key: ${key}`]);
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${us.toFixed(2).padStart(6)} µs  ${k}`)
      .join("\n");
  console.log(`/healthz: ${h.requests} requests, ${h.total.toFixed(1)} µs of main-thread samples a request`);
  console.log(top(h.perRequest, 12));
  console.log(`/point: ${p.requests} requests, ${p.total.toFixed(1)} µs of main-thread samples a request`);
  console.log(top(p.perRequest, 25));
  const extra = new Map<string, number>();
  for (const [k, us] of p.perRequest) extra.set(k, us - (h.perRequest.get(k) ?? 0));
  console.log(`/point beyond /healthz: ${(p.total - h.total).toFixed(1)} µs a request; largest differences:`);
  console.log(top(extra, 20));
} finally {
  session.disconnect();
  await srv.close();
}
