// Load from wrk (Debian's C load generator), an external process, so the client's own cost does
// not share the server's event loop or CPU accounting. Paths are cycled in order by a small Lua
// script; the same Load shape as the autocannon helper in lib.ts.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Load } from "./lib.ts";

const run = promisify(execFile);

function script(paths: string[], headers: Record<string, string>): string {
  const list = paths.map((p) => JSON.stringify(p)).join(", ");
  const hs = Object.entries(headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join("\n");
  return `${hs}
local paths = { ${list} }
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  io.write(string.format("JSON {\\"requests\\": %d, \\"bytes\\": %d, \\"seconds\\": %f, \\"p50\\": %f, \\"p99\\": %f, \\"non2xx\\": %d, \\"errors\\": %d}\\n",
    summary.requests, summary.bytes, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`;
}

export async function wrk(
  base: string,
  opts: { paths: string[]; headers?: Record<string, string>; connections?: number; seconds?: number; threads?: number },
): Promise<Load> {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-wrk-"));
  try {
    const lua = join(dir, "paths.lua");
    writeFileSync(lua, script(opts.paths, opts.headers ?? {}));
    const { stdout } = await run("wrk", [
      `-t${opts.threads ?? 1}`,
      `-c${opts.connections ?? 16}`,
      `-d${opts.seconds ?? 5}s`,
      "-s",
      lua,
      base,
    ]);
    const line = stdout.split("\n").find((l) => l.startsWith("JSON "));
    if (!line) throw new Error(`wrk printed no summary: ${stdout}`);
    const s = JSON.parse(line.slice(5)) as Record<string, number>;
    return {
      requests: s.requests,
      rps: s.requests / s.seconds,
      mbps: s.bytes / 1e6 / s.seconds,
      p50: s.p50,
      p99: s.p99,
      errors: s.errors,
      non2xx: s.non2xx,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
