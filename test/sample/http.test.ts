// A sample store served as plain files over HTTP (object storage has no listing): everything is
// found through the root's consolidated metadata.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Store } from "../../src/store/store.ts";
import { tinyStore } from "./fixture.ts";

let dir: string;
let items: string[];
let server: Server;
let url: string;

before(async () => {
  const s = await tinyStore();
  dir = s.dir;
  items = s.summary.embeddings.items;
  server = createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    try {
      res.end(readFileSync(join(dir, rel)));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
after(() => server.close());

test("the root zarr.json inlines every v3 node below it", () => {
  const root = JSON.parse(readFileSync(join(dir, "zarr.json"), "utf8"));
  assert.equal(root.node_type, "group");
  assert.equal(root.attributes.generator, "gridcast sample");
  const md = root.consolidated_metadata.metadata;
  assert.equal(md.forecast.node_type, "group");
  assert.deepEqual(
    md["forecast/global/t2m"],
    JSON.parse(readFileSync(join(dir, "forecast/global/t2m/zarr.json"), "utf8")),
  );
  assert.equal(md["forecast/global"].consolidated_metadata, null, "nested groups are not repeated inline");
  for (const p of items) assert.equal(md[`embeddings/${p}/latent`].node_type, "array", p);
  // The tiny europe patch is Zarr v2: it cannot be described in v3 consolidated metadata.
  assert.equal(md["forecast/europe"], undefined);
});

test("over HTTP the store finds groups and embedding items and reads the same values", async () => {
  const remote = new Store(url);
  const local = new Store(dir);
  assert.deepEqual(await remote.forecastGroupIds(), ["forecast/alps", "forecast/global"]);
  assert.deepEqual(await remote.embeddingItemPaths(), items);
  const region: [number, number][] = [
    [1, 2],
    [2, 3],
    [0, 91],
    [0, 180],
  ];
  const a = await (await remote.forecastGroup("forecast/global")).variables.get("t2m")!.array.read(region);
  const b = await (await local.forecastGroup("forecast/global")).variables.get("t2m")!.array.read(region);
  assert.deepEqual(Array.from(a), Array.from(b));
  // The v2 patch is still readable over HTTP when asked for by name.
  assert.equal((await remote.forecastGroup("forecast/europe")).format, 2);
});
