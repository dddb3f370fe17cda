// Key confinement at the bottom of the stack: whatever the layers above let through, the directory
// backend never reads outside its root.
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { CountingBackend, KEYS_TRACKED } from "../../src/store/counting-backend.ts";
import { DirectoryBackend } from "../../src/store/directory-backend.ts";
import { confineKey, isConfinedKey } from "../../src/store/keys.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const base = tempDir();
const root = join(base, "store");
mkdirSync(join(root, "a"), { recursive: true });
writeFileSync(join(root, "a", "zarr.json"), "{}");
writeFileSync(join(base, "secret.txt"), "sentinel");
mkdirSync(join(base, "store-evil"));
writeFileSync(join(base, "store-evil", "zarr.json"), "sentinel");
symlinkSync(join(base, "secret.txt"), join(root, "a", "link"));
// Out through a sibling whose name starts with the root's; and a link that stays inside.
symlinkSync(join(base, "store-evil", "zarr.json"), join(root, "a", "evil-link"));
symlinkSync(join(root, "a", "zarr.json"), join(root, "a", "inner-link"));
after(() => cleanup(base));

describe("confineKey", () => {
  test("accepts plain relative keys, with or without zarrita's leading slash", () => {
    assert.equal(confineKey("a/zarr.json"), "a/zarr.json");
    assert.equal(confineKey("/a/c/0/1"), "a/c/0/1");
    assert.equal(confineKey(""), "");
  });
  test("rejects parent segments, absolute paths, backslashes, NUL and empty segments", () => {
    for (const k of [
      "../secret.txt",
      "a/../../secret.txt",
      "//etc/passwd",
      "a\\..\\b",
      "a/\0",
      "a//b",
      "./a",
      "C:/x",
      "a/.",
    ]) {
      assert.equal(isConfinedKey(k), false, k);
      assert.throws(() => confineKey(k), k);
    }
  });
});

describe("DirectoryBackend", () => {
  const b = new DirectoryBackend(root);
  test("reads inside the root", async () => {
    assert.equal(new TextDecoder().decode(await b.get("a/zarr.json")), "{}");
  });
  test("never reads outside: parents, sibling with the root's name as prefix, symlinks out", async () => {
    await assert.rejects(b.get("../secret.txt"));
    await assert.rejects(b.get("../store-evil/zarr.json"));
    assert.equal(await b.get("a/link"), undefined);
    assert.equal(await b.size("a/link"), undefined);
    // getInto, as bulk reads use it: with the addon one job resolves, confines and reads.
    const take = (n: number) => new Uint8Array(n);
    assert.equal(await b.getInto("a/link", take, 100), undefined);
    assert.equal(await b.getInto("a/evil-link", take, 100), undefined);
    await assert.rejects(b.getInto("../secret.txt", take, 100));
    assert.equal(new TextDecoder().decode(await b.getInto("a/inner-link", take, 100)), "{}");
    assert.equal(await b.getInto("a/nothing", take, 100), undefined);
  });
  test("missing keys are undefined, not errors", async () => {
    assert.equal(await b.get("a/nothing"), undefined);
    assert.equal(await b.getRange("a/nothing", { offset: 0, length: 1 }), undefined);
  });
});

describe("read counting", () => {
  test("counts reads of at most KEYS_TRACKED distinct keys by name, the rest only in number", async () => {
    const counting = new CountingBackend(new DirectoryBackend(root));
    for (let i = 0; i < KEYS_TRACKED + 10; i++) await counting.get(`a/c/${i}`);
    await counting.get("a/c/0");
    assert.equal(counting.reads.size, KEYS_TRACKED);
    assert.equal(counting.reads.get("a/c/0"), 2);
    assert.equal(counting.untracked, 10);
    counting.reset();
    assert.deepEqual([counting.reads.size, counting.untracked], [0, 0]);
  });
});
