// The CLI keeps Node's compile cache for itself and its tile workers (src/compile-cache.ts): a
// build fills the directory NODE_COMPILE_CACHE names, and writes none with the cache turned off.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, sampleStore, tempDir } from "./helpers/harness.ts";

const ROOT = join(import.meta.dirname, "..");
const dir = tempDir("gridcast-compile-cache-");
after(() => cleanup(dir));

const entries = (d: string): string[] =>
  existsSync(d)
    ? readdirSync(d, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name))
    : [];
const files = (d: string): number => entries(d).length;

async function build(env: Record<string, string>, out: string): Promise<void> {
  const store = await sampleStore();
  const args = ["bin/gridcast", "build", "--store", store, "--out", out, "--max-zoom", "0", "--vars", "t2m"];
  const base = { ...process.env };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_DISABLE_COMPILE_CACHE;
  await promisify(execFile)(process.execPath, [...args, "--concurrency", "2"], {
    cwd: ROOT,
    timeout: 120_000,
    env: { ...base, ...env },
  });
}

test("a build fills the compile cache it is given, and writes none when it is turned off", async () => {
  const cache = join(dir, "cache");
  await build({ NODE_COMPILE_CACHE: cache }, join(dir, "out1"));
  const cached = files(cache);
  assert.ok(cached > 50, `${cached} cache files`);
  // The tile workers' own entry module, which only a worker loads, is among them.
  const worker = join("src", "pipeline", "worker.ts");
  assert.ok(
    entries(cache).some((f) => readFileSync(f).includes(worker)),
    "the tile workers did not use the cache",
  );
  const off = join(dir, "off");
  await build({ NODE_COMPILE_CACHE: off, NODE_DISABLE_COMPILE_CACHE: "1" }, join(dir, "out2"));
  assert.equal(files(off), 0);
});
