// `gridcast start`: the quick start in one command — the demo store when there is none, the
// server at once (a build already published is served while a new one renders), the demo key
// (kept beside the ledger, the same on every start), and the build in the order a viewer needs it:
// the default layer's first lead time, then the first lead time of every layer, then the rest,
// each published as soon as it is done.
import { chmodSync, existsSync, readFileSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { DEFAULTS, type Settings } from "../config.ts";
import { ConfigError } from "../errors.ts";
import type { Ledger } from "../ledger/types.ts";
import { nativeDecoderInUse } from "../native.ts";
import { CoverageCache } from "../pipeline/coverage.ts";
import { estimateBuild } from "../pipeline/estimate.ts";
import { DEFAULT_WEB_DIR } from "../pipeline/finalize.ts";
import { planBuild, planFiles } from "../pipeline/plan.ts";
import { currentBuild } from "../pipeline/publish.ts";
import { type BuildReport, runBuild } from "../pipeline/run.ts";
import { MANIFEST } from "../published/layout.ts";
import { readManifest } from "../published/manifest.ts";
import { buildHidpiMax, MAX_ZOOM } from "../render/tiles.ts";
import { writeSample } from "../sample/index.ts";
import { Store } from "../store/store.ts";
import { requireFreePort, requireWritableDir, storeProblem } from "./preflight.ts";
import { accessLogSink, closeOnSignals, listen, type ServeFlags, serverOptions, serverSettings } from "./serve.ts";

const DEMO_KEY_NAME = "demo (gridcast start)";
/**
 * What `gridcast sample --preset demo --seed 1` takes on disk: 169.5 MiB in 4 KiB blocks (157.8 MiB
 * of bytes, 4080 files); the writer is deterministic. test/cli/demo-store-size.test.ts writes it
 * and measures.
 */
export const DEMO_STORE_MIB = 170;

const isUrl = (s: string) => /^https?:\/\//i.test(s);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;

/** Free bytes and block size where `dir` (or its nearest existing parent) lives. */
function diskOf(dir: string): { free: number; block: number } | undefined {
  let d = dir;
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  try {
    const s = statfsSync(d);
    return { free: s.bavail * s.bsize, block: s.bsize || 4096 };
  } catch {
    return undefined;
  }
}
const freeBytes = (dir: string) => diskOf(dir)?.free;

/**
 * What start's full build will take on disk, from the plan that build runs (pipeline/estimate.ts):
 * tiles and @2x tiles measured on a few drawn per layer and zoom, the tile tree's folders, the
 * point copies and the documents, each in whole file-system blocks.
 */
async function buildEstimate(store: string, out: string, webDir: string): Promise<string> {
  const disk = diskOf(out);
  const block = disk?.block ?? 4096;
  const s = new Store(store);
  const coverage = new CoverageCache();
  const plan = await planBuild(s, START_SELECTION, coverage);
  const { tiles, hidpi } = planFiles(plan, buildHidpiMax(MAX_ZOOM));
  const entries = plan.jobs.reduce((n, j) => n + j.leads.length, 0);
  const e = await estimateBuild(plan, { store: s, coverage, block, hidpiMax: buildHidpiMax(MAX_ZOOM), webDir });
  return (
    `the full build: ${tiles.toLocaleString("en")} tiles and ${hidpi.toLocaleString("en")} @2x tiles (${entries} layer-lead times, ` +
    `zoom 0..${MAX_ZOOM}) into ${out}: about ${mib(e.total)} on disk (tiles ${mib(e.tiles)}, @2x ${mib(e.hidpi)}, ` +
    `folders ${mib(e.dirs)}, point copies ${mib(e.point_copies)}, documents ${mib(e.documents)}; ` +
    `measured on ${e.sampled} tiles drawn)` +
    (disk ? `; ${mib(disk.free)} free there` : "")
  );
}

/** What start's full build selects: every layer, the orientation layer, the latest run, every zoom. */
const START_SELECTION = { runs: "latest" as const, maxZoom: MAX_ZOOM, orientation: true };

/**
 * What start's full build writes (every layer, the orientation layer, the latest run, zoom
 * 0..MAX_ZOOM, base layers' @2x tiles up to MAX_ZOOM, the others' lower): planned, not rendered. The README's figures for
 * the demo store are checked against it (test/docs/readme-figures.test.ts).
 */
export async function startFiles(store: string): Promise<{ tiles: number; hidpi: number; entries: number }> {
  const plan = await planBuild(new Store(store), START_SELECTION, new CoverageCache());
  const entries = plan.jobs.reduce((n, j) => n + j.leads.length, 0);
  return { ...planFiles(plan, buildHidpiMax(MAX_ZOOM)), entries };
}

/** On a terminal the progress bar owns stderr; the access log goes to a file instead of stdout. */
export function defaultAccessLog(
  settings: Pick<Settings, "db">,
  opts: Pick<ServeFlags, "quiet" | "accessLog">,
  tty = process.stdout.isTTY === true,
): string | undefined {
  if (opts.quiet || opts.accessLog !== undefined || !tty) return opts.accessLog;
  return isUrl(settings.db) || settings.db.startsWith("postgres")
    ? "gridcast-access.log"
    : join(dirname(settings.db), "access.log");
}

/** What `start --help` says of --access-log: the file above for the default ledger. */
export const START_ACCESS_LOG_HELP =
  `${defaultAccessLog(DEFAULTS, {}, true)} (access.log beside a sqlite ledger, ./gridcast-access.log ` +
  "for PostgreSQL) when stdout is a terminal, else stdout";

/** Where start keeps the demo key's secret: beside a sqlite ledger, else in the working directory. */
export function demoKeyFile(settings: Settings): string {
  return isUrl(settings.db) || settings.db.startsWith("postgres")
    ? "gridcast-demo-key"
    : join(dirname(settings.db), "demo-key");
}

/**
 * The demo key: the one kept in `file` while the ledger still accepts it, else a new one, kept
 * there (readable by this user only). start never revokes a key: one revoked or removed by the
 * operator (gridcast keys revoke) is replaced by a new one on the next start.
 */
export async function demoKey(ledger: Ledger, file: string): Promise<{ key: string; kept: boolean; credits: number }> {
  const saved = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  if (saved) {
    let id: string | undefined;
    try {
      id = (await ledger.authenticate(saved, "weather")).id;
    } catch {
      // Another ledger, or revoked: a new one below.
    }
    // The banner says what the key holds now, not what it started with.
    if (id !== undefined) return { key: saved, kept: true, credits: await ledger.balance(id) };
  }
  const { key } = await ledger.createKey({
    name: DEMO_KEY_NAME,
    scopes: ["weather", "embeddings"],
    credits: DEMO_KEY_CREDITS,
    rate: 50,
  });
  // The mode of writeFileSync applies only to a file it creates: one left readable to others by
  // an older key (or made by hand) is narrowed before the new secret goes in.
  if (existsSync(file)) chmodSync(file, 0o600);
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { key, kept: false, credits: DEMO_KEY_CREDITS };
}

/** Credits a new demo key starts with. */
const DEMO_KEY_CREDITS = 1000;

interface Stage {
  what: string;
  /** Highest zoom rendered (default every zoom). */
  maxZoom?: number;
  /** For the catalog of this step's build: what the next steps add. */
  rendering?: string;
  /** An early stage the store may not allow (no t2m in the default group): skipped, said so. */
  early?: boolean;
  groups?: string[];
  vars?: string[];
  leads?: number[];
  /** Leave the @2x tiles out (the first quick map: they would double its time). */
  noHidpi?: boolean;
}

/** Zoom levels of the very first step: the viewer draws deeper zooms by scaling these up. */
const FIRST_MAX_ZOOM = 5;

/**
 * What start builds, in order: with nothing published, the default layer's first lead time at
 * low zooms (the viewer opens on it; 1,365 tiles of a global layer), then the first lead time of
 * every layer at every zoom, then everything. Each build reuses every tile the published one has
 * unchanged, and the second step is skipped when the published build already holds it.
 */
async function stagesFor(settings: Settings, fresh: boolean): Promise<Stage[]> {
  const all: Stage = { what: "every layer and lead time" };
  const leads = await leadHours(settings.store, settings.default_forecast_group);
  const first = leads?.[0];
  if (first === undefined) return [all];
  const firstMap: Stage = {
    what: `lead time +${first} h of the default layer (t2m), zoom 0..${FIRST_MAX_ZOOM}`,
    early: true,
    maxZoom: FIRST_MAX_ZOOM,
    noHidpi: true,
    groups: [settings.default_forecast_group],
    vars: ["t2m"],
    leads: [first],
    rendering: `zoom ${FIRST_MAX_ZOOM + 1}..${MAX_ZOOM}, the other layers, then every lead time after +${first} h`,
  };
  return [
    ...(fresh ? [firstMap] : []),
    {
      what: `lead time +${first} h of every layer`,
      early: true,
      leads: [first],
      rendering: `every lead time after +${first} h`,
    },
    all,
  ];
}

/** What a build of `stage` will render and reuse, against the published build, in one line. */
async function planOf(settings: Settings, stage: Stage): Promise<{ line: string; render: number }> {
  const plan = await planBuild(
    new Store(settings.store),
    {
      runs: "latest",
      maxZoom: stage.maxZoom ?? MAX_ZOOM,
      groups: stage.groups,
      vars: stage.vars,
      leads: stage.leads,
    },
    new CoverageCache(),
  );
  const prev = currentBuild(settings.out);
  const manifest = prev && readManifest(join(prev.dir, MANIFEST));
  const had = new Map(manifest?.entries.map((e) => [e.key, e.fingerprint]) ?? []);
  let render = 0;
  let renderTiles = 0;
  let reuse = 0;
  for (const job of plan.jobs) {
    for (const lead of job.leads) {
      if (had.get(lead.key) === lead.fingerprint) reuse++;
      else {
        render++;
        renderTiles += job.tilesPerLead;
      }
    }
  }
  return {
    line: `plan: ${stage.what}: ${renderTiles.toLocaleString("en")} tiles to render (${render} layer-lead times), ${reuse} layer-lead times reused from the published build`,
    render,
  };
}

export function registerStart(program: Command): void {
  serverOptions(
    program
      .command("start")
      .description("demo store if absent, serve at once, build the tiles in the order a viewer needs them"),
    START_ACCESS_LOG_HELP,
  ).action(async (opts: ServeFlags, cmd: Command) => {
    const settings = serverSettings(cmd, opts);
    const say = (s: string) => process.stderr.write(`${s}\n`);
    const started = performance.now();
    const since = () => `${((performance.now() - started) / 1000).toFixed(1)} s after start`;
    // Everything an operator can get wrong is checked before minutes of writing and rendering.
    await requireFreePort(settings.host, settings.port);
    requireWritableDir(settings.out);
    const missingStore = !isUrl(settings.store) && !existsSync(settings.store);
    const storeBad = storeProblem(settings.store);
    if (storeBad && !missingStore) throw new ConfigError(storeBad);
    const logFile = defaultAccessLog(settings, opts);
    const log = accessLogSink(opts, logFile);

    if (missingStore) {
      const free = freeBytes(settings.store);
      say(
        `writing the demo store to ${settings.store}: about ${DEMO_STORE_MIB} MiB on disk` +
          (free === undefined ? "" : ` (${mib(free)} free there)`),
      );
      if (free !== undefined && free < DEMO_STORE_MIB * 1024 * 1024 * 1.1) {
        throw new ConfigError(
          `not enough disk space for the demo store at ${settings.store}: needs about ${DEMO_STORE_MIB} MiB, ${mib(free)} free`,
        );
      }
      const s = await writeSample(settings.store, { preset: "demo", seed: 1, onProgress: say });
      say(`demo store ready: ${s.files} files, ${mib(s.bytes)} in ${s.seconds.toFixed(1)} s`);
    }
    // The server answers from here on: the published build if there is one (a restart keeps the
    // map up), else 503 "no forecast build has been published yet" until the first stage is done.
    const published = currentBuild(settings.out);
    const running = await listen(settings, log);
    const keyFile = demoKeyFile(settings);
    const { key, kept, credits } = await demoKey(running.ctx.ledger, keyFile);
    const u = running.url;
    process.stdout.write(
      [
        "",
        `gridcast is serving on ${u}`,
        `  map viewer     ${u}/   ${published ? `(build ${published.id}; a newer one replaces it when done)` : "(first map in a few seconds: the default layer renders first)"}`,
        `  API docs       ${u}/api-docs   (ReDoc: ${u}/api-redoc)`,
        `  decoder        ${nativeDecoderInUse()}`,
        `  demo key       ${key}   (weather + embeddings, ${kept ? `${credits} credits left; the same as last time` : `${credits} credits to start; new`}, kept in ${keyFile})`,
        logFile && !opts.quiet ? `  access log     ${logFile}   (JSON lines; tail -f it to watch requests)` : "",
        "",
        "try:",
        `  curl -H 'X-API-Key: ${key}' '${u}/point?lat=48.14&lon=11.58&var=2t'`,
        `  curl -o t2m.npy -H 'X-API-Key: ${key}' '${u}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2&lat_min=40&lat_max=55&lon_min=0&lon_max=20'`,
        "",
      ]
        .filter((line, i, all) => line !== "" || all[i - 1] !== "")
        .join("\n"),
    );
    await closeOnSignals(running, say);

    if (published) say(`serving the published build ${published.id} while a new one renders`);
    const stages = await stagesFor(settings, published === undefined);
    // Measured by drawing a few tiles of every layer and zoom: said once the first map is up (or
    // before the first stage when it is the whole build), so the first map does not wait for it.
    let estimated = published !== undefined;
    const estimate = async () => {
      if (estimated) return;
      estimated = true;
      say(
        await buildEstimate(settings.store, settings.out, DEFAULT_WEB_DIR).catch(
          (e: Error) => `build size unknown: ${e.message}`,
        ),
      );
    };
    for (const [i, stage] of stages.entries()) {
      if (i > 0 || stages.length === 1) await estimate();
      const plan = await planOf(settings, stage).catch((e: Error) => ({
        line: `plan: ${stage.what}: unknown (${e.message})`,
        render: -1,
      }));
      if (stage.early && plan.render === 0) {
        say(`${stage.what}: already published`);
        continue;
      }
      say(plan.line);
      let report: BuildReport;
      try {
        report = await runBuild({
          store: settings.store,
          out: settings.out,
          keepBuilds: settings.keep_builds,
          cacheMb: settings.chunk_cache_mb,
          cellGridMb: settings.cell_grid_mb,
          progress: process.stderr,
          groups: stage.groups,
          vars: stage.vars,
          leads: stage.leads,
          maxZoom: stage.maxZoom,
          hidpi: !stage.noHidpi,
          rendering: stage.rendering,
          // The quick first stages publish forecast tiles only; the orientation layer comes with the rest.
          orientation: !stage.early,
        });
      } catch (e) {
        if (stage.early && e instanceof ConfigError) {
          say(`skipped ${stage.what}: ${e.message}`);
          continue;
        }
        // With a build published the map stays up, and the failure is said; with none, stop.
        const serving = currentBuild(settings.out);
        if (!serving) {
          await running.close();
          throw e;
        }
        say(`gridcast: the build of ${stage.what} failed: ${(e as Error).message}; still serving build ${serving.id}`);
        process.exitCode = 1;
        return;
      }
      if (report.unchanged) {
        say(`${stage.what}: nothing new since build ${report.unchanged}; still serving it`);
        continue;
      }
      const t = report.totals;
      say(
        `build ${report.build_id}: ${t.tiles} tiles (${t.rendered} layer-leads rendered, ${t.reused} reused) in ${report.seconds.toFixed(1)} s`,
      );
      say(`published ${stage.what} (${i + 1} of ${stages.length}), ${since()}`);
      if (i === stages.length - 2) {
        // Measured on the first lead time of every layer, just written.
        const leadCount = (await leadHours(settings.store, settings.default_forecast_group))?.length;
        if (leadCount) say(remainingSize(report, leadCount, settings.out));
      }
    }
    say("all lead times published");
  });
}

/** The rest of the build's size on disk, measured on the first lead time it just wrote. */
function remainingSize(first: BuildReport, leadCount: number, out: string): string {
  const manifest = readManifest(join(first.dir, MANIFEST));
  const block = diskOf(out)?.block ?? 4096;
  // Each encoded tile is one file, rounded up to whole blocks; one-colour tiles are links to them.
  const bytes =
    manifest?.entries.reduce(
      (n, e) => n + (e.encoded > 0 ? e.encoded * Math.ceil(e.bytes / e.encoded / block) * block : 0),
      0,
    ) ?? 0;
  const rest = bytes * (leadCount - 1);
  const free = freeBytes(out);
  return (
    `rendering the remaining ${leadCount - 1} lead times in the background: about ${mib(rest)} more on disk ` +
    `(lead time 1 of ${leadCount} took ${mib(bytes)})${free === undefined ? "" : `; ${mib(free)} free`} …`
  );
}

async function leadHours(store: string, group: string): Promise<number[] | undefined> {
  try {
    return (await new Store(store).forecastGroup(group)).leads;
  } catch {
    return undefined;
  }
}
