// What the embedding indexes of a build were made from: every store key the survey read or listed
// (metadata documents, listed directories, the coordinate chunks the geometry comes from, and keys
// it looked for and did not find) with the version each had before it was read. A later build
// whose store gives every one of those keys the same version, run by the same code, would write
// the same index files: "embeddings unchanged" is then decided from a stat per key, without
// reading, parsing or projecting anything. Any key whose version differs, a version that cannot be
// had (a store without cheap versions, such as HTTP), a version taken too soon after its file
// changed, or other code, sends the build back to the full survey.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import pLimit from "p-limit";
import { stampChangedMs } from "../store/directory-backend.ts";
import { Store } from "../store/store.ts";
import { type SkippedEmbedding, writeEmbeddingIndexes } from "./index-writer.ts";

/** Beside the manifest, outside embeddings/ (so not part of the index files compared); a dotfile, never served. */
export const INPUTS_FILE = ".embedding-inputs.json";
const FORMAT = 1;
/**
 * A version whose file changed less than this before it was taken is not trusted: a second write
 * within the same tick of the file system's clock (and the same size and inode) would keep it.
 */
export const SETTLE_MS = 2000;
/** Versions asked for at once. */
const STAMP_CONCURRENCY = 64;

export interface IndexReport {
  items: number;
  indexes: number;
  skipped: SkippedEmbedding[];
}

interface InputsFile {
  format: number;
  /** Digest of the code that writes the indexes (every source file of gridcast and proj4's version). */
  code: string;
  /** Store keys read or listed, sorted. */
  keys: string[];
  /** SHA-256 over each key and its version (the versions themselves are not kept). */
  versions: string;
  report: IndexReport;
}

let codeDigest: string | undefined;

/** The code the indexes are written by: another gridcast (or proj4) may write other bytes from the same store. */
export function indexCodeDigest(): string {
  if (codeDigest) return codeDigest;
  const src = resolve(import.meta.dirname, "..");
  const h = createHash("sha256");
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith(".ts"))
    .map((d) => join(d.parentPath, d.name))
    .sort();
  for (const f of files) h.update(f.slice(src.length)).update("\0").update(readFileSync(f)).update("\0");
  const proj4 = resolve(src, "../node_modules/proj4/package.json");
  h.update(existsSync(proj4) ? String(JSON.parse(readFileSync(proj4, "utf8")).version) : "-");
  codeDigest = h.digest("hex");
  return codeDigest;
}

function versionsDigest(keys: string[], version: (key: string, i: number) => string): string {
  return createHash("sha256")
    .update(keys.map((k, i) => `${k}\t${version(k, i)}\n`).join(""))
    .digest("hex");
}

/**
 * Write the embedding indexes of `dir` from a store of its own on the same root (so that every
 * key the survey needs is read here, none answered from an earlier read), noting each key's version before it is
 * read; INPUTS_FILE goes into `dir` when every version could be had and had settled.
 */
export async function writeIndexesNoting(given: Store, dir: string): Promise<IndexReport> {
  if (!given.backend.freshStamp) return writeEmbeddingIndexes(given, dir);
  const store = new Store(given.root);
  const backend = store.backend;
  const fresh = backend.freshStamp!.bind(backend);
  const versions = new Map<string, Promise<string>>();
  let usable = true;
  const started = Date.now();
  backend.watchReads((key) => {
    let v = versions.get(key);
    if (!v) {
      v = fresh(key).then((s) => {
        if (s === undefined) return "-";
        const changed = stampChangedMs(s);
        if (changed === undefined || changed > started - SETTLE_MS) usable = false;
        return s;
      });
      versions.set(key, v);
    }
    return v.then(() => undefined);
  });
  let report: IndexReport;
  try {
    report = await writeEmbeddingIndexes(store, dir);
  } finally {
    backend.watchReads(undefined);
  }
  const got = new Map<string, string>();
  for (const [k, v] of versions) got.set(k, await v);
  if (!usable) return report;
  const keys = [...got.keys()].sort();
  const file: InputsFile = {
    format: FORMAT,
    code: indexCodeDigest(),
    keys,
    versions: versionsDigest(keys, (k) => got.get(k)!),
    report,
  };
  await mkdir(dirname(join(dir, INPUTS_FILE)), { recursive: true });
  await writeFile(join(dir, INPUTS_FILE), `${JSON.stringify(file)}\n`);
  return report;
}

/**
 * The published build's index report when the store still gives every key its survey read the
 * version noted then, and this code is the code that wrote them: its index files are what a survey
 * now would write. Undefined whenever that cannot be said (no note, other code, a key changed,
 * added or gone, or a store without cheap versions): the caller surveys.
 */
export async function unchangedEmbeddingInputs(store: Store, published: string): Promise<IndexReport | undefined> {
  const b = store.backend;
  const path = join(published, INPUTS_FILE);
  if (!b.freshStamp || !existsSync(path)) return undefined;
  let note: InputsFile;
  try {
    note = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  if (note.format !== FORMAT || !Array.isArray(note.keys) || note.code !== indexCodeDigest()) return undefined;
  let now: (string | undefined)[];
  if (b.freshStamps) now = b.freshStamps(note.keys);
  else {
    const limit = pLimit(STAMP_CONCURRENCY);
    now = await Promise.all(note.keys.map((k) => limit(() => b.freshStamp!(k))));
  }
  return versionsDigest(note.keys, (_, i) => now[i] ?? "-") === note.versions ? note.report : undefined;
}

/**
 * Move the note of `from` (a build whose indexes came out the same as `to`'s) into `to`, in place
 * of its own; nothing when `from` has none (its survey's versions could not all be trusted).
 */
export function keepNote(from: string, to: string): void {
  const src = join(from, INPUTS_FILE);
  if (existsSync(src)) renameSync(src, join(to, INPUTS_FILE));
  else rmSync(join(to, INPUTS_FILE), { force: true });
}
