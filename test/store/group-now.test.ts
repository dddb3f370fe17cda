// The answers /point takes without awaiting (Store.forecastGroupIdsNow, forecastGroupNow,
// readableGroupsNow) are the ones the awaited calls give, are absent until those are in hand,
// and follow a metadata change: asking only them starts the revalidation, and once the new
// metadata is loaded the old group is no longer answered.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Store } from "../../src/store/store.ts";
import { cleanup, sampleStore, until } from "../helpers/harness.ts";

let dir: string;
before(async () => {
  dir = await sampleStore();
});
after(() => cleanup(dir));

test("group answers without waiting match the awaited ones and follow a metadata change", async () => {
  const store = new Store(dir, { checkMs: 20 });
  assert.equal(store.forecastGroupIdsNow(), undefined, "nothing listed yet");
  assert.equal(store.forecastGroupNow("forecast/alps"), undefined);
  const ids = await store.forecastGroupIds();
  assert.deepEqual(store.forecastGroupIdsNow(), ids);
  assert.equal(store.readableGroupsNow(), undefined, "no group built yet");
  const groups = await store.forecastGroups();
  assert.deepEqual(
    store.readableGroupsNow()?.map((g) => g.id),
    groups.map((g) => g.id),
  );
  assert.deepEqual(
    store.readableGroupsNow("forecast/global")?.map((g) => g.id),
    ids.filter((id) => id !== "forecast/global"),
  );
  const alps = await store.forecastGroup("forecast/alps");
  const now = store.forecastGroupNow("forecast/alps");
  assert.ok(now && "group" in now && now.group === alps);

  // Change the group's own metadata document; only the answers without waiting are asked.
  const doc = join(dir, "forecast/alps/zarr.json");
  const meta = JSON.parse(readFileSync(doc, "utf8"));
  meta.attributes = { ...meta.attributes, note: "rewritten" };
  writeFileSync(doc, JSON.stringify(meta));
  await until("the old group is no longer answered", () => store.forecastGroupNow("forecast/alps") === undefined);
  const rebuilt = await store.forecastGroup("forecast/alps");
  assert.notEqual(rebuilt, alps);
  const later = store.forecastGroupNow("forecast/alps");
  assert.ok(later && "group" in later && later.group === rebuilt);
});
