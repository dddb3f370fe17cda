// What the orientation layer costs a build: the demo store's latest run, first lead, every layer,
// z0..max zoom, built without and with the orientation layer in the same run (alternating, the
// median pair by ratio). Wall seconds and bytes on disk. A later build hard-links the layer from
// the published one while its fingerprint holds, like any unchanged lead.
//   node bench/orientation.ts [--rounds N] [--max-zoom Z]
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { type BuildOptions, type BuildReport, runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, benchStore, printRows } from "./lib.ts";

interface Pair {
  without: BuildReport;
  with: BuildReport;
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

export async function run(opts: { rounds?: number; maxZoom?: number } = {}): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const concurrency = Math.min(2, availableParallelism());
  const base: BuildOptions = {
    store,
    out: "",
    concurrency,
    leads: [0],
    maxZoom: opts.maxZoom ?? 7,
    reuse: false,
    progress: false,
    webDir: null,
  };
  const dir = mkdtempSync(join(BENCH_DIR, "gridcast-bench-orientation-"));
  const pairs: Pair[] = [];
  try {
    for (let i = 0; i < (opts.rounds ?? 2); i++) {
      // Alternate which goes first, so a load change on the machine hits both halves alike.
      const a = () => runBuild({ ...base, out: join(dir, `without-${i}`), orientation: false });
      const b = () => runBuild({ ...base, out: join(dir, `with-${i}`), orientation: true });
      if (i % 2 === 0) {
        const without = await a();
        pairs.push({ without, with: await b() });
      } else {
        const w = await b();
        pairs.push({ without: await a(), with: w });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  pairs.sort((p, q) => p.with.seconds / p.without.seconds - q.with.seconds / q.without.seconds);
  const p = pairs[Math.floor(pairs.length / 2)];
  const o = p.with.output!;
  const n = p.without.output!;
  const layerTiles = p.with.totals.tiles - p.without.totals.tiles;
  const layerEncoded = p.with.totals.encoded - p.without.totals.encoded;
  return [
    {
      bench: `build demo store, every layer, first lead, z0-${base.maxZoom}, ${concurrency} threads`,
      figure: "seconds with the orientation layer",
      value: p.with.seconds,
      baseline: "seconds without it",
      baselineValue: p.without.seconds,
      ratio: p.without.seconds / p.with.seconds,
      note:
        `median of ${pairs.length} pairs; +${layerTiles} tiles (${layerEncoded} encoded, the rest links to one ` +
        `empty tile); render ${p.with.render_seconds.toFixed(1)} s vs ${p.without.render_seconds.toFixed(1)} s`,
    },
    {
      bench: "same builds, bytes on disk (hard links once)",
      figure: "tile bytes with the orientation layer",
      value: o.tile_bytes,
      baseline: "tile bytes without it",
      baselineValue: n.tile_bytes,
      ratio: n.tile_bytes / o.tile_bytes,
      note: `${mb(o.tile_bytes)} vs ${mb(n.tile_bytes)}: the layer adds ${mb(o.tile_bytes - n.tile_bytes)} in ${layerEncoded} PNGs (${((o.tile_bytes - n.tile_bytes) / Math.max(1, layerEncoded) / 1000).toFixed(1)} kB each)`,
    },
  ];
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const flag = (name: string) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : undefined);
  printRows(await run({ rounds: flag("--rounds"), maxZoom: flag("--max-zoom") }));
}
