// A real `gridcast serve` process (its own RSS, measured from /proc) with a key issued by
// `gridcast keys create`, and export clients that read their bodies slowly. Shared by the export
// memory test and bench/export-memory.ts.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

export interface ServeProcess {
  proc: ChildProcess;
  pid: number;
  url: string;
  key: string;
  close(): Promise<void>;
}

/** Starts `gridcast serve` on `store` with GRIDCAST_* settings from `env`; resolves once it listens. */
export async function serveProcess(
  store: string,
  dir: string,
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const all = { ...process.env, GRIDCAST_DB: join(dir, "ledger.db"), GRIDCAST_OUT: join(dir, "output"), ...env };
  const gridcast = join(ROOT, "bin/gridcast");
  const made = execFileSync(
    process.execPath,
    [gridcast, "keys", "create", "--scopes", "weather", "--rate", "0", "--json"],
    { env: all, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  const key = JSON.parse(made).key as string;
  const proc = spawn(process.execPath, [gridcast, "serve", "--quiet", "--port", "0", "--store", store], {
    cwd: dir,
    env: all,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const url = await new Promise<string>((ok, fail) => {
    let text = "";
    proc.stderr!.on("data", (d) => {
      text += d;
      const m = /serving on (http:\/\/\S+)/.exec(text);
      if (m) ok(m[1].replace(/\/$/, ""));
    });
    proc.on("exit", (c) => fail(new Error(`serve exited ${c}: ${text}`)));
  });
  return {
    proc,
    pid: proc.pid!,
    url,
    key,
    close: () =>
      new Promise<void>((ok) => {
        if (proc.exitCode !== null) return ok();
        proc.once("exit", () => ok());
        proc.kill("SIGTERM");
      }),
  };
}

/** A field of /proc/<pid>/status in MiB (VmHWM: the peak resident set; VmRSS: the current one). */
export function procMib(pid: number, field: "VmHWM" | "VmRSS"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m![1]) / 1024;
}

/** Resets the process's peak resident set to its current one (Linux ≥ 4.0: write 5 to clear_refs). */
export function resetPeak(pid: number): void {
  execFileSync("sh", ["-c", `echo 5 > /proc/${pid}/clear_refs`]);
}

export interface SlowRead {
  status: number;
  bytes: number;
  declared: number;
}

/**
 * One GET read slowly: after every piece the body pauses `pauseMs`, so the server's writes back
 * up against the socket the whole time (the kernel's buffers fill, then the server must wait).
 */
export function slowGet(url: string, headers: Record<string, string>, pauseMs: number): Promise<SlowRead> {
  return new Promise((ok, fail) => {
    const req = httpGet(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => {
        bytes += c.length;
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      });
      res.on("end", () =>
        ok({ status: res.statusCode ?? 0, bytes, declared: Number(res.headers["content-length"] ?? -1) }),
      );
      res.on("error", fail);
    });
    req.on("error", fail);
  });
}
