// "Nothing new" and the embedding indexes: a build notes the version of every store key its
// embedding survey read (.embedding-inputs.json); the next build decides "embeddings unchanged"
// from those versions alone. These tests change one thing each (an item's attributes, one
// coordinate chunk, an item added, an item removed) and check that the
// versions see it and that the build then publishes; and that versions taken too soon after a
// write are never trusted.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  INPUTS_FILE,
  SETTLE_MS,
  unchangedEmbeddingInputs,
  writeIndexesNoting,
} from "../../src/embeddings/survey-inputs.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";
import { build } from "./build-fixture.ts";

const dirs: string[] = [];
const small = { maxZoom: 0, groups: ["global"], vars: ["t2m"], leads: [0] };
const settle = () => new Promise((ok) => setTimeout(ok, SETTLE_MS + 200));

/**
 * A sample store whose root consolidated metadata leaves out embeddings/ (so every item document
 * is read on its own: the case where a change to one item touches no shared document).
 */
async function itemByItemStore(): Promise<string> {
  const dir = await sampleStore();
  dirs.push(join(dir, ".."));
  const rootDoc = join(dir, "zarr.json");
  const doc = JSON.parse(readFileSync(rootDoc, "utf8"));
  const meta = doc.consolidated_metadata?.metadata ?? {};
  for (const k of Object.keys(meta)) if (k.startsWith("embeddings")) delete meta[k];
  writeFileSync(rootDoc, JSON.stringify(doc));
  return dir;
}

async function items(store: string): Promise<string[]> {
  const paths = await new Store(store).embeddingItemPaths();
  assert.ok(paths.length >= 3, "the sample store has embedding items");
  return paths.map((p) => join(store, "embeddings", p));
}

/** Each change a producer might make to one item (each to another item, as the first test makes them all in turn). */
const changes: Record<string, (store: string, item: string[]) => void> = {
  "one item's attributes rewritten in place": (_, [a]) => {
    // As a producer does: the latent's document and the item's consolidated copy of it.
    const rule = { dequantization: "a rule nobody understands" };
    const f = join(a, "latent", "zarr.json");
    const doc = JSON.parse(readFileSync(f, "utf8"));
    doc.attributes = { ...doc.attributes, ...rule };
    writeFileSync(f, JSON.stringify(doc));
    const g = join(a, "zarr.json");
    const group = JSON.parse(readFileSync(g, "utf8"));
    const copy = group.consolidated_metadata?.metadata?.latent;
    if (copy) copy.attributes = { ...copy.attributes, ...rule };
    writeFileSync(g, JSON.stringify(group));
  },
  "one item's coordinate chunk rewritten in place": (_, [, a, ...rest]) => {
    // The x coordinates of the same product on another tile: its bbox (or its refusal) changes.
    const product = (p: string) => p.split("/").at(-3);
    const tile = (p: string) => p.split("/").at(-1);
    const b = rest.find((p) => product(p) === product(a) && tile(p) !== tile(a));
    assert.ok(b, "another tile of the same product");
    const x = join(a, "x", "c", "0");
    const other = readFileSync(join(b, "x", "c", "0"));
    assert.notDeepEqual(readFileSync(x), other);
    writeFileSync(x, other);
  },
  "an item added": (_, [, , a]) => {
    const v = a.replace("/rf/v1.2/", "/rf/v1.9/");
    cpSync(a, v, { recursive: true });
  },
  "an item removed": (_, list) => {
    rmSync(list.at(-1)!, { recursive: true });
  },
};

let store: string;
/** Copies of the untouched store, one per test below the first, made before anything changes. */
const copies = new Map<string, string>();
before(async () => {
  store = await itemByItemStore();
  for (const name of [...Object.keys(changes), "racy", "other code"]) {
    const copy = join(tempDir(), "store");
    dirs.push(join(copy, ".."));
    cpSync(store, copy, { recursive: true });
    copies.set(name, copy);
  }
  await settle();
});
after(() => cleanup(...dirs));

describe("embeddings unchanged, decided from versions", () => {
  test("a store with nothing changed is 'nothing new' from the noted versions; each change to an item is seen and published", async () => {
    const out = tempDir();
    dirs.push(out);
    const first = await build({ store, out, ...small });
    assert.equal(first.published, true);
    assert.ok(existsSync(join(first.dir, INPUTS_FILE)), "the published build notes its survey's inputs");
    assert.ok((first.embeddings?.items ?? 0) > 0);

    const noted = await unchangedEmbeddingInputs(new Store(store), first.dir);
    assert.deepEqual(noted, first.embeddings, "with nothing changed the note answers, with the survey's report");
    const same = await build({ store, out, ...small });
    assert.equal(same.unchanged, first.build_id);
    assert.deepEqual(same.embeddings, first.embeddings);

    const list = await items(store);
    let last = first.build_id;
    for (const [what, change] of Object.entries(changes)) {
      change(store, list);
      const next = await build({ store, out, ...small });
      assert.equal(next.unchanged, undefined, `${what}: not "nothing new"`);
      assert.equal(next.published, true, `${what}: published`);
      assert.notEqual(next.build_id, last);
      last = next.build_id;
    }
    // The last build followed its change at once: whatever it noted, a "nothing new" surveyed
    // once the store has settled leaves the published build a note that answers.
    await settle();
    const again = await build({ store, out, ...small });
    assert.equal(again.unchanged, last);
    const published = join(out, "builds", last);
    assert.deepEqual(await unchangedEmbeddingInputs(new Store(store), published), again.embeddings);
  });

  for (const [what, change] of Object.entries(changes)) {
    test(`the noted versions see ${what}`, async () => {
      const copy = copies.get(what)!;
      const dir = tempDir();
      dirs.push(dir);
      const report = await writeIndexesNoting(new Store(copy), dir);
      assert.ok(existsSync(join(dir, INPUTS_FILE)), "settled versions are noted");
      assert.deepEqual(await unchangedEmbeddingInputs(new Store(copy), dir), report, "unchanged before");
      change(copy, await items(copy));
      assert.equal(await unchangedEmbeddingInputs(new Store(copy), dir), undefined, `${what} is seen`);
    });
  }

  test("versions taken within SETTLE_MS of a write are not noted (two writes in one clock tick may keep one)", async () => {
    const copy = copies.get("racy")!;
    const [a] = await items(copy);
    const f = join(a, "zarr.json");
    writeFileSync(f, readFileSync(f));
    const dir = tempDir();
    dirs.push(dir);
    const report = await writeIndexesNoting(new Store(copy), dir);
    assert.ok(report.items > 0);
    assert.equal(existsSync(join(dir, INPUTS_FILE)), false);
  });

  test("a note written by other code is not used", async () => {
    const copy = copies.get("other code")!;
    const dir = tempDir();
    dirs.push(dir);
    await writeIndexesNoting(new Store(copy), dir);
    const f = join(dir, INPUTS_FILE);
    const note = JSON.parse(readFileSync(f, "utf8"));
    assert.ok(await unchangedEmbeddingInputs(new Store(copy), dir));
    writeFileSync(f, JSON.stringify({ ...note, code: "0".repeat(64) }));
    assert.equal(await unchangedEmbeddingInputs(new Store(copy), dir), undefined);
  });
});
