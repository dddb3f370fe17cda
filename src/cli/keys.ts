import type { Command } from "commander";
import { ConfigError } from "../errors.ts";
import { isScope, UNPRINTABLE } from "../ledger/input.ts";
import { openLedger } from "../ledger/open.ts";
import { type KeyRecord, type Ledger, SCOPES, type Scope } from "../ledger/types.ts";
import { printJson, settingDefault, settingsFor } from "./settings.ts";

interface Common {
  db?: string;
  json?: boolean;
}

interface CreateOpts extends Common {
  name: string;
  scopes: string;
  credits: string;
  rate: string;
  burst?: string;
  expires?: string;
}

function parseScopes(raw: string): Scope[] {
  const list = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new ConfigError(`--scopes needs at least one of: ${SCOPES.join(", ")}`);
  for (const s of list) {
    if (!isScope(s)) throw new ConfigError(`unknown scope "${s}" (known: ${SCOPES.join(", ")})`);
  }
  return list as Scope[];
}

function parseCount(flag: string, raw: string, min = 0): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new ConfigError(`${flag} must be an integer >= ${min}, got "${raw}"`);
  }
  return n;
}

function parseRate(raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new ConfigError(`--rate must be a number >= 0 (0 = unlimited), got "${raw}"`);
  }
  return n;
}

function parseExpiry(raw: string): Date {
  const t = Date.parse(raw);
  if (!Number.isFinite(t))
    throw new ConfigError(`--expires is not a valid date: "${raw}" (use YYYY-MM-DD or an ISO 8601 timestamp)`);
  if (t <= Date.now()) throw new ConfigError(`--expires must be in the future, got "${raw}"`);
  return new Date(t);
}

const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, "gu");

/**
 * Text from the ledger as the terminal should show it: control and text-direction characters
 * become visible escapes (\x1b, \u202e). New names cannot hold them, but a ledger written by an
 * older version or by hand might, and nothing stored may drive the operator's terminal.
 */
export function printable(s: string): string {
  return s.replace(UNPRINTABLE_ALL, (c) => {
    const code = c.codePointAt(0) as number;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

function status(k: KeyRecord): string {
  if (k.revokedAt) return "revoked";
  if (k.expiresAt && Date.parse(k.expiresAt) <= Date.now()) return "expired";
  return "active";
}

function describe(k: KeyRecord): string[] {
  return [
    `id:       ${printable(k.id)}`,
    `name:     ${printable(k.name)}`,
    `scopes:   ${k.scopes.join(",")}`,
    `credits:  ${k.credits}`,
    `rate:     ${k.rate > 0 ? `${k.rate}/s, burst ${k.burst}` : "unlimited"}`,
    `status:   ${status(k)}`,
    `created:  ${k.createdAt}`,
    `expires:  ${k.expiresAt ?? "never"}`,
    ...(k.revokedAt ? [`revoked:  ${k.revokedAt}`] : []),
  ];
}

function table(keys: KeyRecord[]): string[] {
  const rows = [
    ["ID", "NAME", "SCOPES", "CREDITS", "RATE", "STATUS", "EXPIRES"],
    ...keys.map((k) => [
      printable(k.id),
      printable(k.name),
      k.scopes.join(","),
      String(k.credits),
      k.rate > 0 ? `${k.rate}/s` : "-",
      status(k),
      k.expiresAt ?? "never",
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join("  ")
      .trimEnd(),
  );
}

/** Opens the ledger named by --db or the settings, runs `fn`, always closes it. */
async function withLedger(cmd: Command, opts: Common, fn: (ledger: Ledger) => Promise<void>): Promise<void> {
  const settings = settingsFor(cmd, { db: opts.db });
  // An operator's command may wait longer than a request would for a lock a server holds.
  const ledger = await openLedger(settings.db, { timeoutMs: CLI_LEDGER_TIMEOUT_MS });
  try {
    await fn(ledger);
  } finally {
    await ledger.close();
  }
}

const CLI_LEDGER_TIMEOUT_MS = 10_000;

const write = (lines: string[]) => process.stdout.write(`${lines.join("\n")}\n`);

export function registerKeys(program: Command): void {
  const keys = program.command("keys").description("issue and manage API keys, scopes and credits");
  const sub = (name: string, description: string) =>
    keys
      .command(name)
      .description(description)
      .option("--db <file>", `ledger: sqlite file or postgres:// URL ${settingDefault("db")}`)
      .option("--json", "print JSON");

  sub("create", "issue a new key; it is printed once and cannot be shown again")
    .option("--name <name>", "label for the key", "unnamed")
    .option("--scopes <list>", `comma-separated scopes (${SCOPES.join(", ")})`, SCOPES.join(","))
    .option("--credits <n>", "initial credit balance", "0")
    .option("--rate <r>", "requests per second (0 = unlimited)", "10")
    .option("--burst <n>", "requests allowed at once (default: the rate, at least 1)")
    .option("--expires <date>", "expiry date or timestamp (default: never)")
    .action(async (opts: CreateOpts, cmd: Command) => {
      // Validate everything before touching the ledger.
      const input = {
        name: opts.name,
        scopes: parseScopes(opts.scopes),
        credits: parseCount("--credits", opts.credits),
        rate: parseRate(opts.rate),
        burst: opts.burst === undefined ? undefined : parseCount("--burst", opts.burst, 1),
        expiresAt: opts.expires === undefined ? null : parseExpiry(opts.expires),
      };
      await withLedger(cmd, opts, async (ledger) => {
        const { key, record } = await ledger.createKey(input);
        process.stderr.write("gridcast: store this key now: it is not kept and cannot be shown again\n");
        if (opts.json) return printJson({ key, record });
        write([`key:      ${key}`, ...describe(record)]);
      });
    });

  sub("list", "list keys (never their secrets)").action(async (opts: Common, cmd: Command) => {
    await withLedger(cmd, opts, async (ledger) => {
      const all = await ledger.listKeys();
      if (opts.json) return printJson(all);
      write(all.length ? table(all) : ["no keys"]);
    });
  });

  sub("show", "show one key")
    .argument("<id>", "key id")
    .action(async (id: string, opts: Common, cmd: Command) => {
      await withLedger(cmd, opts, async (ledger) => {
        const record = await ledger.getKey(id);
        if (!record) throw new ConfigError(`no API key with id "${printable(id)}"`);
        if (opts.json) return printJson(record);
        write(describe(record));
      });
    });

  sub("revoke", "revoke a key for good")
    .argument("<id>", "key id")
    .action(async (id: string, opts: Common, cmd: Command) => {
      await withLedger(cmd, opts, async (ledger) => {
        const record = await ledger.revokeKey(id);
        if (opts.json) return printJson(record);
        write([`revoked ${record.id} at ${record.revokedAt}`]);
      });
    });

  sub("credit", "add credits to a key")
    .argument("<id>", "key id")
    .requiredOption("--add <n>", "credits to add (positive integer)")
    .action(async (id: string, opts: Common & { add: string }, cmd: Command) => {
      const n = parseCount("--add", opts.add, 1);
      await withLedger(cmd, opts, async (ledger) => {
        const balance = await ledger.addCredits(id, n);
        if (opts.json) return printJson({ id, balance });
        write([`${id}: balance ${balance}`]);
      });
    });
}
