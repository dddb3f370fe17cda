// The store answers /point's questions at once when the answers are in hand (Store.forecastGroupIds,
// forecastGroup, readableGroups return values, not promises): the same answers the awaited reads
// gave, promises until those are in hand, and following a metadata change: asking starts the
// revalidation, and once the new metadata is loaded the old group is no longer answered.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { isPending } from "../../src/soon.ts";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, until } from "../helpers/harness.ts";

let dir: string;
before(async () => {
  dir = await sampleStore();
});
after(() => cleanup(dir));

test("group answers in hand match the awaited ones and follow a metadata change", async () => {
  // Past its check interval the store waits for a fresh look at the metadata before it answers
  // (so a new cycle is seen within the bound), so the interval must outlast the in-hand checks
  // below even on a loaded machine; the change at the end is then seen once it has passed.
  const store = new Store(dir, { checkMs: 3000 });
  const listing = store.forecastGroupIds();
  assert.ok(isPending(listing), "nothing listed yet");
  const first = store.forecastGroup("forecast/alps");
  assert.ok(isPending(first), "no group built yet");
  const ids = await listing;
  assert.deepEqual(store.forecastGroupIds(), ids, "the listing in hand, at once");
  await first;
  const readable = store.readableGroups();
  assert.ok(isPending(readable), "the other groups are not built yet");
  const groups = await store.forecastGroups();
  assert.deepEqual(
    (await readable).map((g) => g.id),
    groups.map((g) => g.id),
  );
  const now = store.readableGroups();
  assert.ok(!isPending(now), "every group in hand");
  assert.deepEqual(
    now.map((g) => g.id),
    groups.map((g) => g.id),
  );
  const others = store.readableGroups("forecast/global");
  assert.ok(!isPending(others));
  assert.deepEqual(
    others.map((g) => g.id),
    ids.filter((id) => id !== "forecast/global"),
  );
  const alps = await store.forecastGroup("forecast/alps");
  assert.equal(store.forecastGroup("forecast/alps"), alps, "the group in hand, at once");

  // Change the group's own metadata document; only the answers in hand are asked.
  const doc = join(dir, "forecast/alps/zarr.json");
  const meta = JSON.parse(readFileSync(doc, "utf8"));
  meta.attributes = { ...meta.attributes, note: "rewritten" };
  writeFileSync(doc, JSON.stringify(meta));
  await until("the old group is no longer answered", () => isPending(store.forecastGroup("forecast/alps")));
  const rebuilt = await store.forecastGroup("forecast/alps");
  assert.notEqual(rebuilt, alps);
  assert.equal(store.forecastGroup("forecast/alps"), rebuilt);
});

test("a group gridcast cannot use is refused at once once known, and left out of the readable ones", async () => {
  // Europe's consolidated metadata is what gridcast reads: a 0 in t2m's chunk shape there.
  const doc = join(dir, "forecast/europe/.zmetadata");
  const saved = readFileSync(doc, "utf8");
  const zm = JSON.parse(saved);
  zm.metadata["t2m/.zarray"].chunks = zm.metadata["t2m/.zarray"].chunks.map(() => 0);
  writeFileSync(doc, JSON.stringify(zm));
  try {
    const store = new Store(dir);
    const refused = store.forecastGroup("forecast/europe");
    assert.ok(isPending(refused), "first read");
    await assert.rejects(refused, /chunk shape/);
    assert.throws(() => store.forecastGroup("forecast/europe"), /chunk shape/, "the refusal in hand, thrown at once");
    await store.forecastGroups();
    const readable = store.readableGroups();
    assert.ok(!isPending(readable), "a refusal in hand needs no wait");
    assert.deepEqual(
      readable.map((g) => g.id),
      ["forecast/alps", "forecast/global"],
    );
  } finally {
    writeFileSync(doc, saved);
  }
});
