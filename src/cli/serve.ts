import { createWriteStream } from "node:fs";
import { dirname } from "node:path";
import type { Command } from "commander";
import type { Settings } from "../config.ts";
import { lineLog } from "../http/log-lines.ts";
import type { Running } from "../http/server.ts";
import { nativeDecoderInUse } from "../native.ts";
import { asListenError, requireStore, requireWritableDir } from "./preflight.ts";
import { settingDefault, settingsFor } from "./settings.ts";

export interface ServeFlags {
  store?: string;
  out?: string;
  db?: string;
  host?: string;
  port?: string;
  quiet?: boolean;
  accessLog?: string;
  publicUrl?: string;
}

/** The options every command that runs the server takes (serve, start). */
export function serverOptions(cmd: Command, accessLogDefault = "stdout"): Command {
  return cmd
    .option("-s, --store <root>", `store root: directory or http(s) URL ${settingDefault("store")}`)
    .option("-o, --out <dir>", `build output directory, its current/ is served ${settingDefault("out")}`)
    .option("--db <file|url>", `ledger: sqlite file or postgres:// URL ${settingDefault("db")}`)
    .option("--host <host>", `address to listen on ${settingDefault("host")}`)
    .option("-p, --port <port>", `port to listen on, 0 picks a free one ${settingDefault("port")}`)
    .option(
      "--public-url <url>",
      `base URL clients reach this server at, for WMTS and the catalog ${settingDefault("public_url")}`,
    )
    .option("--access-log <file>", `append the JSON access log to this file (default: ${accessLogDefault})`)
    .option("-q, --quiet", "no access log");
}

export function serverSettings(cmd: Command, opts: ServeFlags) {
  return settingsFor(cmd, {
    store: opts.store,
    out: opts.out,
    db: opts.db,
    host: opts.host,
    port: opts.port,
    public_url: opts.publicUrl,
  });
}

export type LogSink = (e: Record<string, unknown>) => void;

/** Where the access log goes: nowhere (--quiet), a file (--access-log), or stdout (undefined). */
export function accessLogSink(opts: ServeFlags, file = opts.accessLog): LogSink | undefined {
  if (opts.quiet) return () => {};
  if (file === undefined) return undefined;
  requireWritableDir(dirname(file), "--access-log directory");
  return lineLog(createWriteStream(file, { flags: "a" }), true);
}

/** startServer with a taken port or a foreign address reported as one clear line. */
export async function listen(settings: Settings, log: LogSink | undefined): Promise<Running> {
  // The HTTP stack is loaded by the commands that serve only: build, publish and keys start
  // without it (a "nothing new" build is over in the time it would take to load).
  const { startServer } = await import("../http/server.ts");
  try {
    return await startServer(settings, log ? { log } : {});
  } catch (e) {
    throw asListenError(e, settings.host, settings.port);
  }
}

/** Closes the server on SIGINT/SIGTERM (http/server.ts), loaded with the server. */
export async function closeOnSignals(running: Running, say: (s: string) => void): Promise<void> {
  (await import("../http/server.ts")).closeOnSignals(running, say);
}

export function registerServe(program: Command): void {
  serverOptions(program.command("serve").description("serve the published build and the live keyed routes")).action(
    async (opts: ServeFlags, cmd: Command) => {
      const settings = serverSettings(cmd, opts);
      // A store that is not there is an operator mistake (exit 2), named before anything listens.
      requireStore(settings.store);
      const running = await listen(settings, accessLogSink(opts));
      process.stderr.write(`gridcast serving on ${running.url} (Blosc decoder: ${nativeDecoderInUse()})\n`);
      await closeOnSignals(running, (s) => process.stderr.write(`${s}\n`));
    },
  );
}
