// Runs curl for bench/lib.ts's curlGet, in a process of its own: a line of JSON (curl's
// arguments) in, curl's output line out. The benches' servers run inside the bench process, and a
// process that forks (spawning curl for every request) makes the kernel copy-on-write its pages
// afterwards: the server then pays thousands of page faults per request, none of them its own.
// Spawned once, this process does the forking instead.
//
// A line may also be {"get": url, "headers": {...}}: one GET over a kept-alive connection (what an
// API client with a connection pool sees, without curl's per-request connection and start-up),
// answered in curl's -w format "status bytes seconds".
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, get } from "node:http";
import { createInterface } from "node:readline";

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const reply = (out: string, err?: string, cpu?: number) =>
  process.stdout.write(`${JSON.stringify({ out, err, cpu })}\n`);

/**
 * CPU seconds (user + system) of this process's children that have ended: /proc/self/stat's
 * cutime and cstime, in clock ticks of 1/100 s. One curl's figure is coarse; a bench sums many.
 */
function childCpu(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of stat(5), counted from the state (field 3) at index 0.
  return (Number(f[13]) + Number(f[14])) / 100;
}

for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line) as string[] | { get: string; headers: Record<string, string> };
  if (Array.isArray(job)) {
    const c0 = childCpu();
    execFile("curl", job, (err, stdout) => reply(stdout, err ? String(err.message) : undefined, childCpu() - c0));
    continue;
  }
  const t0 = performance.now();
  get(job.get, { agent, headers: job.headers }, (res) => {
    let bytes = 0;
    res.on("data", (c: Buffer) => {
      bytes += c.length;
    });
    res.on("end", () => reply(`${res.statusCode} ${bytes} ${(performance.now() - t0) / 1000}`));
  }).on("error", (e) => reply("", String(e.message)));
}
