// Runs curl for bench/lib.ts's curlGet, in a process of its own: a line of JSON (curl's
// arguments) in, curl's output line out. The benches' servers run inside the bench process, and a
// process that forks (spawning curl for every request) makes the kernel copy-on-write its pages
// afterwards: the server then pays thousands of page faults per request, none of them its own.
// Spawned once, this process does the forking instead.
import { execFile } from "node:child_process";
import { createInterface } from "node:readline";

for await (const line of createInterface({ input: process.stdin })) {
  const args = JSON.parse(line) as string[];
  execFile("curl", args, (err, stdout) => {
    process.stdout.write(`${JSON.stringify({ out: stdout, err: err ? String(err.message) : undefined })}\n`);
  });
}
