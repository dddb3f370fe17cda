// The publish-time walk of a build's archives: every archive, the ones just assembled and the ones
// a rebuild hard-linked from the previous build alike, is read back whole (header, metadata, every
// directory, every entry) and must satisfy archive-check.ts with the exact totals its header
// states, so a damaged archive is never published. The tile bytes themselves are not read: their
// ranges are proven to tile the data section exactly, in id order, each content once.
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { CorruptDataError } from "../errors.ts";
import {
  ArchiveDefect,
  type ArchiveHeader,
  ClusteredChain,
  COMPRESSION_GZIP,
  checkTotals,
  decodeDirectory,
  HEADER_BYTES,
  MAX_DIRECTORY_DECODED,
  MAX_DIRECTORY_DEPTH,
  MAX_METADATA_BYTES,
  parseHeader,
} from "./archive-check.ts";
import { ARCHIVE_EXT } from "./format.ts";
import type { Manifest } from "./manifest.ts";

export interface ArchiveSummary {
  addressed: number;
  entries: number;
  contents: number;
  bytes: number;
}

function readAt(fd: number, offset: number, length: number, what: string): Buffer {
  const b = Buffer.allocUnsafe(length);
  const got = readSync(fd, b, 0, length, offset);
  if (got !== length) throw new ArchiveDefect(`${what} at ${offset}: read ${got} of ${length} bytes`);
  return b;
}

function inflate(raw: Buffer, h: ArchiveHeader, max: number, what: string): Buffer {
  if (h.internalCompression !== COMPRESSION_GZIP) {
    if (raw.length > max) throw new ArchiveDefect(`${what} of ${raw.length} bytes`);
    return raw;
  }
  try {
    return gunzipSync(raw, { maxOutputLength: max });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw new ArchiveDefect(`${what} decompresses past ${max} bytes`);
    throw new ArchiveDefect(`${what} does not decompress (${code ?? "bad gzip"})`);
  }
}

/** Reads the archive at `path` back whole; throws ArchiveDefect naming the first thing wrong. */
export function verifyArchive(path: string): ArchiveSummary {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const h = parseHeader(readAt(fd, 0, Math.min(HEADER_BYTES, size), "header"), size);
    const end = Math.max(
      h.rootOffset + h.rootLength,
      h.metadataOffset + h.metadataLength,
      h.leavesOffset + h.leavesLength,
      h.dataOffset + h.dataLength,
    );
    if (end !== size) throw new ArchiveDefect(`the file is ${size} bytes, its sections end at ${end}`);
    if (h.addressed < 1 || h.entries < 1 || h.contents < 1)
      throw new ArchiveDefect(`header counts ${h.addressed}/${h.entries}/${h.contents} (addressed/entries/contents)`);
    const meta = inflate(readAt(fd, h.metadataOffset, h.metadataLength, "metadata"), h, MAX_METADATA_BYTES, "metadata");
    try {
      JSON.parse(meta.toString("utf8"));
    } catch {
      throw new ArchiveDefect("metadata is not JSON");
    }
    const data = new ClusteredChain();
    const leaves = new ClusteredChain();
    let addressed = 0;
    let entries = 0;
    const walk = (offset: number, length: number, lo: number, hi: number, depth: number): void => {
      if (depth >= MAX_DIRECTORY_DEPTH)
        throw new ArchiveDefect(`leaf directories nested deeper than ${MAX_DIRECTORY_DEPTH} levels`);
      const raw = inflate(readAt(fd, offset, length, "directory"), h, MAX_DIRECTORY_DECODED, "a directory");
      const d = decodeDirectory(raw, h, { lo, hi });
      const n = d.ids.length;
      if (n === 0) throw new ArchiveDefect(`an empty directory at ${offset}`);
      for (let i = 0; i < n; i++) {
        if (d.leaves) {
          leaves.add(d.ids[i], d.offsets[i], d.lengths[i]);
          walk(h.leavesOffset + d.offsets[i], d.lengths[i], d.ids[i], i + 1 < n ? d.ids[i + 1] : hi, depth + 1);
        } else {
          data.add(d.ids[i], d.offsets[i], d.lengths[i]);
          addressed += d.runs[i];
          entries++;
        }
      }
    };
    walk(h.rootOffset, h.rootLength, 0, h.idLimit, 0);
    checkTotals(h, { addressed, entries, contents: data.distinct, dataEnd: data.end });
    if (leaves.end !== h.leavesLength)
      throw new ArchiveDefect(`leaf directories end at ${leaves.end} of a ${h.leavesLength}-byte section`);
    return { addressed, entries, contents: data.distinct, bytes: size };
  } finally {
    closeSync(fd);
  }
}

/** How many archive defects a refused publish names (the rest are counted). */
const NAMED = 5;

/**
 * Verifies every archive of a partial build before it may be published; throws CorruptDataError
 * naming the damaged archives (relative to the build) and what is wrong with each.
 */
export function verifyBuildArchives(dir: string, manifest: Manifest): number {
  const bad: string[] = [];
  let checked = 0;
  for (const e of manifest.entries) {
    const rel = join("tiles", e.key) + ARCHIVE_EXT;
    const path = join(dir, rel);
    if (!existsSync(path)) continue;
    checked++;
    try {
      verifyArchive(path);
    } catch (err) {
      if (!(err instanceof ArchiveDefect)) throw err;
      bad.push(`${rel}: ${err.message}`);
    }
  }
  if (bad.length) {
    const more = bad.length > NAMED ? `; and ${bad.length - NAMED} more` : "";
    throw new CorruptDataError(
      `build ${manifest.build_id} has ${bad.length} damaged tile archives (${bad.slice(0, NAMED).join("; ")}${more}); ` +
        "nothing was published and the published build is unchanged",
    );
  }
  return checked;
}
