// `gridcast sample`: a deterministic synthetic store (same preset and seed → byte-identical files).
// Everything is written into a temporary sibling directory that is renamed into place at the end,
// so a reader never sees half a store. The store is cut into parts (block rows of each forecast
// group, the embeddings of each family) that worker threads write at once, one per core; the root's
// consolidated metadata is written here once every part is in.
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { ConfigError } from "../errors.ts";
import { type EmbeddingSummary, FAMILIES } from "./embeddings.ts";
import { blockRows, type GroupSummary, type Layout } from "./forecast.ts";
import type { Part, PartJob, PartMessage } from "./part-worker.ts";
import { PRESET_NAMES, PRESETS, type Preset, type PresetName } from "./presets.ts";
import { ZarrWriter } from "./zarr-writer.ts";

export interface SampleOptions extends Partial<Layout> {
  preset?: PresetName;
  seed?: number;
  /** Replace an existing store at `out`. */
  force?: boolean;
  /** A preset built in code (tests that need a larger store of the same shape); overrides `preset`. */
  custom?: Preset;
  /** Progress lines (the CLI sends them to stderr). */
  onProgress?: (line: string) => void;
  /**
   * The forecast groups' documents and coordinates only: no data chunk, no embeddings. Enough to
   * plan a build of the preset (count its tiles) in a moment; every value reads as missing.
   */
  skeleton?: boolean;
  /** Writer threads (default: one per core, at least 2); the files are the same for any count. */
  threads?: number;
}

export interface Summary {
  out: string;
  preset: PresetName;
  seed: number;
  layout: Layout;
  files: number;
  bytes: number;
  seconds: number;
  forecast: GroupSummary[];
  embeddings: EmbeddingSummary;
}

/** Only a directory that is empty or looks like a Zarr store may be replaced by --force. */
function replaceable(dir: string): boolean {
  const names = readdirSync(dir);
  return names.length === 0 || names.includes("zarr.json") || names.includes(".zgroup");
}

export async function writeSample(out: string, opts: SampleOptions = {}): Promise<Summary> {
  const preset = opts.preset ?? "demo";
  if (!PRESET_NAMES.includes(preset))
    throw new ConfigError(`unknown preset "${preset}" (use ${PRESET_NAMES.join(", ")})`);
  const seed = opts.seed ?? 1;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new ConfigError("seed must be an integer 0..4294967295");
  const layout: Layout = { latDescending: opts.latDescending ?? true, lon360: opts.lon360 ?? true };
  const target = resolve(out);
  if (existsSync(target)) {
    if (!opts.force) throw new ConfigError(`${out} already exists (use --force to replace it)`);
    if (!replaceable(target))
      throw new ConfigError(`${out} is not empty and does not look like a Zarr store; not replacing it`);
  }
  const progress = opts.onProgress ?? (() => {});
  const started = performance.now();
  const tmp = `${target}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });

  const p = opts.custom ?? PRESETS[preset];
  const w = new ZarrWriter(tmp, p.zstdLevel);
  let forecast: GroupSummary[];
  let embeddings: EmbeddingSummary;
  try {
    w.plainGroup("forecast", 3, { description: "forecast groups: one global model and regional downscale patches" });
    ({ forecast, embeddings } = await writeParts(
      w,
      p,
      seed,
      layout,
      progress,
      opts.skeleton === true,
      opts.threads ?? Math.max(2, availableParallelism()),
    ));
    w.rootGroup({
      title: "gridcast synthetic sample store",
      description: "synthetic weather forecasts and EO latent embeddings for demos and tests; not real data",
      generator: "gridcast sample",
      preset,
      seed,
    });
    await w.flush();
    await w.close();
    if (existsSync(target)) rmSync(target, { recursive: true });
    renameSync(tmp, target);
  } catch (e) {
    // Queued chunk writes must finish before their directory goes away.
    await w.close();
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  return {
    out: target,
    preset,
    seed,
    layout,
    files: w.files,
    bytes: w.bytes,
    seconds: Math.round((performance.now() - started) / 10) / 100,
    forecast,
    embeddings,
  };
}

/**
 * The parts of a store, heaviest first so the workers finish together: the embeddings of each
 * family (a few seconds each for the demo), then every block row of every forecast group; the
 * first block row of a group also writes the group's documents and coordinates.
 */
function partsOf(p: Preset, layout: Layout, skeleton: boolean): Part[] {
  if (skeleton) return p.groups.map((_, group) => ({ kind: "forecast", group, bands: [], metadata: true }));
  const parts: Part[] = FAMILIES.map((f) => ({ kind: "embeddings", families: [f] }));
  p.groups.forEach((g, group) => {
    for (let b = 0; b < blockRows(g, layout); b++)
      parts.push({ kind: "forecast", group, bands: [b], metadata: b === 0 });
  });
  return parts;
}

/** Run every part on a pool of worker threads; the summaries merged, the nodes adopted by `w`. */
async function writeParts(
  w: ZarrWriter,
  p: Preset,
  seed: number,
  layout: Layout,
  progress: (line: string) => void,
  skeleton: boolean,
  threads: number,
): Promise<{ forecast: GroupSummary[]; embeddings: EmbeddingSummary }> {
  const parts = partsOf(p, layout, skeleton);
  const groups = new Map<string, GroupSummary>();
  const chunks = new Map<string, number>();
  const emb: EmbeddingSummary = {
    families: [...FAMILIES],
    products: [],
    periods: [],
    tiles: [],
    items: [],
    missing: [],
  };
  const workers: Worker[] = [];
  let next = 0;
  try {
    await new Promise<void>((done, fail) => {
      let running = 0;
      let failed = false;
      const stop = (e: Error) => {
        if (failed) return;
        failed = true;
        fail(e);
      };
      const feed = (worker: Worker) => {
        if (failed) return;
        if (next >= parts.length) {
          if (running === 0) done();
          return;
        }
        const id = next++;
        running++;
        const job: PartJob = { id, root: w.root, preset: p, seed, layout, part: parts[id] };
        worker.postMessage(job);
      };
      const count = Math.min(parts.length, Math.max(1, Math.floor(threads)));
      for (let i = 0; i < count; i++) {
        // No inherited flags: they are the caller's (--input-type, test runner options), not the worker's.
        const worker = new Worker(new URL("./part-worker.ts", import.meta.url), { execArgv: [] });
        workers.push(worker);
        worker.on("message", (m: PartMessage) => {
          if ("progress" in m) return progress(m.progress);
          running--;
          if ("error" in m) return stop(new Error(`writing the sample store failed: ${m.error}`));
          const d = m.done;
          w.adopt(d.nodes, d.files, d.bytes);
          if (d.forecast) {
            const f = d.forecast;
            chunks.set(f.id, (chunks.get(f.id) ?? 0) + f.chunks);
            if (!groups.has(f.id)) groups.set(f.id, f);
          }
          if (d.embeddings) {
            const e = d.embeddings;
            emb.products = e.products;
            emb.periods = e.periods;
            emb.tiles = e.tiles;
            emb.items.push(...e.items);
            emb.missing.push(...e.missing);
          }
          feed(worker);
        });
        worker.on("error", stop);
        worker.on("exit", (code) => {
          if (code !== 0) stop(new Error(`a sample writer thread exited with code ${code}`));
        });
        feed(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((x) => x.terminate()));
  }
  const forecast = p.groups.map((g) => {
    const s = groups.get(`forecast/${g.name}`)!;
    return { ...s, chunks: chunks.get(s.id) ?? 0 };
  });
  emb.items.sort();
  emb.missing.sort();
  return { forecast, embeddings: emb };
}

export { PRESET_NAMES, type PresetName } from "./presets.ts";
