// Reading one tile out of a build's PMTiles archive on the server, trusting none of its bytes:
// the header and every directory are checked (archive-check.ts) against the file's size, the
// spec and the named limits before any number in them is used, then kept decoded. A tile read
// costs one open and fstat, the header and the directories on its path (cached), and one read of
// at most MAX_TILE_BYTES: nothing depends on the archive's size or its number of tiles.
//
// A damaged archive answers with a CorruptDataError (a logged 500 naming the archive) and is
// remembered as damaged for as long as the file is the same (device, inode, size, mtime), so
// every later read of it, raw Range reads included, fails the same way instead of serving
// whatever tiles happen to pass. Memory is bounded by named limits whatever the archives hold.
import { type FileHandle, stat } from "node:fs/promises";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { zxyToTileId } from "pmtiles";
import { openExactly } from "../confined.ts";
import { CorruptDataError, StoreUnavailableError } from "../errors.ts";
import {
  ArchiveDefect,
  type ArchiveHeader,
  COMPRESSION_GZIP,
  checkWholeRoot,
  type Directory,
  decodeDirectory,
  findEntry,
  HEADER_BYTES,
  MAX_DIRECTORY_DECODED,
  MAX_DIRECTORY_DEPTH,
  parseHeader,
} from "./archive-check.ts";

/** Memory for decoded directories, shared by all archives (least recently used dropped first). */
export const DIRECTORY_CACHE_BYTES = 64 << 20;
/** Archive headers kept, most recently used first. */
export const ARCHIVES_KEPT = 256;
/** Damaged archives remembered (oldest forgotten first; a forgotten one fails again when read). */
export const DAMAGED_KEPT = 4096;

const gunzipAsync = promisify(gunzip);

/** One archive file as opened: identity (device, inode, size, mtime) and size. */
interface Opened {
  fh: FileHandle;
  identity: string;
  size: number;
}

const headers = new Map<string, ArchiveHeader>();
const directories = new Map<string, Directory>();
let directoryBytes = 0;
const pending = new Map<string, Promise<Directory>>();
const damaged = new Map<string, string>();

function keep<V>(map: Map<string, V>, key: string, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > limit) map.delete(map.keys().next().value!);
}

function identityOf(st: { dev: number; ino: number; size: number; mtimeMs: number }): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

async function readExactly(o: Opened, offset: number, length: number, what: string): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  const { bytesRead } = await o.fh.read(buf, 0, length, offset);
  if (bytesRead !== length) throw new ArchiveDefect(`${what} at ${offset}: read ${bytesRead} of ${length} bytes`);
  return buf;
}

async function headerOf(o: Opened): Promise<ArchiveHeader> {
  let h = headers.get(o.identity);
  if (!h) {
    const b = await readExactly(o, 0, Math.min(HEADER_BYTES, o.size), "header");
    h = parseHeader(b, o.size);
  }
  keep(headers, o.identity, h, ARCHIVES_KEPT);
  return h;
}

async function decompress(raw: Buffer, h: ArchiveHeader): Promise<Buffer> {
  if (h.internalCompression !== COMPRESSION_GZIP) {
    if (raw.length > MAX_DIRECTORY_DECODED) throw new ArchiveDefect(`a ${raw.length}-byte directory`);
    return raw;
  }
  try {
    return await gunzipAsync(raw, { maxOutputLength: MAX_DIRECTORY_DECODED });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_BUFFER_TOO_LARGE")
      throw new ArchiveDefect(`a directory decompresses past ${MAX_DIRECTORY_DECODED} bytes`);
    throw new ArchiveDefect(`a directory does not decompress (${code ?? "bad gzip"})`);
  }
}

async function directoryAt(
  o: Opened,
  h: ArchiveHeader,
  offset: number,
  length: number,
  lo: number,
  hi: number,
  root: boolean,
): Promise<Directory> {
  const key = `${o.identity}|${offset}|${length}|${lo}|${hi}`;
  const hit = directories.get(key);
  if (hit) {
    directories.delete(key);
    directories.set(key, hit);
    return hit;
  }
  let p = pending.get(key);
  if (!p) {
    p = (async () => {
      const raw = await readExactly(o, offset, length, "directory");
      const d = decodeDirectory(await decompress(raw, h), h, { lo, hi });
      if (root) checkWholeRoot(d, h);
      directories.set(key, d);
      directoryBytes += d.bytes;
      for (const [k, old] of directories) {
        if (directoryBytes <= DIRECTORY_CACHE_BYTES) break;
        directories.delete(k);
        directoryBytes -= old.bytes;
      }
      return d;
    })().finally(() => pending.delete(key));
    pending.set(key, p);
  }
  return p;
}

/** The tile's byte range in the file, or undefined when the archive has no such tile. */
async function locate(o: Opened, h: ArchiveHeader, id: number): Promise<[number, number] | undefined> {
  let offset = h.rootOffset;
  let length = h.rootLength;
  let lo = 0;
  let hi = h.idLimit;
  for (let depth = 0; depth < MAX_DIRECTORY_DEPTH; depth++) {
    const d = await directoryAt(o, h, offset, length, lo, hi, depth === 0);
    const i = findEntry(d.ids, id);
    if (i < 0) return undefined;
    if (!d.leaves) return id < d.ids[i] + d.runs[i] ? [h.dataOffset + d.offsets[i], d.lengths[i]] : undefined;
    lo = d.ids[i];
    if (i + 1 < d.ids.length) hi = d.ids[i + 1];
    offset = h.leavesOffset + d.offsets[i];
    length = d.lengths[i];
  }
  throw new ArchiveDefect(`leaf directories nested deeper than ${MAX_DIRECTORY_DEPTH} levels`);
}

function damage(path: string, identity: string, what: string): CorruptDataError {
  keep(damaged, identity, what, DAMAGED_KEPT);
  const e = new CorruptDataError("a published tile archive is damaged; the tile cannot be served");
  e.logFields = { archive: path, defect: what };
  return e;
}

/** Throws the damage found earlier in this very file, if any. */
function refuseKnown(path: string, identity: string): void {
  const what = damaged.get(identity);
  if (what !== undefined) throw damage(path, identity, `${what} (found earlier)`);
}

/**
 * Throws when the file at `path` is an archive already found damaged (a raw read of it must not
 * be served as good data); a missing file or one never found damaged passes.
 */
export async function refuseDamagedArchive(path: string): Promise<void> {
  if (damaged.size === 0) return;
  const st = await stat(path).catch(() => undefined);
  if (st) refuseKnown(path, identityOf(st));
}

/**
 * The tile's bytes; undefined when the archive has no such tile, null when there is no such
 * archive. A damaged archive throws CorruptDataError, a failing disk StoreUnavailableError; both
 * carry the archive's path in logFields (for the log line, never the client).
 */
export async function archiveTile(path: string, z: number, x: number, y: number): Promise<Buffer | undefined | null> {
  let fh: FileHandle;
  try {
    // The very file whose real path was checked, never what a swapped directory leads to.
    fh = await openExactly(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw unreadable(path, e);
  }
  let identity = "";
  try {
    const st = await fh.stat();
    if (!st.isFile()) return null;
    identity = identityOf(st);
    refuseKnown(path, identity);
    const o = { fh, identity, size: st.size };
    const h = await headerOf(o);
    if (z < h.minZoom || z > h.maxZoom || x >= 2 ** z || y >= 2 ** z) return undefined;
    const at = await locate(o, h, zxyToTileId(z, x, y));
    return at ? await readExactly(o, at[0], at[1], "tile") : undefined;
  } catch (e) {
    if (e instanceof ArchiveDefect) throw damage(path, identity, e.message);
    if (e instanceof CorruptDataError) throw e;
    throw unreadable(path, e);
  } finally {
    await fh.close();
  }
}

function unreadable(path: string, e: unknown): StoreUnavailableError {
  const err = new StoreUnavailableError("a published tile archive cannot be read right now", {}, { cause: e });
  err.logFields = { archive: path, error: (e as NodeJS.ErrnoException).code ?? String(e) };
  return err;
}
