// Every default a `--help` text names is the default the command really uses: each setting's
// "(default X; setting key, GRIDCAST_KEY)" against DEFAULTS, and start's access log (a file
// beside the ledger on a terminal, not stdout as serve's) against the function start calls.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, test } from "node:test";
import { defaultAccessLog } from "../../src/cli/start.ts";
import { DEFAULTS, type Settings } from "../../src/config.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/gridcast");
const work = tempDir();
after(() => cleanup(work));

/** The help of one command, its line wrapping undone (commander wraps at 80 columns in a pipe). */
function help(args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, ...args, "--help"], { encoding: "utf8", timeout: 30_000, cwd: work });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.replace(/\s+/g, " ");
}

const COMMANDS = [
  ["inspect"],
  ["sample"],
  ["build"],
  ["publish"],
  ["serve"],
  ["start"],
  ["keys", "create"],
  ["keys", "list"],
  ["keys", "credit"],
];

test("every setting default named in a --help text is the setting's real default", () => {
  let seen = 0;
  for (const args of COMMANDS) {
    const text = help(args);
    for (const m of text.matchAll(/\(default ([^;()]*); setting (\w+), GRIDCAST_(\w+)\)/g)) {
      const [, shown, key, env] = m;
      assert.ok(key in DEFAULTS, `${args.join(" ")} --help names setting ${key}, which does not exist`);
      assert.equal(env, key.toUpperCase(), `${args.join(" ")}: the variable of ${key}`);
      assert.equal(shown.trim(), String(DEFAULTS[key as keyof Settings]), `${args.join(" ")} --help: ${key}`);
      seen++;
    }
  }
  assert.ok(seen >= 10, `only ${seen} setting defaults found in the help texts`);
});

test("--access-log: start names the file it logs to on a terminal, serve says stdout", () => {
  const onTerminal = defaultAccessLog(DEFAULTS, {}, true);
  assert.equal(onTerminal, "data/access.log", "start's file beside the default ledger");
  assert.equal(defaultAccessLog(DEFAULTS, {}, false), undefined, "start off a terminal: stdout");
  const start = /--access-log <file> (.*?) -q, --quiet/.exec(help(["start"]))?.[1] ?? "";
  assert.match(start, new RegExp(`\\(default: ${onTerminal.replace(".", "\\.")} `), start);
  assert.match(start, /else stdout\)/, start);
  const serve = /--access-log <file> (.*?) -q, --quiet/.exec(help(["serve"]))?.[1] ?? "";
  assert.match(serve, /\(default: stdout\)/, serve);
});
