import type { Command } from "commander";
import { publishShards } from "../pipeline/finalize.ts";
import { EXIT_NOTHING_NEW, nothingNewLine } from "./build.ts";
import { requireStore, requireWritableDir } from "./preflight.ts";
import { printJson, settingDefault, settingsFor } from "./settings.ts";

interface PublishFlags {
  out?: string;
  store?: string;
  buildId: string;
  keepBuilds?: string;
  allowDroppedLayers?: boolean;
  publicUrl?: string;
  json?: boolean;
}

export function registerPublish(program: Command): void {
  program
    .command("publish")
    .description("merge the shards of a build, write its catalog, TileJSON, legends and indexes, and publish it")
    .requiredOption("--build-id <id>", "the build the shards wrote (their --build-id)")
    .option("-o, --out <dir>", `build output directory ${settingDefault("out")}`)
    .option("-s, --store <root>", "store for the embedding indexes (default: the one the shards rendered from)")
    .option(
      "--keep-builds <n>",
      `builds kept after publishing, the published one included ${settingDefault("keep_builds")}`,
    )
    .option("--public-url <url>", `base URL clients reach the published files at ${settingDefault("public_url")}`)
    .option("--allow-dropped-layers", "publish even if the published build has layers this build lacks")
    .option("--json", "print the report as JSON")
    .action(async (opts: PublishFlags, cmd: Command) => {
      const settings = settingsFor(cmd, { out: opts.out, keep_builds: opts.keepBuilds, public_url: opts.publicUrl });
      if (opts.store !== undefined) requireStore(opts.store);
      requireWritableDir(settings.out);
      const r = await publishShards({
        out: settings.out,
        buildId: opts.buildId,
        store: opts.store,
        keepBuilds: settings.keep_builds,
        cacheMb: settings.chunk_cache_mb,
        cellGridMb: settings.cell_grid_mb,
        allowDroppedLayers: opts.allowDroppedLayers === true,
        lockLeaseS: settings.build_lock_lease_s,
        publicUrl: settings.public_url,
      });
      if (r.unchanged) process.exitCode = EXIT_NOTHING_NEW;
      if (opts.json) return printJson(r);
      if (r.unchanged) return void process.stdout.write(`${nothingNewLine(r.unchanged)}\n`);
      const lines = [
        `published ${settings.out}/current -> builds/${r.build_id}: ${r.shards} shards, ${r.totals.entries} ` +
          `layer-run-leads (${r.totals.rendered} rendered, ${r.totals.reused} reused), ${r.totals.tiles} tiles`,
        `embeddings: ${r.embeddings.items} items, ${r.embeddings.indexes} locate indexes`,
      ];
      if (r.removed.length) lines.push(`removed old builds: ${r.removed.join(", ")}`);
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
