// Sample stores for the tests of src/sample: written by code into a temp dir, removed after the file's tests.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after } from "node:test";
import { type SampleOptions, type Summary, writeSample } from "../../src/sample/index.ts";

const made: string[] = [];
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "gridcast-sample-"));
  made.push(d);
  return d;
}

export async function tinyStore(opts: SampleOptions = {}): Promise<{ dir: string; summary: Summary }> {
  const dir = join(tempDir(), "store");
  const summary = await writeSample(dir, { preset: "tiny", seed: 7, ...opts });
  return { dir, summary };
}

/** Every file below dir, relative and sorted. */
export function listFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)))
    .sort();
}

/** SHA-256 over the sorted relative paths and the bytes of every file. */
export function treeDigest(dir: string): string {
  const h = createHash("sha256");
  for (const rel of listFiles(dir)) {
    h.update(`${rel}\0`);
    h.update(readFileSync(join(dir, rel)));
  }
  return h.digest("hex");
}
