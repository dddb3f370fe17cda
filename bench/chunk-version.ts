// The price of not serving a rewritten chunk stale: every decoded-chunk cache hit first asks the
// store for the chunk's version (a stat on disk, shared for 0.1 s by the reads of that chunk).
// Figure: cached chunk reads per second with the version check; baseline: the same reads through
// a backend that cannot tell versions (the behaviour before: cached forever), in the same run.
import { StoredArray } from "../src/store/array.ts";
import { ChunkCache } from "../src/store/chunk-cache.ts";
import { Store } from "../src/store/store.ts";
import { type BenchRow, benchStore } from "./lib.ts";

async function rate(arr: StoredArray, coords: number[], seconds: number): Promise<number> {
  await arr.chunk(coords);
  let n = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) await arr.chunk(coords);
    n += 200;
  }
  return n / seconds;
}

export async function run(seconds = 3): Promise<BenchRow[]> {
  const store = new Store(await benchStore());
  const group = await store.forecastGroup("forecast/global");
  const t2m = group.variables.get("t2m")!.array;
  const coords = t2m.shape.map(() => 0);
  const versioned = store.array(t2m.meta);
  const b = store.backend;
  const plain = { description: b.description, get: b.get.bind(b), getRange: b.getRange.bind(b) };
  const unversioned = new StoredArray(t2m.meta, plain, new ChunkCache(256 * 1024 * 1024));
  const base = await rate(unversioned, coords, seconds);
  const value = await rate(versioned, coords, seconds);
  return [
    {
      bench: "cached chunk read with version check",
      figure: "reads/s",
      value,
      baseline: "cached forever (no check) reads/s",
      baselineValue: base,
      ratio: value / base,
      note: "at most one stat per chunk per 0.1 s; a /point reads 1–4 chunks",
    },
  ];
}
