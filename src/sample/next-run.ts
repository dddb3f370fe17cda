// `gridcast sample --run <time>`: a new forecast cycle appended to a store `gridcast sample` wrote,
// for rehearsing what happens after each real cycle (build, publish, a running server moving to
// the new run). The store is written again beside itself with the run added (the writer is
// deterministic, so every earlier run's chunks come out byte for byte as they are), and only the
// files that differ are copied in: the new run's chunks first, then the coordinate chunks, then
// the metadata documents, deepest first and the root's consolidated document last, as a producer
// appending along the run axis writes them (chunks before the metadata that announces them).
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../errors.ts";
import { Store } from "../store/store.ts";
import { writeSample } from "./index.ts";
import { PRESET_NAMES, PRESETS, type PresetName } from "./presets.ts";

export interface NextRunSummary {
  out: string;
  preset: PresetName;
  seed: number;
  /** Every run of the store afterwards, ISO UTC, oldest first. */
  runs: string[];
  /** The run added. */
  run: string;
  /** Files copied in (new or changed). */
  files: number;
  seconds: number;
}

const METADATA = new Set(["zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"]);

/** A run time: an ISO date-time in UTC on a whole hour ("2026-11-21T00", "2026-11-21T00:00Z"). */
export function parseRunTime(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2})(?::00(?::00)?)?(?:Z|\+00:?00)?$/.exec(s.trim());
  const ms = m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4]) : Number.NaN;
  if (!m || !Number.isFinite(ms) || new Date(ms).getUTCDate() !== +m[3] || +m[4] > 23) {
    throw new ConfigError(`--run takes a UTC time on a whole hour like 2026-11-21T00:00Z, got "${s}"`);
  }
  return ms;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1));
}

function same(a: string, b: string): boolean {
  if (!existsSync(b)) return false;
  return readFileSync(a).equals(readFileSync(b));
}

export async function appendSampleRun(out: string, runMs: number): Promise<NextRunSummary> {
  const started = performance.now();
  const target = resolve(out);
  const rootDoc = join(target, "zarr.json");
  if (!existsSync(rootDoc)) throw new ConfigError(`${out} is not a store gridcast sample wrote (no zarr.json)`);
  const attrs = (JSON.parse(readFileSync(rootDoc, "utf8")) as { attributes?: Record<string, unknown> }).attributes;
  const preset = attrs?.preset as PresetName;
  const seed = attrs?.seed as number;
  if (attrs?.generator !== "gridcast sample" || !PRESET_NAMES.includes(preset) || !Number.isInteger(seed)) {
    throw new ConfigError(`${out} was not written by gridcast sample: --run adds cycles to sample stores only`);
  }
  // The runs it holds now, as every reader sees them.
  const store = new Store(target);
  const groups = PRESETS[preset].groups.map((g) => `forecast/${g.name}`);
  const runs = (await store.forecastGroup(groups[0])).runs;
  const last = runs[runs.length - 1];
  if (runMs <= last) {
    throw new ConfigError(`--run ${iso(runMs)} is not after the store's latest run ${iso(last)}: runs are appended`);
  }
  const next = [...runs, runMs];
  const scratch = join(dirname(target), `.${target.split("/").pop()}.next-run-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  try {
    await writeSample(scratch, { preset, seed, custom: { ...PRESETS[preset], runs: next } });
    const changed = filesBelow(scratch).filter((f) => !same(join(scratch, f), join(target, f)));
    const isMeta = (f: string) => METADATA.has(f.split("/").pop()!);
    const depth = (f: string) => f.split("/").length;
    // Chunks of the new run and coordinates first; then documents, deepest first, the root last.
    const order = [...changed.filter((f) => !isMeta(f)), ...changed.filter(isMeta).sort((a, b) => depth(b) - depth(a))];
    for (const f of order) {
      const dest = join(target, f);
      const tmp = `${dest}.part-${process.pid}`;
      mkdirSync(dirname(dest), { recursive: true });
      copyFileSync(join(scratch, f), tmp);
      renameSync(tmp, dest); // each file replaced whole
    }
    return {
      out: target,
      preset,
      seed,
      runs: next.map(iso),
      run: iso(runMs),
      files: order.length,
      seconds: Math.round((performance.now() - started) / 10) / 100,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
