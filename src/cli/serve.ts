import type { Command } from "commander";
import { closeOnSignals, startServer } from "../http/server.ts";
import { settingsFor } from "./settings.ts";

export interface ServeFlags {
  store?: string;
  out?: string;
  db?: string;
  host?: string;
  port?: string;
  quiet?: boolean;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve the published build and the live keyed routes")
    .option("-s, --store <root>", "store root: directory or http(s) URL")
    .option("-o, --out <dir>", "build output directory (its current/ is served)")
    .option("--db <file|url>", "ledger: sqlite file or postgres:// URL")
    .option("--host <host>", "address to listen on")
    .option("-p, --port <port>", "port to listen on (0 picks a free one)")
    .option("-q, --quiet", "no access log")
    .action(async (opts: ServeFlags, cmd: Command) => {
      const settings = settingsFor(cmd, {
        store: opts.store,
        out: opts.out,
        db: opts.db,
        host: opts.host,
        port: opts.port,
      });
      const running = await startServer(settings, opts.quiet ? { log: () => {} } : {});
      process.stderr.write(`gridcast serving on ${running.url}\n`);
      closeOnSignals(running, (s) => process.stderr.write(`${s}\n`));
    });
}
