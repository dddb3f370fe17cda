// Issue 51, reads that go to the store on the layout most producers write: one whole-field chunk
// per lead (0.25° global, 721 × 1440, 120 leads; xarray + zarr-python 2's default Blosc, lz4 with
// byte shuffle, blocks of 512 KiB), written once into .gridcast/bench by
// test/python/whole_field_store.py. All in one run:
//  - a point down the 120 leads (what /point reads: pointSeries, the route's code without HTTP),
//    the same point repeated and distinct points, under the former chunk cache (plain LRU,
//    every chunk decoded whole and kept), under the segmented cache's admission alone (whole
//    decodes, nothing kept) and with partial decodes (only the Blosc block holding the point; a
//    local store's stored chunk is still read whole, in one job);
//    and xarray reading the same point from the same directory in its own process;
//  - a working set of small boxes in 8 leads (8 chunks, 32 MiB, well inside the 256 MiB cache)
//    read again and again while scans run between them (points down all 120 leads, and a sweep
//    of two-lead boxes over the other leads, 440 MiB of chunks): its hit ratio (reads of its
//    chunks that did not go to the store) and latency, plain LRU against the segmented cache.
//   node bench/chunk-cache-scan.ts [rounds]
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pointSeries } from "../src/forecast/point.ts";
import { partialDecodes } from "../src/store/array.ts";
import type { CachePolicy } from "../src/store/chunk-cache.ts";
import type { Range } from "../src/store/region.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, type BenchRow, numberArgs, percentile, printRows } from "./lib.ts";

const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
const LEADS = 120;
const [NY, NX] = [721, 1440];
const GROUP = "forecast/global";

function wholeFieldStore(): string {
  const dir = join(BENCH_DIR, "whole-field-0.25-120");
  if (!existsSync(join(dir, "forecast/global/t2m/.zarray"))) {
    mkdirSync(BENCH_DIR, { recursive: true });
    process.stderr.write("writing the 0.25° × 120-lead whole-field store with xarray (once)…\n");
    const script = resolve(import.meta.dirname, "../test/python/whole_field_store.py");
    execFileSync(PYTHON, [script, dir, "0.25", String(LEADS), "default", "2"], { stdio: "inherit" });
  }
  return dir;
}

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

/** Same point `rounds` times, then `rounds` distinct points: per-request ms. */
async function points(dir: string, policy: CachePolicy, partial: boolean, rounds: number) {
  partialDecodes(partial);
  const store = new Store(dir, { cachePolicy: policy });
  const point = (lat: number, lon: number) =>
    Promise.resolve(pointSeries(store, store.registry, { lat, lon, var: "t2m", group: GROUP, run: 0 }));
  await point(-33.9, 151.2); // metadata, coordinates, and (under LRU) the cache filled
  const same: number[] = [];
  for (let r = 0; r < rounds; r++) same.push(await timed(() => point(48.1, 11.6)));
  const distinct: number[] = [];
  for (let r = 0; r < rounds; r++) distinct.push(await timed(() => point(-60 + r * 7.3, -170 + r * 23.1)));
  const s = store.cache.stats();
  return { same: percentile(same, 50), distinct: percentile(distinct, 50), bytes: s.bytes };
}

/** xarray's own read of the same point (nearest node), ms per read, `rounds` times. */
function xarrayPoint(dir: string, rounds: number): number {
  const code = [
    "import sys, time, json, xarray as xr",
    "ds = xr.open_zarr(sys.argv[1], group='forecast/global')",
    "ds.t2m.isel(time=0, lat=0, lon=0).values",
    "out = []",
    "for _ in range(int(sys.argv[2])):",
    "    t0 = time.perf_counter()",
    "    ds.t2m.isel(time=0).sel(lat=48.1, lon=11.6, method='nearest').values",
    "    out.append((time.perf_counter() - t0) * 1000)",
    "print(json.dumps(out))",
  ].join("\n");
  const times = JSON.parse(execFileSync(PYTHON, ["-c", code, dir, String(rounds)], { encoding: "utf8" })) as number[];
  return percentile(times, 50);
}

/** The working set read between scans: hit ratio (no store read) and p50 ms of its reads. */
async function workingSet(dir: string, policy: CachePolicy, rounds: number) {
  partialDecodes(true);
  const store = new Store(dir, { cachePolicy: policy });
  const g = await store.forecastGroup(GROUP);
  const array = g.variables.get("t2m")!.array;
  const box = (k: number, lead = 1): Range[] => [
    [0, 1],
    [k, k + lead],
    [100 + 40 * (k % 8), 110 + 40 * (k % 8)],
    [200 + 90 * (k % 8), 210 + 90 * (k % 8)],
  ];
  const ws = Array.from({ length: 8 }, (_, k) => box(k));
  for (const b of ws) await array.read(b); // first touch: cold
  let sweep = 8;
  let hits = 0;
  let reads = 0;
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const [k, b] of ws.entries()) {
      const key = `forecast/global/t2m/0.${k}.0.0`;
      const before = store.backend.reads.get(key) ?? 0;
      ms.push(await timed(async () => array.read(b)));
      reads++;
      if ((store.backend.reads.get(key) ?? 0) === before) hits++;
      // Between working-set reads, scans: a point down all leads, then two two-lead boxes of the sweep.
      if (k % 4 === 0) {
        const i = (r * 97 + k * 13) % NY;
        const j = (r * 331 + k * 71) % NX;
        await array.read([
          [0, 1],
          [0, LEADS],
          [i, i + 1],
          [j, j + 1],
        ]);
      }
      for (let n = 0; n < 2; n++) {
        await array.read(box(sweep, 2));
        sweep = sweep + 2 >= LEADS ? 8 : sweep + 2;
      }
    }
  }
  return { ratio: hits / reads, p50: percentile(ms, 50), stats: store.cache.stats() };
}

export async function run(rounds = 6): Promise<BenchRow[]> {
  const dir = wholeFieldStore();
  const before = await points(dir, "lru", false, rounds);
  const admitOnly = await points(dir, "slru", false, rounds);
  const after = await points(dir, "slru", true, rounds);
  partialDecodes(true);
  const xr = xarrayPoint(dir, rounds);
  const lru = await workingSet(dir, "lru", rounds);
  const slru = await workingSet(dir, "slru", rounds);
  return [
    {
      bench: "point down 120 whole-field leads, same point repeated",
      figure: "p50 ms (segmented cache + partial decodes)",
      value: after.same,
      baseline: "p50 ms (former LRU, whole decodes)",
      baselineValue: before.same,
      ratio: before.same / after.same,
      note: `cache after: ${(after.bytes / 2 ** 20).toFixed(0)} MiB held, before: ${(before.bytes / 2 ** 20).toFixed(0)} MiB`,
    },
    {
      bench: "point down 120 whole-field leads, same point repeated",
      figure: "p50 ms (segmented cache admission alone, whole decodes)",
      value: admitOnly.same,
      baseline: "p50 ms (former LRU, whole decodes)",
      baselineValue: before.same,
      ratio: before.same / admitOnly.same,
    },
    {
      bench: "point down 120 whole-field leads, distinct points",
      figure: "p50 ms (segmented cache + partial decodes)",
      value: after.distinct,
      baseline: "p50 ms (former LRU, whole decodes)",
      baselineValue: before.distinct,
      ratio: before.distinct / after.distinct,
    },
    {
      bench: "point down 120 whole-field leads vs xarray",
      figure: "p50 ms (segmented cache + partial decodes)",
      value: after.same,
      baseline: "xarray + zarr 2 reading the same point, p50 ms",
      baselineValue: xr,
      ratio: xr / after.same,
      note: "ratio = xarray / gridcast",
    },
    {
      bench: "working set (8 small boxes, 32 MiB) between scans",
      figure: "hit ratio (segmented)",
      value: slru.ratio,
      baseline: "hit ratio (former LRU)",
      baselineValue: lru.ratio,
      ratio: lru.ratio > 0 ? slru.ratio / lru.ratio : Number.POSITIVE_INFINITY,
      note: `segmented: ${slru.stats.protectedBytes / 2 ** 20} MiB protected, ${slru.stats.bypassed} loads not kept`,
    },
    {
      bench: "working set (8 small boxes, 32 MiB) between scans",
      figure: "p50 ms a read (segmented)",
      value: slru.p50,
      baseline: "p50 ms a read (former LRU)",
      baselineValue: lru.p50,
      ratio: lru.p50 / slru.p50,
    },
  ];
}

if (import.meta.main) {
  const [rounds] = numberArgs();
  printRows(await run(rounds));
}
