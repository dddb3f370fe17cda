// Settings as a command sees them: the global --config flag plus the command's own flags.
import type { Command } from "commander";
import { DEFAULTS, loadSettings, type Settings } from "../config.ts";

/**
 * The help text's note on a setting's default: flags are applied over the settings file and
 * GRIDCAST_* variables, so the flag itself has no default and help names the setting's.
 */
export function settingDefault(key: keyof Settings): string {
  return `(default ${DEFAULTS[key]}; setting ${key}, GRIDCAST_${key.toUpperCase()})`;
}

export function settingsFor(cmd: Command, flags: Partial<Record<keyof Settings, unknown>>): Settings {
  const configFile = cmd.optsWithGlobals().config as string | undefined;
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  return loadSettings({ configFile, flags: defined });
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
