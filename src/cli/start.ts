// `gridcast start`: the quick start in one command — the demo store when there is none, a build
// of every tile, the server, and a fresh demo key printed once.
import { existsSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import type { Settings } from "../config.ts";
import { ConfigError } from "../errors.ts";
import { closeOnSignals } from "../http/server.ts";
import { CoverageCache } from "../render/build/coverage.ts";
import { readManifest } from "../render/build/manifest.ts";
import { planBuild } from "../render/build/plan.ts";
import { currentBuild } from "../render/build/publish.ts";
import { type BuildReport, runBuild } from "../render/build/run.ts";
import { MANIFEST } from "../render/layout.ts";
import { MAX_ZOOM } from "../render/tiles.ts";
import { writeSample } from "../sample/index.ts";
import { Store } from "../store/store.ts";
import { requireFreePort, requireWritableDir, storeProblem } from "./preflight.ts";
import { accessLogSink, listen, type ServeFlags, serverOptions, serverSettings } from "./serve.ts";

const DEMO_KEY_NAME = "demo (gridcast start)";
/** `gridcast sample --preset demo --seed 1` writes 138.7 MiB (4080 files); the writer is deterministic. */
const DEMO_STORE_MIB = 139;

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
 * Before rendering: tiles are small files (the demo's average well under 1 KiB), so each takes
 * about one file-system block; one-colour tiles are hard links and take none. Tiles × block is
 * the estimate, slightly high.
 */
async function buildEstimate(store: string, out: string): Promise<string> {
  const plan = await planBuild(new Store(store), { runs: "latest", maxZoom: MAX_ZOOM }, new CoverageCache());
  const tiles = plan.jobs.reduce((n, j) => n + j.leads.length * j.tilesPerLead, 0);
  const entries = plan.jobs.reduce((n, j) => n + j.leads.length, 0);
  const disk = diskOf(out);
  const block = disk?.block ?? 4096;
  return (
    `building ${tiles.toLocaleString("en")} tiles (${entries} layer-lead times, zoom 0..${MAX_ZOOM}) into ${out}: ` +
    `up to about ${mib(tiles * block)} on disk (one ${block}-byte block a tile)` +
    (disk ? `; ${mib(disk.free)} free there` : "")
  );
}

/** On a terminal the progress bar owns stderr; the access log goes to a file instead of stdout. */
function defaultAccessLog(settings: Settings, opts: ServeFlags): string | undefined {
  if (opts.quiet || opts.accessLog !== undefined || !process.stdout.isTTY) return opts.accessLog;
  return isUrl(settings.db) || settings.db.startsWith("postgres")
    ? "gridcast-access.log"
    : join(dirname(settings.db), "access.log");
}

export function registerStart(program: Command): void {
  serverOptions(
    program.command("start").description("demo store if absent, build all tiles, then serve with a fresh demo key"),
  ).action(async (opts: ServeFlags, cmd: Command) => {
    const settings = serverSettings(cmd, opts);
    const say = (s: string) => process.stderr.write(`${s}\n`);
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
    const build = (leads?: number[]) =>
      runBuild({
        store: settings.store,
        out: settings.out,
        keepBuilds: settings.keep_builds,
        cacheMb: settings.chunk_cache_mb,
        progress: process.stderr,
        leads,
      }).then((report) => {
        const t = report.totals;
        say(
          `build ${report.build_id}: ${t.tiles} tiles (${t.rendered} layer-leads rendered, ${t.reused} reused) in ${report.seconds.toFixed(1)} s`,
        );
        return report;
      });
    // With nothing published yet, publish the first lead time of every layer first and serve it;
    // the remaining lead times render behind the running server and publish in one switch.
    const fresh = currentBuild(settings.out) === undefined;
    if (fresh) say(await buildEstimate(settings.store, settings.out).catch((e) => `build size unknown: ${e.message}`));
    const leads = fresh ? await leadHours(settings.store, settings.default_forecast_group) : undefined;
    const firstLead = leads?.[0];
    if (firstLead !== undefined) say(`rendering lead time +${firstLead} h of every layer first, to serve it soon`);
    const first = await build(firstLead === undefined ? undefined : [firstLead]);
    const running = await listen(settings, log);
    const ledger = running.ctx.ledger;
    for (const k of await ledger.listKeys()) {
      if (k.name === DEMO_KEY_NAME && !k.revokedAt) await ledger.revokeKey(k.id);
    }
    const { key } = await ledger.createKey({
      name: DEMO_KEY_NAME,
      scopes: ["weather", "embeddings"],
      credits: 1000,
      rate: 50,
    });
    const u = running.url;
    process.stdout.write(
      [
        "",
        `gridcast is serving on ${u}`,
        `  map viewer     ${u}/`,
        `  API docs       ${u}/api-docs   (ReDoc: ${u}/api-redoc)`,
        `  demo key       ${key}   (weather + embeddings, 1000 credits; shown once)`,
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
    closeOnSignals(running, say);
    if (firstLead !== undefined && leads) {
      say(remainingSize(first, leads.length, settings.out));
      await build();
      say("all lead times published");
    }
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
