// Brotli quality for a catalog past 1 MiB, where `gridcast build` drops from quality 11 to 7
// (src/published/precompress.ts). The demo store's catalog is ~70 KB; a production store's is
// larger by its runs kept, leads per run and layers, so the bench builds the demo at z0 and widens
// its catalog the way such a store would: every layer's run repeated (`runs` runs, 6 h apart) with
// `leads` leads each (3-hourly), the layers repeated `copies` times under new ids. Each quality is
// timed over `rounds` compressions (CPU time of this process) and printed as its size, its ratio
// to the identity bytes, and its time as a ratio to quality 7's, measured in the same run.
//   node bench/catalog-brotli.ts [runs, default 4] [leads, default 81] [copies, default 3] [rounds, default 3]
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, gzipSync, constants as z } from "node:zlib";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, benchStore, numberArgs, printRows } from "./lib.ts";

interface Lead {
  hours: number;
  valid_time: string;
  [k: string]: unknown;
}
interface Layer {
  id: string;
  runs: { run: string; token: string; leads: Lead[] }[];
  [k: string]: unknown;
}

/** The catalog widened to `runs` × `leads` per layer and `copies` × the layers. */
function widen(catalog: { layers: Layer[] }, runs: number, leads: number, copies: number): string {
  const layers: Layer[] = [];
  for (let c = 0; c < copies; c++) {
    for (const layer of catalog.layers) {
      const first = layer.runs[0];
      if (!first) continue;
      const id = c === 0 ? layer.id : `${layer.id}.m${c}`;
      const runList = Array.from({ length: runs }, (_, r) => {
        const t0 = new Date(Date.parse(`${first.leads[0].valid_time}Z`) - r * 6 * 3600e3);
        const token = t0.toISOString().slice(0, 16).replace(/[-:]/g, "");
        const text = JSON.stringify(first.leads[0]).replaceAll(first.token, token).replaceAll(layer.id, id);
        return {
          run: t0.toISOString().slice(0, 19),
          token,
          leads: Array.from({ length: leads }, (_, i) => {
            const hours = 3 * i;
            const lead = JSON.parse(text.replaceAll("/0/", `/${hours}/`).replaceAll("lead=0", `lead=${hours}`));
            lead.hours = hours;
            lead.valid_time = new Date(t0.getTime() + hours * 3600e3).toISOString().slice(0, 19);
            return lead;
          }),
        };
      });
      layers.push({ ...layer, id, runs: runList });
    }
  }
  return JSON.stringify({ ...catalog, layers });
}

function cpuMs(f: () => unknown, rounds: number): number {
  const t = process.cpuUsage();
  for (let i = 0; i < rounds; i++) f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000 / rounds;
}

export async function run(runs = 4, leads = 81, copies = 3, rounds = 3): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const out = join(BENCH_DIR, "catalog-brotli-output");
  rmSync(out, { recursive: true, force: true });
  await runBuild({ store, out, maxZoom: 0, progress: false, webDir: null });
  const catalog = JSON.parse(readFileSync(join(out, "current", "catalog.json"), "utf8"));
  const bytes = Buffer.from(widen(catalog, runs, leads, copies));
  const br = (q: number, lgwin?: number) =>
    brotliCompressSync(bytes, {
      params: {
        [z.BROTLI_PARAM_QUALITY]: q,
        [z.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        ...(lgwin ? { [z.BROTLI_PARAM_LGWIN]: lgwin } : {}),
      },
    });
  const baseMs = cpuMs(() => br(7), rounds);
  const rows: BenchRow[] = [];
  const variants: [string, () => Buffer][] = [
    ["brotli 5", () => br(5)],
    ["brotli 7 (now, > 1 MiB)", () => br(7)],
    ["brotli 9", () => br(9)],
    ["brotli 11 (now, ≤ 1 MiB)", () => br(11)],
    ["brotli 11, 16 MiB window", () => br(11, 24)],
    ["brotli 7, 16 MiB window", () => br(7, 24)],
    ["brotli 9, 16 MiB window", () => br(9, 24)],
    ["gzip 9", () => gzipSync(bytes, { level: 9 })],
  ];
  for (const [name, f] of variants) {
    const size = f().length;
    const ms = name.startsWith("brotli 7") ? baseMs : cpuMs(f, rounds);
    rows.push({
      bench: "catalog-brotli",
      figure: `${name}: ${size} B of ${bytes.length} (${(bytes.length / size).toFixed(1)}×), ${ms.toFixed(0)} ms CPU`,
      value: Math.round(ms),
      baseline: "brotli 7, same run",
      baselineValue: Math.round(baseMs),
      ratio: ms / baseMs,
      note: "ratio: CPU time over quality 7's",
    });
  }
  rmSync(out, { recursive: true, force: true });
  return rows;
}

if (import.meta.main) {
  const nums = numberArgs();
  printRows(await run(nums[0], nums[1], nums[2], nums[3]));
}
