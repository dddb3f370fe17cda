// `gridcast sample`: a deterministic synthetic store (same preset and seed → byte-identical files).
// Everything is written into a temporary sibling directory that is renamed into place at the end,
// so a reader never sees half a store.
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "../errors.ts";
import { type EmbeddingSummary, writeEmbeddings } from "./embeddings.ts";
import { WeatherModel } from "./fields.ts";
import { type GroupSummary, type Layout, writeForecastGroup } from "./forecast.ts";
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
  const forecast: GroupSummary[] = [];
  let embeddings: EmbeddingSummary;
  try {
    w.plainGroup("forecast", 3, { description: "forecast groups: one global model and regional downscale patches" });
    const model = new WeatherModel(seed);
    for (const g of p.groups) {
      forecast.push(await writeForecastGroup(w, model, p, g, layout, progress));
    }
    embeddings = await writeEmbeddings(w, p, seed, progress);
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

export { PRESET_NAMES, type PresetName } from "./presets.ts";
