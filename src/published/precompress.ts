// Compressed twins of a build's text documents, written once at build time: catalog.json,
// TileJSON, legend JSON, the viewer and its vendor files, and whatever other JSON, HTML, JS, CSS
// or XML document the build holds (a WMTS capabilities document among them). Each document gets
// <name>.br and <name>.gz beside it when they are smaller; the server answers from them by
// Accept-Encoding (static-cache.ts, static.ts), so no client waits for a compressor. tiles/ (PNG,
// and far too many entries to walk) and embeddings/ (private, served by keyed routes) are left out.
import { lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, gzipSync, constants as z } from "node:zlib";
import { CODING_SUFFIX, compressibleName } from "../content-coding.ts";

/** Top-level folders of a build whose files are never documents to compress. */
const SKIPPED_DIRS = new Set(["tiles", "embeddings", "point"]);
/** Below this size a document goes out as it is: a compressed twin would save next to nothing. */
export const PRECOMPRESS_MIN_BYTES = 256;
/** Brotli's best quality for documents up to this size; larger ones (a huge catalog) get a faster one. */
const BEST_QUALITY_MAX_BYTES = 1024 * 1024;
const BROTLI_BEST = 11;
const BROTLI_LARGE = 7;
const GZIP_LEVEL = 9;

export interface Precompressed {
  documents: number;
  bytesIn: number;
  brBytes: number;
  gzipBytes: number;
}

/** Writes the twins of every document below `dir` (a build not yet published); returns totals. */
export function precompressBuild(dir: string): Precompressed {
  const totals: Precompressed = { documents: 0, bytesIn: 0, brBytes: 0, gzipBytes: 0 };
  walk(dir, true, totals);
  return totals;
}

function walk(dir: string, top: boolean, totals: Precompressed): void {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    // lstat: a symlink is never followed out of the build, nor compressed under another name.
    const st = lstatSync(path);
    if (st.isDirectory()) {
      if (!(top && SKIPPED_DIRS.has(name))) walk(path, false, totals);
      continue;
    }
    if (!st.isFile() || !compressibleName(name) || st.size < PRECOMPRESS_MIN_BYTES) continue;
    const bytes = readFileSync(path);
    const quality = bytes.length <= BEST_QUALITY_MAX_BYTES ? BROTLI_BEST : BROTLI_LARGE;
    const br = brotliCompressSync(bytes, {
      params: { [z.BROTLI_PARAM_QUALITY]: quality, [z.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    });
    const gz = gzipSync(bytes, { level: GZIP_LEVEL });
    totals.documents++;
    totals.bytesIn += bytes.length;
    if (br.length < bytes.length) {
      writeFileSync(path + CODING_SUFFIX.br, br);
      totals.brBytes += br.length;
    }
    if (gz.length < bytes.length) {
      writeFileSync(path + CODING_SUFFIX.gzip, gz);
      totals.gzipBytes += gz.length;
    }
  }
}
