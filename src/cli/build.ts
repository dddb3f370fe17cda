import type { Command } from "commander";
import { ConfigError } from "../errors.ts";
import { nativeDecoderInUse } from "../native.ts";
import { type BuildReport, runBuild } from "../pipeline/run.ts";
import { TILE_FORMATS, type TileFormat } from "../published/format.ts";
import { requireStore, requireWritableDir } from "./preflight.ts";
import { printJson, settingDefault, settingsFor } from "./settings.ts";
import { parseShard, SHARD_COUNT_VAR } from "./shard.ts";

interface BuildFlags {
  store?: string;
  out?: string;
  maxZoom?: string;
  groups?: string;
  vars?: string;
  runs: string;
  leads?: string;
  concurrency?: string;
  shard?: string;
  buildId?: string;
  keepBuilds?: string;
  publicUrl?: string;
  reuse: boolean;
  pointCopy: boolean;
  orientation: boolean;
  tiles: string;
  allowDroppedLayers?: boolean;
  allowSkipped?: boolean;
  allowMissingVars?: boolean;
  allowMissingGroups?: boolean;
  allowMissingLeads?: boolean;
  json?: boolean;
}

/** Exit status of a build that published but left out groups it could not read (see README). */
export const EXIT_GROUPS_SKIPPED = 3; // listed in program.ts's EXIT and --help
/** Exit status of a build or publish that found nothing new and published nothing (see README). */
export const EXIT_NOTHING_NEW = 4; // listed in program.ts's EXIT and --help

/** The line said when a build held nothing the published one lacks. */
export const nothingNewLine = (id: string): string =>
  `nothing new since build ${id}: nothing was published and no kept build was removed`;

const list = (s: string | undefined): string[] | undefined =>
  s === undefined
    ? undefined
    : s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean);

function integer(flag: string, s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  if (!/^\d+$/.test(s.trim())) throw new ConfigError(`${flag} must be a non-negative integer, got "${s}"`);
  return Number(s);
}

function leadHours(s: string | undefined): number[] | undefined {
  return list(s)?.map((x) => {
    const h = Number(x);
    if (!/^\d+(\.\d+)?$/.test(x) || !Number.isFinite(h))
      throw new ConfigError(`--leads takes hours like 0,6,12; got "${x}"`);
    return h;
  });
}

function summary(r: BuildReport, out: string): string {
  if (r.unchanged) {
    // Decided before anything was rendered or linked: one line, not a build's summary.
    const notes = [...r.skipped.map((g) => `skipped ${g.id}: ${g.reason}`), ...r.warnings.map((w) => `warning: ${w}`)];
    return `${[nothingNewLine(r.unchanged), ...notes].join("\n")}\n`;
  }
  const t = r.totals;
  const lines = [
    `build ${r.build_id}${r.shard ? ` shard ${r.shard.index}/${r.shard.count}` : ""}: ${t.layers} layers, ` +
      `${t.entries} layer-run-leads (${t.rendered} rendered, ${t.reused} reused), ${t.tiles} tiles ` +
      `in ${r.render_seconds.toFixed(1)} s (${Math.round(r.tiles_per_second)} tiles/s); ${r.seconds.toFixed(1)} s in all`,
  ];
  if (r.output) {
    const o = r.output;
    lines.push(
      `output (${o.format}): ${o.files} files, ${(o.bytes / 2 ** 20).toFixed(1)} MiB; tiles ${o.tile_files} files, ${(o.tile_bytes / 2 ** 20).toFixed(1)} MiB`,
    );
  }
  lines.push(`Blosc decoder: ${nativeDecoderInUse()}`);
  if (r.published) lines.push(`published ${out}/current -> builds/${r.build_id}`);
  else lines.push(`when all ${r.shard!.count} shards are done: gridcast publish --out ${out} --build-id ${r.build_id}`);
  if (r.embeddings) {
    lines.push(`embeddings: ${r.embeddings.items} items, ${r.embeddings.indexes} locate indexes`);
    for (const s of r.embeddings.skipped) lines.push(`skipped ${s.path}: ${s.reason}`);
  }
  if (r.removed.length) lines.push(`removed old builds: ${r.removed.join(", ")}`);
  for (const g of r.skipped) lines.push(`skipped ${g.id}: ${g.reason}`);
  for (const w of r.warnings) lines.push(`warning: ${w}`);
  if (r.cleaned.length) lines.push(`removed partial builds left by killed builds: ${r.cleaned.join(", ")}`);
  return `${lines.join("\n")}\n`;
}

export function registerBuild(program: Command): void {
  program
    .command("build")
    .description("pre-render every map tile, the forecast catalog and the locate indexes, then publish atomically")
    .option("-s, --store <root>", `store root: directory or http(s) URL ${settingDefault("store")}`)
    .option("-o, --out <dir>", `build output directory: builds/ and the current link ${settingDefault("out")}`)
    .option("--max-zoom <z>", `highest zoom level rendered, 0..7 ${settingDefault("max_zoom")}`)
    .option(
      "--public-url <url>",
      `base URL clients reach the published files at, for TileJSON and WMTS ${settingDefault("public_url")}`,
    )
    .option("--groups <list>", "comma-separated groups (forecast/global or global); default every group")
    .option("--vars <list>", "comma-separated variables (names or aliases); default every one with a map style")
    .option("--runs <which>", "latest | all", "latest")
    .option("--leads <hours>", "comma-separated lead times in hours; default every lead")
    .option("--concurrency <n>", "worker threads (default: one per core)")
    .option(
      "--shard <k/n|auto>",
      "render part k of n into the shared partial build (needs --build-id), then `publish`; auto: " +
        `from a batch engine's task index (JOB_COMPLETION_INDEX, CLOUD_RUN_TASK_INDEX/COUNT, AWS_BATCH_JOB_ARRAY_INDEX, ` +
        `SLURM_ARRAY_TASK_ID with its MIN/MAX/STEP/COUNT, PBS_ARRAY_INDEX) and ${SHARD_COUNT_VAR} where the engine gives no count`,
    )
    .option("--build-id <id>", "name of the build directory (default: a UTC timestamp)")
    .option(
      "--keep-builds <n>",
      `builds kept after publishing, the published one included ${settingDefault("keep_builds")}`,
    )
    .option("--tiles <format>", "zxy (one PNG file per tile) | pmtiles (one archive per layer-run-lead)", "zxy")
    .option("--no-reuse", "render every tile, even those the published build already has")
    .option(
      "--no-point-copy",
      `leave out the point-optimized copy /point reads (then it reads the store) ${settingDefault("point_copy")}`,
    )
    .option("--no-orientation", "leave out the orientation layer (place names, state borders, rivers, lakes)")
    .option("--allow-dropped-layers", "publish even if the published build has layers this build lacks")
    .option(
      "--allow-missing-vars",
      "build the other variables when one named by --vars has no map layer (default: exit 2 naming it)",
    )
    .option(
      "--allow-missing-groups",
      "build the others when a group named by --groups cannot be read or has no map layer of the selection (default: exit 2 naming it)",
    )
    .option(
      "--allow-missing-leads",
      "build the others when a lead time named by --leads is in no selected group (default: exit 2 naming it)",
    )
    .option(
      "--allow-skipped",
      `exit 0 even when a forecast group, an embedding item or an array below embeddings/ could not be served (default: publish the others, list each with its reason, exit ${EXIT_GROUPS_SKIPPED})`,
    )
    .option("--json", "print the report as JSON")
    .action(async (opts: BuildFlags, cmd: Command) => {
      const settings = settingsFor(cmd, {
        store: opts.store,
        out: opts.out,
        keep_builds: opts.keepBuilds,
        max_zoom: integer("--max-zoom", opts.maxZoom),
        public_url: opts.publicUrl,
      });
      const exitFor = (r: BuildReport) => {
        const skipped = r.skipped.length + (r.embeddings?.skipped.length ?? 0);
        if (skipped && !opts.allowSkipped) process.exitCode = EXIT_GROUPS_SKIPPED;
        if (r.unchanged) process.exitCode = EXIT_NOTHING_NEW;
      };
      if (opts.runs !== "latest" && opts.runs !== "all") throw new ConfigError(`--runs must be latest or all`);
      if (!TILE_FORMATS.includes(opts.tiles as TileFormat))
        throw new ConfigError(`--tiles must be ${TILE_FORMATS.join(" or ")}, got "${opts.tiles}"`);
      const shard = parseShard(opts.shard, process.env);
      requireStore(settings.store);
      requireWritableDir(settings.out);
      const report = await runBuild({
        store: settings.store,
        out: settings.out,
        maxZoom: settings.max_zoom,
        publicUrl: settings.public_url,
        groups: list(opts.groups),
        vars: list(opts.vars),
        runs: opts.runs,
        leads: leadHours(opts.leads),
        concurrency: integer("--concurrency", opts.concurrency),
        shard,
        lockLeaseS: settings.build_lock_lease_s,
        buildId: opts.buildId,
        keepBuilds: settings.keep_builds,
        cacheMb: settings.chunk_cache_mb,
        cellGridMb: settings.cell_grid_mb,
        reuse: opts.reuse,
        pointCopy: opts.pointCopy !== false && settings.point_copy !== 0,
        pointCopyMb: settings.point_copy_mb,
        orientation: opts.orientation !== false,
        tiles: opts.tiles as TileFormat,
        allowDroppedLayers: opts.allowDroppedLayers === true,
        allowMissingVars: opts.allowMissingVars === true,
        allowMissingGroups: opts.allowMissingGroups === true,
        allowMissingLeads: opts.allowMissingLeads === true,
        rootGroupName: settings.root_group_name || undefined,
      });
      exitFor(report);
      if (opts.json) return printJson(report);
      process.stdout.write(summary(report, settings.out));
    });
}
