// A store in a local directory: confined reads below its root (never through a symlink out), with
// the addon's single-call read where it is built, and stat-based stamps shared for a short while.
import { statSync } from "node:fs";
import { type FileHandle, readdir, realpath, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { type Confined, MISSING_CODES, openBelow } from "../confined.ts";
import { GridcastError, StoreUnavailableError } from "../errors.ts";
import { nativeAddon } from "../native.ts";
import { type Backend, fault, type RangeQuery, rangeHeader } from "./backend.ts";
import { confineKey } from "./keys.ts";
import { type NOT_YET, StampMemo } from "./stamp-memo.ts";

/** How long a file's stat is shared by the reads that ask for it (see StampMemo). */
export const LOCAL_STAMP_TTL_MS = 100;

const MISSING = MISSING_CODES;
// The addon's readFile answers -errno (ENOENT 2, ENOTDIR 20, EISDIR 21, ELOOP 40 are "missing"), or these.
const NATIVE_MISSING = new Set([-2, -20, -21, -40]);
const NATIVE_TOO_BIG = -100000;
const NATIVE_CHANGED = -100001;
/** The key leads out of the store's root (a symlink out, or ".." above it): treated as missing. */
const NATIVE_OUTSIDE = -100002;

export class DirectoryBackend implements Backend {
  readonly root: string;
  readonly description: string;
  #realRoot: Promise<string> | undefined;
  readonly #stamps = new StampMemo(LOCAL_STAMP_TTL_MS);

  constructor(root: string) {
    this.root = resolve(root);
    this.description = `directory store ${this.root}`;
  }

  /** A key's path under the root, confined lexically (no `..` out of it); undefined if it leaves. */
  #lexical(key: string): string | undefined {
    const full = join(this.root, confineKey(key));
    return full === this.root || full.startsWith(this.root + sep) ? full : undefined;
  }

  #resolvedRoot(): Promise<string> {
    this.#realRoot ??= realpath(this.root).catch(() => this.root);
    return this.#realRoot;
  }

  /**
   * A key's file (or directory) opened, when it lies inside the root; undefined when missing or
   * outside. Checked on the open descriptor (confined.ts), so a directory swapped for a symlink
   * while the key is resolved cannot lead out. Symlinks that stay inside are followed.
   */
  async #open(key: string, directory = false): Promise<Confined | undefined> {
    const full = this.#lexical(key);
    if (!full) return undefined;
    try {
      return await openBelow(await this.#resolvedRoot(), full, { directory });
    } catch (e) {
      throw unavailable(e);
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.#withFile(key, async (fh, size) => {
      const buf = Buffer.allocUnsafe(size);
      return this.#readAll(fh, buf, size, key);
    });
  }

  /** `size` bytes of an open file into buf; a file cut short meanwhile is refused, never padded. */
  async #readAll(fh: FileHandle, buf: Uint8Array, size: number, key: string): Promise<Uint8Array> {
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(buf, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    if (at !== size) {
      throw fault(this, key, "the stored object changed while it was read", { detail: `read ${at}/${size}` });
    }
    return buf.byteLength === size ? buf : buf.subarray(0, size);
  }

  async getInto(key: string, take: (size: number) => Uint8Array, expect?: number): Promise<Uint8Array | undefined> {
    // One job on libuv's pool through the native addon (open below the root, fstat, read, close)
    // when the caller knows how large the file should be at most; a larger file (or no addon)
    // takes node:fs's open, check, fstat, read and close.
    const readFile = expect === undefined ? undefined : nativeAddon()?.readFile;
    if (readFile && expect !== undefined) {
      if (!this.#lexical(key)) return undefined;
      const realRoot = await this.#resolvedRoot();
      const buf = take(expect);
      const n = await readFile(confineKey(key), buf, realRoot);
      if (n >= 0) return buf.subarray(0, n);
      if (NATIVE_MISSING.has(n) || n === NATIVE_OUTSIDE) return undefined;
      if (n !== NATIVE_TOO_BIG) {
        const detail = n === NATIVE_CHANGED ? "the file ended before its stated size" : `errno ${-n}`;
        throw fault(this, key, "the store cannot be read right now", { detail });
      }
    }
    return this.#withFile(key, (fh, size) => this.#readAll(fh, take(size), size, key));
  }

  async getRange(key: string, range: RangeQuery): Promise<Uint8Array | undefined> {
    return this.#withFile(key, async (fh, size) => {
      const offset = "suffixLength" in range ? size - range.suffixLength : range.offset;
      const length = "suffixLength" in range ? range.suffixLength : range.length;
      // A range past the end means the object is shorter than its index says: refuse, never pad.
      if (offset < 0 || offset + length > size) {
        throw fault(this, key, "the stored object is shorter than the range asked for", {
          detail: `asked ${rangeHeader(range)} of a ${size}-byte object`,
        });
      }
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      if (bytesRead !== length) {
        throw fault(this, key, "the stored object changed while it was read", {
          detail: `read ${bytesRead}/${length}`,
        });
      }
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    });
  }

  /**
   * Open a key's file inside the root and hand it with its size to `use`, closing it whatever
   * happens; a file missing (or outside) is undefined, other I/O failures are faults naming the key.
   */
  async #withFile<T>(key: string, use: (fh: FileHandle, size: number) => Promise<T>): Promise<T | undefined> {
    const file = await this.#open(key);
    if (!file) return undefined;
    try {
      return await use(file.fh, file.st.size);
    } catch (e) {
      if (e instanceof GridcastError) throw e;
      throw fault(this, key, "the store cannot be read right now", { cause: e });
    } finally {
      await file.fh.close();
    }
  }

  async size(key: string): Promise<number | undefined> {
    const file = await this.#open(key);
    if (!file) return undefined;
    await file.fh.close();
    return file.st.size;
  }

  /** Versions from stat, shared for LOCAL_STAMP_TTL_MS: a rewritten file is seen within that. */
  stamp(key: string): Promise<string | undefined> {
    return this.#stamps.get(key, () => this.#stat(key));
  }

  /** A stat now (metadata revalidation: a handful of documents every check interval). */
  freshStamp(key: string): Promise<string | undefined> {
    return this.#stat(key);
  }

  /**
   * freshStamp() of many keys at once, each a stat now, taken one after the other on this thread:
   * for tens of thousands of keys a plain loop of stat calls costs a fraction of as many promises.
   */
  freshStamps(keys: readonly string[]): (string | undefined)[] {
    return keys.map((key) => {
      // Lexical confinement (join resolves "..") is enough for a stat: nothing is read.
      const full = join(this.root, key);
      if (full !== this.root && !full.startsWith(this.root + sep)) return undefined;
      try {
        const st = statSync(full, { bigint: true, throwIfNoEntry: false });
        return st && `${st.mtimeNs}:${st.ctimeNs}:${st.size}:${st.ino}`;
      } catch (e) {
        throw fault(this, key, "the store cannot be read right now", { cause: e });
      }
    });
  }

  stampNow(key: string): string | undefined | typeof NOT_YET {
    return this.#stamps.peek(key, () => this.#stat(key));
  }

  async #stat(key: string): Promise<string | undefined> {
    // stat, not realpath + lstat: only the version is returned, never bytes, and this runs per chunk.
    try {
      const st = await stat(join(this.root, confineKey(key)), { bigint: true });
      return `${st.mtimeNs}:${st.ctimeNs}:${st.size}:${st.ino}`;
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return undefined;
      throw fault(this, key, "the store cannot be read right now", { cause: e });
    }
  }

  async listDirs(prefix: string): Promise<string[] | undefined> {
    const dir = await this.#open(prefix, true);
    if (!dir) return [];
    try {
      // Listed through the open descriptor: the directory checked is the directory listed.
      const entries = await readdir(dir.handlePath, { withFileTypes: true });
      return entries
        .filter((d) => d.isDirectory() && !d.name.startsWith("."))
        .map((d) => d.name)
        .sort();
    } catch (e) {
      if (MISSING.has((e as NodeJS.ErrnoException).code ?? "")) return [];
      throw unavailable(e);
    } finally {
      await dir.fh.close();
    }
  }
}

/**
 * When the object a stamp of this backend describes last changed (its later of mtime and ctime),
 * in ms since the epoch; undefined for a stamp of another form. Two writes within one tick of the
 * file system's clock can leave the same stamp: a caller trusting stamps across runs needs this to
 * refuse ones taken too soon after the change.
 */
export function stampChangedMs(stamp: string): number | undefined {
  const [m, c] = stamp.split(":");
  if (!/^\d+$/.test(m ?? "") || !/^\d+$/.test(c ?? "")) return undefined;
  return Number((BigInt(m) > BigInt(c) ? BigInt(m) : BigInt(c)) / 1_000_000n);
}

function unavailable(cause: unknown): StoreUnavailableError {
  return new StoreUnavailableError("the store cannot be read right now", {}, { cause });
}
