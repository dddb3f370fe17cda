// Operator mistakes found before a command starts its work (rendering for minutes, then failing
// on listen or on the first write): each becomes one ConfigError line naming the fix.
import { closeSync, existsSync, mkdirSync, openSync, statfsSync, statSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../errors.ts";

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** What is wrong with a local store root, or undefined when it is a directory (or a URL). */
export function storeProblem(store: string): string | undefined {
  if (isUrl(store)) return undefined;
  if (!existsSync(store)) return `cannot read the store ${store}: it does not exist`;
  if (!statSync(store).isDirectory()) return `cannot read the store ${store}: it is not a directory`;
  return undefined;
}

export function requireStore(store: string, hint = "pass --store or set GRIDCAST_STORE"): void {
  const problem = storeProblem(store);
  if (problem) throw new ConfigError(`${problem} (${hint})`);
}

/** Makes `dir` if needed and proves a file can be written in it. */
/**
 * Kernel pseudo-file systems (statfs f_type), which hold no files of ours: Node's recursive mkdir
 * below /proc never returns, so they are refused before anything is created there.
 */
const PSEUDO_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x1cd1, "devpts"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x73636673, "securityfs"],
  [0xcafe4a11, "bpf"],
  [0x62656570, "configfs"],
  [0x6165676c, "pstore"],
]);

/** The pseudo-file system the nearest existing directory of `dir` is on, if it is on one. */
function pseudoFileSystem(dir: string): string | undefined {
  let at = resolve(dir);
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    return PSEUDO_FILE_SYSTEMS.get(Number(statfsSync(at).type));
  } catch {
    return undefined;
  }
}

export function requireWritableDir(dir: string, flag = "--out"): void {
  const say = (what: string) => new ConfigError(`${flag} ${dir} ${what}`);
  const pseudo = pseudoFileSystem(dir);
  if (pseudo)
    throw say(`is on the kernel's ${pseudo} file system, which cannot hold files; pick a directory on a disk`);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw say("is a file, not a directory");
  try {
    mkdirSync(dir, { recursive: true });
    const probe = join(dir, `.gridcast-write-check-${process.pid}`);
    closeSync(openSync(probe, "w"));
    unlinkSync(probe);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "EEXIST") throw say("cannot be created: part of the path is a file");
    if (code === "EACCES" || code === "EPERM") throw say("is not writable by this user");
    if (code === "EROFS") throw say("is on a read-only file system");
    if (code === "ENOSPC") throw say("is on a full disk");
    throw say(`cannot be written (${code ?? (e as Error).message})`);
  }
}

/** The one-line reason a listen on host:port failed, for an errno code. */
export function listenProblem(code: string | undefined, host: string, port: number): string | undefined {
  if (code === "EADDRINUSE")
    return `port ${port} on ${host} is already in use; stop what holds it or pick another with --port (through npm: npm start -- --port ${port === 65535 ? 8081 : port + 1})`;
  if (code === "EACCES")
    return `not allowed to listen on port ${port} (ports below 1024 need privileges); pick another with --port`;
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `cannot listen on ${host}: not an address of this machine; fix --host`;
  return undefined;
}

/** Binds host:port briefly, so a taken port is reported before any rendering starts. */
export async function requireFreePort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  const code = await new Promise<string | undefined>((ok) => {
    probe.once("error", (e: NodeJS.ErrnoException) => ok(e.code ?? e.message));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => ok(undefined)));
  });
  if (code !== undefined)
    throw new ConfigError(listenProblem(code, host, port) ?? `cannot listen on ${host}:${port} (${code})`);
}

/** Turns a listen error from the real server into the same line as the preflight check. */
export function asListenError(e: unknown, host: string, port: number): unknown {
  const problem = listenProblem((e as NodeJS.ErrnoException)?.code, host, port);
  return problem ? new ConfigError(problem) : e;
}
