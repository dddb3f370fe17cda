// The output directory's life cycle: a lock so two builds never write one out dir, partial build
// directories (cleaned when a killed build left them), the atomic switch of <out>/current (a new
// symlink renamed over the old one: one rename), and pruning down to keep_builds.
import { randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { hostname } from "node:os";
import { basename, join, resolve } from "node:path";
import { ConfigError } from "../errors.ts";
import { BUILDS, CURRENT, MANIFEST } from "../published/layout.ts";
import { readManifest } from "../published/manifest.ts";

export const PARTIAL = ".partial";
/** A directory renamed for removal in the background (an interrupted build's, an old build). */
export const REMOVING = ".removing";
const LOCKS = ".locks";
const EXCLUSIVE_LOCK = "build.lock";
export const BUILD_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

interface LockInfo {
  pid: number;
  host: string;
  build_id: string;
  /** null: an unsharded build or a publish, which needs the out dir to itself. */
  shard: string | null;
  started: string;
}

export interface Lock {
  path: string;
  release(): void;
}

/** A lock another live holder has; `sameShard`: a task with this shard, on another machine. */
export class LockHeldError extends ConfigError {
  readonly held: LockInfo | undefined;
  constructor(message: string, held: LockInfo | undefined) {
    super(message);
    this.held = held;
  }
}

/** A build id that sorts by time: 20261120T120301Z-3f9a. */
export function newBuildId(now = new Date()): string {
  const stamp = now.toISOString().slice(0, 19).replace(/[-:]/g, "");
  return `${stamp}Z-${randomBytes(2).toString("hex")}`;
}

export function checkBuildId(id: string): void {
  if (!BUILD_ID.test(id)) throw new ConfigError(`build id must match ${BUILD_ID.source}, got "${id}"`);
}

/**
 * Seconds a lock held from another machine stays valid without a heartbeat. Its holder touches the
 * lock file every quarter of it; a holder on this machine is checked by its pid instead.
 */
export const DEFAULT_LOCK_LEASE_S = 60;

function leaseLapsed(path: string, leaseS: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > leaseS * 1000;
  } catch {
    return true;
  }
}

/**
 * Whether the holder of a lock still runs: on this machine by its pid; on another (a batch task
 * on another node over shared storage) by its heartbeat, the lock file's mtime.
 */
function alive(info: LockInfo, path: string, leaseS: number): boolean {
  if (info.host !== hostname()) return !leaseLapsed(path, leaseS);
  try {
    process.kill(info.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function parseLock(text: string | undefined): LockInfo | undefined {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as LockInfo);
  } catch {
    return undefined;
  }
}

function readLock(path: string): LockInfo | undefined {
  return parseLock(readText(path));
}

/** A takeover guard left by a taker that died inside it is removed after this long. */
export const TAKEOVER_GUARD_STALE_MS = 5000;

/**
 * Removes a lock judged stale, unless another taker got there first: two takers that both judged
 * it stale would otherwise each remove it, and the second would remove the first one's fresh
 * lock, leaving both believing they hold the out dir. Takeovers go one at a time through a guard
 * directory (mkdir is atomic), and the lock is removed only when it still holds exactly what was
 * judged. True when this taker removed it (it may then create its own, exclusively as ever).
 */
function takeOver(path: string, judged: string | undefined): boolean {
  const guard = `${path}.takeover`;
  try {
    mkdirSync(guard);
  } catch {
    try {
      if (Date.now() - statSync(guard).mtimeMs > TAKEOVER_GUARD_STALE_MS)
        rmSync(guard, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
    return false;
  }
  try {
    if (readText(path) !== judged) return false;
    rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(guard, { recursive: true, force: true });
  }
}

function describeLock(info: LockInfo | undefined, path: string): string {
  if (!info) return `a build holds ${path}`;
  const what = info.shard ? `shard ${info.shard} of build ${info.build_id}` : `build ${info.build_id}`;
  return `${what} (pid ${info.pid} on ${info.host}, since ${info.started}) is writing this out dir; if it is gone, remove ${path}`;
}

/**
 * Takes the out dir: exclusively for an unsharded build or a publish, shared with the other
 * shards for a shard. A lock whose holder is gone (a dead pid on this machine, a lapsed heartbeat
 * from another) is stale and taken over. The lock is touched every quarter lease while held.
 */
export function acquireLock(
  out: string,
  buildId: string,
  shard: string | null,
  leaseS: number = DEFAULT_LOCK_LEASE_S,
): Lock {
  const dir = join(out, LOCKS);
  mkdirSync(dir, { recursive: true });
  const name = shard ? `${buildId}.shard-${shard.replace("/", "-of-")}.lock` : EXCLUSIVE_LOCK;
  const path = join(dir, name);
  const info: LockInfo = {
    pid: process.pid,
    host: hostname(),
    build_id: buildId,
    shard,
    started: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(info), { flag: "wx" });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const text = readText(path);
      const held = parseLock(text);
      if (attempt > 0 || !held || alive(held, path, leaseS) || !takeOver(path, text)) {
        throw new LockHeldError(describeLock(held, path), held);
      }
    }
  }
  const heartbeat = setInterval(
    () => {
      const now = new Date();
      try {
        utimesSync(path, now, now);
      } catch {
        // Removed under us (by hand): the next lock taker sees no lock, as the message said it could.
      }
    },
    Math.max(1000, (leaseS * 1000) / 4),
  );
  heartbeat.unref();
  const release = (): void => {
    clearInterval(heartbeat);
    rmSync(path, { force: true });
  };
  // Created first, checked second: two builds starting together both see each other and stop.
  for (const other of readdirSync(dir)) {
    if (other === name || !other.endsWith(".lock")) continue;
    const otherPath = join(dir, other);
    const held = readLock(otherPath);
    if (held && !alive(held, otherPath, leaseS)) {
      rmSync(otherPath, { force: true });
      continue;
    }
    if (!shard || !held || held.shard === null) {
      release();
      throw new LockHeldError(describeLock(held, otherPath), held);
    }
  }
  return { path, release };
}

/**
 * acquireLock for a shard that a batch engine may be retrying: its own shard's lock, left by a
 * task on another machine that is gone but whose heartbeat has not lapsed yet, is waited for
 * (at most one lease) instead of refused. Any other holder is refused at once.
 */
export async function acquireShardLock(
  out: string,
  buildId: string,
  shard: string,
  leaseS: number = DEFAULT_LOCK_LEASE_S,
  say: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<Lock> {
  const deadline = Date.now() + (leaseS + 5) * 1000;
  let told = false;
  for (;;) {
    try {
      return acquireLock(out, buildId, shard, leaseS);
    } catch (e) {
      const held = e instanceof LockHeldError ? e.held : undefined;
      const retry = held && held.shard === shard && held.build_id === buildId && held.host !== hostname();
      if (!retry || Date.now() > deadline) throw e;
      if (!told) {
        say(
          `shard ${shard} of build ${buildId} is locked by ${held.host} (pid ${held.pid}); ` +
            `waiting up to ${leaseS} s for its heartbeat to lapse (a retried task)`,
        );
        told = true;
      }
      await new Promise((ok) => setTimeout(ok, 1000));
    }
  }
}

/** Build ids that live shard locks are writing (their partial dirs must stay). */
function activeShardBuilds(out: string, leaseS: number): Set<string> {
  const ids = new Set<string>();
  const dir = join(out, LOCKS);
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const held = readLock(join(dir, name));
    if (held?.shard && alive(held, join(dir, name), leaseS)) ids.add(held.build_id);
  }
  return ids;
}

const SHARD_DONE = /^manifest\.shard-\d+-of-\d+\.json$/;

/**
 * Removes partial dirs killed builds left behind; `keep` is the caller's own (shards share it).
 * A partial build holding a finished shard waits for its other shards and `publish`: it stays.
 * Each is renamed out of the way at once and deleted in the background (a killed demo build
 * leaves hundreds of thousands of files): `say` gets one line when that starts, and `done`
 * settles when every such directory (also those an earlier cleanup did not finish) is gone.
 */
export function cleanStalePartials(
  out: string,
  keep?: string,
  leaseS: number = DEFAULT_LOCK_LEASE_S,
  say?: (line: string) => void,
): { removed: string[]; done: Promise<void> } {
  const builds = join(out, BUILDS);
  const active = activeShardBuilds(out, leaseS);
  const removed: string[] = [];
  for (const name of existsSync(builds) ? readdirSync(builds) : []) {
    if (!name.endsWith(PARTIAL)) continue;
    const id = name.slice(0, -PARTIAL.length);
    if (id === keep || active.has(id)) continue;
    if (readdirSync(join(builds, name)).some((f) => SHARD_DONE.test(f))) continue;
    renameSync(join(builds, name), join(builds, `${name}.${randomBytes(3).toString("hex")}${REMOVING}`));
    removed.push(name);
  }
  const trash = existsSync(builds) ? readdirSync(builds).filter((n) => n.endsWith(REMOVING)) : [];
  if (trash.length === 0) return { removed, done: Promise.resolve() };
  const what = removed.length ? removed.map((n) => `builds/${n}`).join(", ") : `${trash.length} unfinished removal(s)`;
  say?.(`removing what an interrupted build left (${what}) in the background`);
  const started = performance.now();
  const done = Promise.all(trash.map((n) => rm(join(builds, n), { recursive: true, force: true }))).then(
    () => say?.(`removed what the interrupted build left in ${((performance.now() - started) / 1000).toFixed(1)} s`),
    (e: Error) => say?.(`could not remove everything an interrupted build left in ${builds}: ${e.message}`),
  );
  return { removed, done };
}

export function partialDir(out: string, id: string): string {
  return join(out, BUILDS, `${id}${PARTIAL}`);
}

export function finalDir(out: string, id: string): string {
  return join(out, BUILDS, id);
}

/** The build `current` points at, if any. */
export function currentBuild(out: string): { id: string; dir: string } | undefined {
  const link = join(out, CURRENT);
  try {
    const target = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : link;
    const dir = resolve(out, target);
    statSync(dir);
    return { id: basename(dir), dir };
  } catch {
    return undefined;
  }
}

/** Makes `<out>/current` point at builds/<id> with one rename of a fresh symlink. */
export function switchCurrent(out: string, id: string): void {
  const link = join(out, CURRENT);
  try {
    if (!lstatSync(link).isSymbolicLink()) {
      throw new ConfigError(`${link} is not a symlink; move it away so builds can be published`);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = join(out, `.${CURRENT}-${process.pid}-${randomBytes(3).toString("hex")}`);
  symlinkSync(`${BUILDS}/${id}`, tmp);
  try {
    renameSync(tmp, link);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
}

function createdAt(dir: string): number {
  const m = readManifest(join(dir, MANIFEST));
  const t = m ? Date.parse(m.created_at) : Number.NaN;
  return Number.isNaN(t) ? statSync(dir).mtimeMs : t;
}

/** Keeps the published build and the newest others up to `keep` in all; returns the ids removed. */
export async function pruneBuilds(out: string, keep: number): Promise<string[]> {
  const builds = join(out, BUILDS);
  const current = currentBuild(out)?.id;
  const others = readdirSync(builds, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.endsWith(PARTIAL) && !d.name.endsWith(REMOVING) && d.name !== current)
    .map((d) => ({ id: d.name, t: createdAt(join(builds, d.name)) }))
    .sort((a, b) => b.t - a.t || (a.id < b.id ? 1 : -1));
  const removed = others.slice(Math.max(0, keep - (current ? 1 : 0))).map((b) => b.id);
  // Renamed first (an old build's id is never half there), then deleted off the event loop: a
  // server in the same process (gridcast start) keeps answering while thousands of files go.
  for (const id of removed) {
    const gone = join(builds, `${id}.${randomBytes(3).toString("hex")}${REMOVING}`);
    renameSync(join(builds, id), gone);
    await rm(gone, { recursive: true, force: true });
  }
  return removed;
}
