// Files opened below a directory, checked on the descriptor rather than on the name. Resolving a
// path (realpath), checking it, then opening it by name lets a directory swapped for a symlink in
// between lead anywhere. Here the file is opened first, and the check asks the kernel where the
// open descriptor's file actually is (/proc/self/fd/N on Linux): whatever the path did meanwhile,
// the file read is the file checked. node:fs has no openat, so this is the JavaScript side's form
// of the addon's openat2 (native/beneath.h).
//
// Without /proc (not Linux), the descriptor is compared (device and inode) with what realpath
// names after the open: a narrower window than before, not none. Symlinks that stay inside are
// followed either way.
import { constants, type Stats } from "node:fs";
import { type FileHandle, open, readlink, realpath, stat } from "node:fs/promises";
import { sep } from "node:path";

/** Errors that mean "no such file here" (a dangling or looping link among them). */
export const MISSING_CODES = new Set(["ENOENT", "ENOTDIR", "EISDIR", "ELOOP", "ENAMETOOLONG"]);

// O_NONBLOCK: a FIFO swapped in cannot hold a thread of the pool in open().
const FILE_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;

export interface Confined {
  fh: FileHandle;
  st: Stats;
  /** The segments of where the file really is, below the root. */
  rel: string[];
  /** A path that reaches this very file (or directory) through the open descriptor. */
  handlePath: string;
}

let proc: boolean | undefined;

/** Where the open descriptor's file is now; undefined when the system cannot say. */
async function whereIs(fh: FileHandle): Promise<string | undefined> {
  if (proc === false) return undefined;
  try {
    const where = await readlink(`/proc/self/fd/${fh.fd}`);
    proc = true;
    return where;
  } catch (e) {
    if (proc === undefined) proc = false;
    throw e;
  }
}

/**
 * `path` opened for reading when the file it leads to lies below `root` (a real path) and is a
 * regular file (a directory with `directory`), and `accept` (given where the file really is,
 * relative to the root) agrees; undefined when missing or refused. Other I/O errors are thrown.
 */
export async function openBelow(
  root: string,
  path: string,
  opts: { directory?: boolean; accept?: (rel: string[]) => boolean } = {},
): Promise<Confined | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, opts.directory ? DIR_FLAGS : FILE_FLAGS);
  } catch (e) {
    if (MISSING_CODES.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw e;
  }
  let kept = false;
  try {
    const st = await fh.stat();
    if (opts.directory ? !st.isDirectory() : !st.isFile()) return undefined;
    let where = await whereIs(fh).catch(() => undefined);
    let handlePath = where === undefined ? undefined : `/proc/self/fd/${fh.fd}`;
    if (where === undefined) {
      where = await realpath(path).catch(() => undefined);
      const now = where === undefined ? undefined : await stat(where).catch(() => undefined);
      if (!now || now.ino !== st.ino || now.dev !== st.dev) return undefined;
      handlePath = where;
    }
    if (where === undefined) return undefined;
    if (!where.startsWith(root + sep) && !(opts.directory && where === root)) return undefined;
    const rel = where === root ? [] : where.slice(root.length + 1).split(sep);
    if (opts.accept && !opts.accept(rel)) return undefined;
    kept = true;
    return { fh, st, rel, handlePath: handlePath! };
  } finally {
    if (!kept) await fh.close();
  }
}

/** A whole file below `root`, read through openBelow; undefined when missing or refused. */
export async function readBelow(root: string, path: string): Promise<Buffer | undefined> {
  const file = await openBelow(root, path);
  if (!file) return undefined;
  try {
    return await file.fh.readFile();
  } finally {
    await file.fh.close();
  }
}

/**
 * `real` (a path already known to be real and in the right place) opened for reading only if the
 * descriptor is that very file: a directory of it swapped for a symlink since is refused (ENOENT).
 */
export async function openExactly(real: string): Promise<FileHandle> {
  const fh = await open(real, FILE_FLAGS);
  let where: string | undefined;
  try {
    where = await whereIs(fh).catch(() => undefined);
    if (where === undefined) {
      const [a, b] = await Promise.all([fh.stat(), stat(real)]);
      if (a.ino === b.ino && a.dev === b.dev) where = real;
    }
  } catch {
    where = undefined;
  }
  if (where !== real) {
    await fh.close();
    throw Object.assign(new Error("the file moved while it was opened"), { code: "ENOENT" });
  }
  return fh;
}
