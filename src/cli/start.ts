// `gridcast start`: the quick start in one command — the demo store when there is none, a build
// of every tile, the server, and a fresh demo key printed once.
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { closeOnSignals, startServer } from "../http/server.ts";
import { currentBuild } from "../render/build/publish.ts";
import { runBuild } from "../render/build/run.ts";
import { writeSample } from "../sample/index.ts";
import { Store } from "../store/store.ts";
import { type ServeFlags, serverOptions, serverSettings } from "./serve.ts";

const DEMO_KEY_NAME = "demo (gridcast start)";

export function registerStart(program: Command): void {
  serverOptions(
    program.command("start").description("demo store if absent, build all tiles, then serve with a fresh demo key"),
  ).action(async (opts: ServeFlags, cmd: Command) => {
    const settings = serverSettings(cmd, opts);
    const say = (s: string) => process.stderr.write(`${s}\n`);
    if (!/^https?:\/\//i.test(settings.store) && !existsSync(settings.store)) {
      say(`writing the demo store to ${settings.store} …`);
      const s = await writeSample(settings.store, { preset: "demo", seed: 1, onProgress: say });
      say(`demo store ready: ${s.files} files in ${s.seconds.toFixed(1)} s`);
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
    const firstLead = fresh ? await firstLeadHours(settings.store, settings.default_forecast_group) : undefined;
    await build(firstLead === undefined ? undefined : [firstLead]);
    const running = await startServer(settings, opts.quiet ? { log: () => {} } : {});
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
        "",
        "try:",
        `  curl -H 'X-API-Key: ${key}' '${u}/point?lat=48.14&lon=11.58&var=2t'`,
        `  curl -o t2m.npy -H 'X-API-Key: ${key}' '${u}/api/export/forecast~global/npy?var=t2m&time_index=0&lead_start=0&lead_stop=2&lat_min=40&lat_max=55&lon_min=0&lon_max=20'`,
        "",
      ].join("\n"),
    );
    closeOnSignals(running, say);
    if (firstLead !== undefined) {
      say("rendering the remaining lead times in the background …");
      await build();
      say("all lead times published");
    }
  });
}

async function firstLeadHours(store: string, group: string): Promise<number | undefined> {
  try {
    return (await new Store(store).forecastGroup(group)).leads[0];
  } catch {
    return undefined;
  }
}
