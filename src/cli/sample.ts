import type { Command } from "commander";
import { ConfigError } from "../errors.ts";
import { PRESET_NAMES, type PresetName, writeSample } from "../sample/index.ts";
import { appendSampleRun, parseRunTime } from "../sample/next-run.ts";
import { printJson, settingDefault, settingsFor } from "./settings.ts";

interface SampleFlags {
  out?: string;
  preset: string;
  seed: string;
  force?: boolean;
  run?: string;
  json?: boolean;
}

export function registerSample(program: Command): void {
  program
    .command("sample")
    .description("write a deterministic synthetic Zarr store: forecast groups and EO embeddings")
    .option("-o, --out <dir>", `directory to create ${settingDefault("store")}`)
    .option("--preset <name>", `size: ${PRESET_NAMES.join(" | ")}`, "demo")
    .option("--seed <n>", "random seed; the same seed writes identical files", "1")
    .option("--force", "replace <dir> if it already holds a store")
    .option(
      "--run <time>",
      "add a forecast cycle starting at this UTC time (2026-11-21T00:00Z), after the store's latest, to a store " +
        "sample wrote (same preset and seed): a new cycle to rehearse a build and publish with",
    )
    .option("--json", "print the summary as JSON")
    .action(async (opts: SampleFlags, cmd: Command) => {
      const settings = settingsFor(cmd, { store: opts.out });
      if (/^https?:\/\//i.test(settings.store)) throw new ConfigError("sample writes a local directory, not a URL");
      if (opts.run !== undefined) {
        if (opts.force) throw new ConfigError("--run adds a cycle to a store; it does not go with --force");
        const added = await appendSampleRun(settings.store, parseRunTime(opts.run));
        if (opts.json) return printJson(added);
        process.stdout.write(
          `added run ${added.run} to ${added.out} (preset ${added.preset}, seed ${added.seed}): ` +
            `${added.files} files written in ${added.seconds} s; runs ${added.runs.join(", ")}\n`,
        );
        return;
      }
      if (!PRESET_NAMES.includes(opts.preset as PresetName)) {
        throw new ConfigError(`--preset must be one of ${PRESET_NAMES.join(", ")}`);
      }
      const seed = Number(opts.seed);
      if (!/^\d+$/.test(opts.seed.trim()) || seed > 0xffffffff) {
        throw new ConfigError("--seed must be an integer 0..4294967295");
      }
      const preset = opts.preset as PresetName;
      // Progress goes to stderr so --json output stays clean; tiny is too quick to need it.
      const onProgress = preset === "tiny" ? undefined : (line: string) => process.stderr.write(`sample: ${line}\n`);
      const summary = await writeSample(settings.store, { preset, seed, force: opts.force, onProgress });
      if (opts.json) return printJson(summary);
      const mb = (summary.bytes / 1024 / 1024).toFixed(1);
      const lines = [
        `wrote ${summary.out} (preset ${preset}, seed ${seed}): ${summary.files} files, ${mb} MiB in ${summary.seconds} s`,
      ];
      for (const g of summary.forecast) {
        lines.push(
          `  ${g.id}  zarr v${g.zarr_format}, ${g.shape.lat}x${g.shape.lon} at ${g.resolution_deg}°, ${Object.keys(g.variables).join(", ")}`,
        );
      }
      const e = summary.embeddings;
      lines.push(
        `  embeddings  ${e.items.length} items over ${e.tiles.length} tiles (${e.missing.length} left out on purpose)`,
      );
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
