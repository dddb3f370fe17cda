// Documents the server writes itself for one published build and one base URL: the catalog and
// the WMTS capabilities when the build was written for another base (or none). Each is made once
// per build and base, with its compressed bodies and ETags beside it like a build file
// (static-cache.ts), and answered from memory by sendCached: a warm request neither serialises,
// hashes nor compresses anything. Kept per build (a WeakMap on its catalog, gone with the build)
// and for the latest few bases only, so a client cannot grow it.
import { hash } from "node:crypto";
import { type CachedFile, cachedDocument } from "./static-cache.ts";

/** Bases kept per build and document (public_url and, behind a trusted proxy, the host or two it is reached at). */
export const BASES_PER_DOCUMENT = 2;

interface Made {
  file?: CachedFile;
  ready: Promise<CachedFile>;
}

const made = new WeakMap<object, Map<string, Map<string, Made>>>();

/**
 * The document `name` of the build `owner` stands for, written for `base` by `write` (called at
 * most once per build, name and base while kept): the entry itself once made, else a promise of it.
 */
export function liveDocument(
  owner: object,
  name: string,
  base: string,
  type: string,
  write: () => string,
): CachedFile | Promise<CachedFile> {
  let byName = made.get(owner);
  if (!byName) made.set(owner, (byName = new Map()));
  let byBase = byName.get(name);
  if (!byBase) byName.set(name, (byBase = new Map()));
  const known = byBase.get(base);
  if (known) return known.file ?? known.ready;
  const bytes = Buffer.from(write());
  const entry: Made = {
    ready: cachedDocument(bytes, type, `"${hash("sha1", bytes, "base64url")}"`, madeAt(), true),
  };
  entry.ready.then(
    (file) => {
      entry.file = file;
    },
    // A failed compression is not kept: the next request makes the document again.
    () => byBase.delete(base),
  );
  if (byBase.size >= BASES_PER_DOCUMENT) byBase.delete(byBase.keys().next().value as string);
  byBase.set(base, entry);
  return entry.ready;
}

/** Last-Modified of a document made now: whole seconds, as the header carries them. */
function madeAt(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000);
}
