// Where a tile worker puts tiles when the build writes archives. It takes the same calls as the
// z/x/y TileWriter (the renderer names each tile by its z/x/y path) but appends the bytes to one
// part file per lead and records (tile id, offset, length, content hash) beside it; a lead split
// over several threads leaves several parts. finalize (assemble.ts) merges a lead's parts into its
// archive. Identical tiles within a part are stored once; across parts, assembly dedupes again.
import { createHash } from "node:crypto";
import { closeSync, linkSync, mkdirSync, openSync, readdirSync, readSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { threadId } from "node:worker_threads";
import { zxyToTileId } from "pmtiles";
import { ARCHIVE_EXT } from "./format.ts";

/** One index record: tile id (f64), offset (f64), length (u32), md5 (16 bytes). */
export const RECORD_BYTES = 36;
export const PART_DATA = ".data";
export const PART_INDEX = ".idx";
const PART = ".part-";

interface OpenPart {
  fd: number;
  path: string;
  size: number;
  records: Buffer[];
  /** md5 → offset in this part. */
  seen: Map<string, { offset: number; length: number }>;
}

interface Written {
  part: OpenPart;
  offset: number;
  length: number;
}

const TILE_PATH = /^(.*)\/(\d+)\/(\d+)\/(\d+)\.png$/;

/** Part files of the lead whose z/x/y folder would be `leadDir`, as `<leadDir>.part-<id>`. */
export function partsOf(leadDir: string): string[] {
  const name = basename(leadDir) + PART;
  try {
    return readdirSync(dirname(leadDir))
      .filter((f) => f.startsWith(name) && f.endsWith(PART_INDEX))
      .map((f) => join(dirname(leadDir), f.slice(0, -PART_INDEX.length)));
  } catch {
    return [];
  }
}

export class ArchiveSink {
  readonly #open = new Map<string, OpenPart>();
  /** Tiles written by the current job, by path: the renderer links repeats to the first one. */
  readonly #written = new Map<string, Written>();
  #seq = 0;

  ensureDir(_dir: string): void {}

  #part(leadDir: string): OpenPart {
    let p = this.#open.get(leadDir);
    if (!p) {
      mkdirSync(dirname(leadDir), { recursive: true });
      const path = `${leadDir}${PART}${process.pid}-${threadId}-${this.#seq++}`;
      p = { fd: openSync(path + PART_DATA, "w+"), path, size: 0, records: [], seen: new Map() };
      this.#open.set(leadDir, p);
    }
    return p;
  }

  #record(part: OpenPart, path: string, bytes: Uint8Array): void {
    const m = TILE_PATH.exec(path);
    if (!m) throw new Error(`not a tile path: ${path}`);
    const [, , z, x, y] = m;
    const md5 = createHash("md5").update(bytes).digest();
    const key = md5.toString("hex");
    let at = part.seen.get(key);
    if (!at) {
      at = { offset: part.size, length: bytes.length };
      writeSync(part.fd, bytes, 0, bytes.length, part.size);
      part.size += bytes.length;
      part.seen.set(key, at);
    }
    const rec = Buffer.alloc(RECORD_BYTES);
    rec.writeDoubleLE(zxyToTileId(Number(z), Number(x), Number(y)), 0);
    rec.writeDoubleLE(at.offset, 8);
    rec.writeUInt32LE(at.length, 16);
    md5.copy(rec, 20);
    part.records.push(rec);
    this.#written.set(path, { part, offset: at.offset, length: at.length });
  }

  write(path: string, bytes: Uint8Array): void {
    this.#record(this.#part(path.replace(TILE_PATH, "$1")), path, bytes);
  }

  /** The renderer repeats a tile (one colour throughout) by linking to the first path written. */
  link(src: string, dst: string): void {
    const first = this.#written.get(src);
    if (!first) throw new Error(`link from a tile this job did not write: ${src}`);
    const bytes = Buffer.alloc(first.length);
    readSync(first.part.fd, bytes, 0, first.length, first.offset);
    this.write(dst, bytes);
  }

  /** Drops whatever this build holds for a lead (its archive and parts). */
  removeTree(leadDir: string): void {
    const open = this.#open.get(leadDir);
    if (open) {
      closeSync(open.fd);
      this.#open.delete(leadDir);
    }
    rmSync(leadDir + ARCHIVE_EXT, { force: true });
    for (const p of partsOf(leadDir)) {
      rmSync(p + PART_DATA, { force: true });
      rmSync(p + PART_INDEX, { force: true });
    }
  }

  /** Reuse: hard-links the previous build's archive of the lead; undefined when it has none. */
  linkTree(srcDir: string, dstDir: string): number | undefined {
    const src = srcDir + ARCHIVE_EXT;
    let fd: number;
    try {
      fd = openSync(src, "r");
    } catch {
      return undefined;
    }
    const header = Buffer.alloc(127);
    try {
      readSync(fd, header, 0, 127, 0);
    } finally {
      closeSync(fd);
    }
    mkdirSync(dirname(dstDir), { recursive: true });
    rmSync(dstDir + ARCHIVE_EXT, { force: true });
    linkSync(src, dstDir + ARCHIVE_EXT);
    return Number(header.readBigUInt64LE(72));
  }

  /** Ends the job: every open part gets its index, and is closed. */
  flush(): void {
    for (const part of this.#open.values()) {
      closeSync(part.fd);
      const fd = openSync(part.path + PART_INDEX, "w");
      try {
        writeSync(fd, Buffer.concat(part.records));
      } finally {
        closeSync(fd);
      }
    }
    this.#open.clear();
    this.#written.clear();
  }
}
