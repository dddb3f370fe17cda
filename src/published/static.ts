// One file of the published build answered directly: the request path maps to one file below the
// build root, nothing lists or remembers the build's files. ETags come from the one file's stat
// (inode, size, mtime: a build never rewrites a file in place, it writes a new build), so serving
// costs the same whatever the build's size. Symlinks are followed only while they stay inside the
// build and lead to a public file there (checked on the open descriptor, so a directory swapped
// for a symlink meanwhile cannot lead out); anything else, dotfiles and non-files answer "not
// here" (the caller's 404).

import { createHash } from "node:crypto";
import { createReadStream, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, sep } from "node:path";
import { pipeline } from "node:stream";
import { memoByText } from "../bounded-map.ts";
import { ifNoneMatch, notModifiedSince, parseRange } from "../conditional.ts";
import { openBelow } from "../confined.ts";
import { type Chosen, CODING_SUFFIX, chooseCoding, codedEtag, compressibleName } from "../content-coding.ts";

/** Content types by extension; anything else is sent as bytes. */
const TYPES: Record<string, string> = {
  ".png": "image/png",
  ".json": "application/json; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".pmtiles": "application/vnd.pmtiles",
  ".map": "application/json; charset=utf-8",
  ".xml": "application/xml; charset=utf-8",
};

/** Run tiles (files and archives) never change once published; everything else changes each build. */
export const IMMUTABLE = "public, max-age=31536000, immutable";
export const SHORT = "public, max-age=60";

/** Path segments that never name a public file. */
function refused(segment: string): boolean {
  return segment === "" || segment.startsWith(".") || segment.includes("\\") || segment.includes("\0");
}

/** A path's segments and the key they make ("a/b.png"), as segmentsOf and a join give them. */
export interface PathParts {
  readonly parts: string[];
  readonly key: string;
}

/** Parts by path; null for a path whose segments are refused. Frozen: every request shares them. */
const partsOf = memoByText(
  (path): PathParts | null => {
    const parts = segmentsOf(path);
    return parts ? Object.freeze({ parts: Object.freeze(parts) as string[], key: parts.join("/") }) : null;
  },
  4096,
  512,
);

/**
 * segmentsOf and the key, kept per path: a viewer asks for the same few hundred tiles again and
 * again, and the split, the checks and the join are a function of the path alone. Bounded in
 * entries and in the length of a path kept, so what it holds never grows with the build.
 */
export function pathParts(path: string): PathParts | undefined {
  return partsOf(path) ?? undefined;
}

/** "/a/b.png" → ["a", "b.png"], or undefined when a segment is refused. "/" is the index page. */
export function segmentsOf(path: string): string[] | undefined {
  const trimmed = path.replace(/^\/+/, "");
  const parts = trimmed === "" ? ["index.html"] : trimmed.split("/");
  if (parts.at(-1) === "" && parts.length > 1) parts[parts.length - 1] = "index.html";
  return parts.some(refused) ? undefined : parts;
}

export function contentType(name: string): string {
  return TYPES[extname(name).toLowerCase()] ?? "application/octet-stream";
}

export function etagOf(st: Stats): string {
  return `"${st.ino.toString(36)}-${st.size.toString(36)}-${Math.floor(st.mtimeMs).toString(36)}"`;
}

/** Decides from where a file really is (segments below the build root) whether it may be served. */
export type LocationCheck = (segments: string[]) => boolean;

/**
 * An open regular file inside `root` (a real path) whose real location passes `isPublic` and holds
 * no refused segment, or undefined.
 */
export async function openInside(
  root: string,
  parts: string[],
  isPublic: LocationCheck = () => true,
): Promise<{ fh: FileHandle; st: Stats } | undefined> {
  const accept = (rel: string[]) => !rel.some(refused) && isPublic(rel);
  // Missing, a dangling or looping link, a file used as a directory, unreadable: not here.
  return openBelow(root, root + sep + parts.join(sep), { accept }).catch(() => undefined);
}

/**
 * Answers GET/HEAD for the file `parts` names below `root` (a real path). Resolves false when there
 * is no such public file, so the caller can fall through; true once a response is under way.
 */
export async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  root: string,
  parts: string[],
  cache: string,
  isPublic?: LocationCheck,
): Promise<boolean> {
  const file = await openInside(root, parts, isPublic);
  if (!file) return false;
  const name = parts.at(-1)!;
  const identityTag = etagOf(file.st);
  const lastModified = file.st.mtime.toUTCString();
  const varies = compressibleName(name);
  // A large document goes out as its build-time twin when the client takes one (static-cache.ts
  // keeps the smaller ones in memory); the twin is opened under the same confinement.
  const { fh, st, coding } = varies
    ? await codedTwin(req, root, parts, file, isPublic)
    : { ...file, coding: "identity" as const };
  const etag = codedEtag(identityTag, coding);
  // Added to what the caller already varies on (a document's base URL from the proxy headers).
  const prior = res.getHeader("Vary");
  if (varies) res.setHeader("Vary", prior ? `${prior}, Accept-Encoding` : "Accept-Encoding");
  res.setHeader("Cache-Control", cache);
  res.setHeader("ETag", etag);
  res.setHeader("Last-Modified", lastModified);
  if (ifNoneMatch(req, etag) || notModifiedSince(req, file.st.mtimeMs)) {
    await fh.close();
    res.statusCode = 304;
    res.end();
    return true;
  }
  res.setHeader("Content-Type", contentType(name));
  res.setHeader("Accept-Ranges", "bytes");
  if (coding !== "identity") res.setHeader("Content-Encoding", coding);
  const ifRange = req.headers["if-range"];
  const current = ifRange === undefined || ifRange === etag || ifRange === lastModified;
  const span = current ? parseRange(req.headers.range, st.size) : undefined;
  if (span === "unsatisfiable") {
    await fh.close();
    res.statusCode = 416;
    res.setHeader("Content-Range", `bytes */${st.size}`);
    res.setHeader("Content-Type", "application/problem+json");
    res.removeHeader("Content-Encoding");
    const body = JSON.stringify({
      type: "/problems/range-not-satisfiable",
      title: "Range Not Satisfiable",
      status: 416,
    });
    res.setHeader("Content-Length", Buffer.byteLength(body));
    res.end(body);
    return true;
  }
  const start = span?.start ?? 0;
  const end = span?.end ?? st.size - 1;
  res.statusCode = span ? 206 : 200;
  if (span) res.setHeader("Content-Range", `bytes ${start}-${end}/${st.size}`);
  res.setHeader("Content-Length", Math.max(0, end - start + 1));
  if (req.method === "HEAD" || st.size === 0 || res.destroyed) {
    await fh.close();
    res.end();
    return true;
  }
  // The stream owns the handle; pipeline closes it when the body is sent or the client goes away.
  const body = createReadStream("", { fd: fh, start, end, autoClose: true });
  pipeline(body, res, () => undefined);
  return true;
}

/**
 * The twin of an open document in the coding the client prefers among those the build wrote, or
 * the document itself (identity). The document's handle is closed when a twin is chosen.
 */
async function codedTwin(
  req: IncomingMessage,
  root: string,
  parts: string[],
  file: { fh: FileHandle; st: Stats },
  isPublic?: LocationCheck,
): Promise<{ fh: FileHandle; st: Stats; coding: Chosen }> {
  const available: ("br" | "gzip")[] = ["br", "gzip"];
  for (;;) {
    const coding = chooseCoding(req.headers["accept-encoding"], available);
    if (coding === "identity") return { ...file, coding };
    const twin = await openInside(root, [...parts.slice(0, -1), parts.at(-1)! + CODING_SUFFIX[coding]], isPublic);
    if (twin && twin.st.size < file.st.size) {
      await file.fh.close();
      return { ...twin, coding };
    }
    await twin?.fh.close();
    available.splice(available.indexOf(coding), 1);
  }
}

/** A small body already in memory (a tile out of an archive): ETag from its bytes, 304 and HEAD. */
export function sendBytes(req: IncomingMessage, res: ServerResponse, body: Buffer, type: string, cache: string): void {
  const etag = `"${createHash("sha1").update(body).digest("base64url")}"`;
  res.setHeader("Cache-Control", cache);
  res.setHeader("ETag", etag);
  if (ifNoneMatch(req, etag)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.statusCode = 200;
  res.setHeader("Content-Type", type);
  res.setHeader("Content-Length", body.length);
  res.end(req.method === "HEAD" ? undefined : body);
}
