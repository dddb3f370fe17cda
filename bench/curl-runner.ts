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
import { Agent, get } from "node:http";
import { createInterface } from "node:readline";

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const reply = (out: string, err?: string) => process.stdout.write(`${JSON.stringify({ out, err })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line) as string[] | { get: string; headers: Record<string, string> };
  if (Array.isArray(job)) {
    execFile("curl", job, (err, stdout) => reply(stdout, err ? String(err.message) : undefined));
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
