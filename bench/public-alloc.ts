// Bytes a public request allocates, against a bare node:http server answering the same number of
// requests in the same run: every byte is garbage the young generation collects, and each
// collection stops the loop with every request in flight (bench/public-tail.ts counts them).
// V8's sampling heap profiler counts objects the collectors already freed too (every 256 bytes
// allocated, one sample), so the figure does not depend on the machine's load; the frames of
// gridcast's own code that allocate most are printed below the rows.
//   node bench/public-alloc.ts [seconds per target, default 2]
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, bareServer, benchServer, benchStore, numberArgs, printRows } from "./lib.ts";
import { aTile } from "./public.ts";

const run$ = promisify(execFile);
const SAMPLE_BYTES = 256;

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** Bytes allocated per request while wrk drives `url`, and gridcast's frames by bytes (with callees). */
async function allocated(url: string, seconds: number): Promise<{ perRequest: number; frames: [string, number][] }> {
  await run$("wrk", ["-t1", "-c32", "-d1s", url]);
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: SAMPLE_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const { stdout } = await run$("wrk", ["-t1", "-c32", `-d${seconds}s`, url]);
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as { profile: { head: ProfileNode } };
  session.disconnect();
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  if (!requests) throw new Error(`wrk made no requests to ${url}: ${stdout}`);
  let all = 0;
  const total = new Map<string, number>();
  const walk = (node: ProfileNode, stack: Set<string>) => {
    const f = node.callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(src|node_modules)\//, "$1/")}:${f.lineNumber + 1}`;
    all += node.selfSize;
    const within = new Set(stack).add(name);
    for (const s of within) total.set(s, (total.get(s) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c, within);
  };
  walk(profile.head, new Set());
  const frames = [...total]
    .filter(([k]) => k.includes(" src/"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([k, v]): [string, number] => [k, v / requests]);
  return { perRequest: all / requests, frames };
}

export async function run(seconds = 2): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const out = join(BENCH_DIR, "public-alloc-output");
  rmSync(out, { recursive: true, force: true });
  await runBuild({ store, out, maxZoom: 3, groups: ["global"], progress: false });
  const tile = aTile(join(out, "current"), "global.t2m");
  const srv = await benchServer(store, { out });
  const bare = await bareServer();
  bare.body = new Uint8Array(12 * 1024);
  const rows: BenchRow[] = [];
  try {
    const base = await allocated(bare.url, seconds);
    for (const [name, path] of [
      ["/healthz", "/healthz"],
      ["static tile", tile],
    ]) {
      const a = await allocated(`${srv.url}${path}`, seconds);
      rows.push({
        bench: "public-alloc",
        figure: `${name}: bytes allocated per request`,
        value: Math.round(a.perRequest),
        baseline: "bare node:http, 12 KB body",
        baselineValue: Math.round(base.perRequest),
        ratio: base.perRequest / a.perRequest,
        note: "ratio: the bare server's bytes over this (higher is better)",
      });
      process.stderr.write(
        `${name}, gridcast's frames by bytes per request (with what they call):\n${a.frames
          .map(([k, v]) => `  ${Math.round(v)} B  ${k}`)
          .join("\n")}\n`,
      );
    }
  } finally {
    await bare.close();
    await srv.close();
  }
  return rows;
}

if (import.meta.main) {
  const nums = numberArgs();
  printRows(await run(nums[0]));
  process.stdout.write(`${(await run$("uptime")).stdout}`);
}
