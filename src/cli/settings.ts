// Settings as a command sees them: the global --config flag plus the command's own flags.
import type { Command } from "commander";
import { loadSettings, type Settings } from "../config.ts";

export function settingsFor(cmd: Command, flags: Partial<Record<keyof Settings, unknown>>): Settings {
  const configFile = cmd.optsWithGlobals().config as string | undefined;
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  return loadSettings({ configFile, flags: defined });
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
