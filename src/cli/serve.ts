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

/** The options every command that runs the server takes (serve, start). */
export function serverOptions(cmd: Command): Command {
  return cmd
    .option("-s, --store <root>", "store root: directory or http(s) URL")
    .option("-o, --out <dir>", "build output directory (its current/ is served)")
    .option("--db <file|url>", "ledger: sqlite file or postgres:// URL")
    .option("--host <host>", "address to listen on")
    .option("-p, --port <port>", "port to listen on (0 picks a free one)")
    .option("-q, --quiet", "no access log");
}

export function serverSettings(cmd: Command, opts: ServeFlags) {
  return settingsFor(cmd, { store: opts.store, out: opts.out, db: opts.db, host: opts.host, port: opts.port });
}

export function registerServe(program: Command): void {
  serverOptions(program.command("serve").description("serve the published build and the live keyed routes")).action(
    async (opts: ServeFlags, cmd: Command) => {
      const running = await startServer(serverSettings(cmd, opts), opts.quiet ? { log: () => {} } : {});
      process.stderr.write(`gridcast serving on ${running.url}\n`);
      closeOnSignals(running, (s) => process.stderr.write(`${s}\n`));
    },
  );
}
