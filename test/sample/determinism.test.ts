import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { ConfigError } from "../../src/errors.ts";
import { writeSample } from "../../src/sample/index.ts";
import { listFiles, tempDir, tinyStore, treeDigest } from "./fixture.ts";

test("same seed writes byte-identical stores; another seed does not", async () => {
  const a = await tinyStore({ seed: 7 });
  const b = await tinyStore({ seed: 7 });
  const c = await tinyStore({ seed: 8 });
  assert.deepEqual(listFiles(a.dir), listFiles(b.dir));
  assert.equal(treeDigest(a.dir), treeDigest(b.dir));
  assert.notEqual(treeDigest(a.dir), treeDigest(c.dir));
  assert.equal(a.summary.files, listFiles(a.dir).length);
  assert.ok(a.summary.bytes > 1_000_000, `${a.summary.bytes} bytes`);
  // Nothing is left behind next to the store.
  assert.deepEqual(readdirSync(dirname(a.dir)), ["store"]);
});

test("the same files whatever the number of writer threads (README: one writer thread per core, the same bytes whatever the core count)", async () => {
  const one = await tinyStore({ seed: 7, threads: 1 });
  const three = await tinyStore({ seed: 7, threads: 3 });
  assert.deepEqual(listFiles(three.dir), listFiles(one.dir));
  assert.equal(treeDigest(three.dir), treeDigest(one.dir));
});

test("an existing directory is refused without force and replaced with it", async () => {
  const { dir } = await tinyStore({ seed: 3 });
  const before = treeDigest(dir);
  await assert.rejects(writeSample(dir, { preset: "tiny", seed: 4 }), ConfigError);
  assert.equal(treeDigest(dir), before);
  await writeSample(dir, { preset: "tiny", seed: 4, force: true });
  assert.notEqual(treeDigest(dir), before);
  assert.ok(existsSync(join(dir, "zarr.json")));
});

test("force never replaces a directory that is not a store", async () => {
  const dir = join(tempDir(), "precious");
  mkdirSync(dir);
  writeFileSync(join(dir, "notes.txt"), "keep me");
  await assert.rejects(writeSample(dir, { preset: "tiny", force: true }), ConfigError);
  assert.deepEqual(readdirSync(dir), ["notes.txt"]);
});

test("bad presets and seeds are configuration errors", async () => {
  const dir = join(tempDir(), "x");
  await assert.rejects(writeSample(dir, { preset: "huge" as never }), ConfigError);
  await assert.rejects(writeSample(dir, { preset: "tiny", seed: -1 }), ConfigError);
  await assert.rejects(writeSample(dir, { preset: "tiny", seed: 1.5 }), ConfigError);
  assert.equal(existsSync(dir), false);
});
