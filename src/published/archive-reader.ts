// Reading tiles out of the build's PMTiles archives on the server, with the pmtiles package's own
// directory logic over a local file. Memory is bounded by two named limits whatever the number or
// size of archives: decoded directories shared by all archives, and archive objects kept.
import { PMTiles, SharedPromiseCache, type Source } from "pmtiles";
import { openExactly } from "../confined.ts";

/** Decoded headers and directories kept (each at most one leaf: a few thousand entries). */
export const DIRECTORY_CACHE_ENTRIES = 64;
/** Archive readers kept, most recently used first; a reader holds no file handle. */
export const ARCHIVES_KEPT = 256;

/** Byte ranges of one archive file: opened per read, so a pruned build never pins a file. */
class FileRangeSource implements Source {
  readonly #path: string;
  constructor(path: string) {
    this.#path = path;
  }
  getKey(): string {
    return this.#path;
  }
  async getBytes(offset: number, length: number): Promise<{ data: ArrayBuffer }> {
    // The very file whose real path was checked, never what a swapped directory leads to.
    const fh = await openExactly(this.#path);
    try {
      const buf = Buffer.allocUnsafe(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      const out = new ArrayBuffer(bytesRead);
      new Uint8Array(out).set(buf.subarray(0, bytesRead));
      return { data: out };
    } finally {
      await fh.close();
    }
  }
}

const shared = new SharedPromiseCache(DIRECTORY_CACHE_ENTRIES);
const readers = new Map<string, PMTiles>();

function reader(path: string): PMTiles {
  let r = readers.get(path);
  if (r) readers.delete(path);
  else r = new PMTiles(new FileRangeSource(path), shared);
  readers.set(path, r);
  if (readers.size > ARCHIVES_KEPT) readers.delete(readers.keys().next().value!);
  return r;
}

/** The tile's bytes; undefined when the archive has no such tile, null when there is no such archive. */
export async function archiveTile(path: string, z: number, x: number, y: number): Promise<Buffer | undefined | null> {
  try {
    const hit = await reader(path).getZxy(z, x, y);
    return hit ? Buffer.from(hit.data) : undefined;
  } catch (e) {
    // A failed read is not remembered: forget what was cached of this archive (a bounded look).
    readers.delete(path);
    for (const key of [...shared.cache.keys()]) if (key.startsWith(path)) shared.cache.delete(key);
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}
