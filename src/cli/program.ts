// commander wiring only: each command lives in its own file and calls into the domain.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Command, CommanderError } from "commander";
import { GridcastError } from "../errors.ts";
import { registerBuild } from "./build.ts";
import { registerInspect } from "./inspect.ts";
import { registerKeys } from "./keys.ts";
import { registerPublish } from "./publish.ts";
import { registerSample } from "./sample.ts";
import { registerServe } from "./serve.ts";
import { registerStart } from "./start.ts";

/** Exit codes, shown by `gridcast --help`; run() sets them. */
export const EXIT = { ok: 0, unexpected: 1, operator: 2, groupsSkipped: 3, nothingNew: 4 } as const;
const EXIT_CODES = `
Exit codes:
  0  done
  1  unexpected failure (a bug or a machine fault); GRIDCAST_DEBUG=1 prints the stack
  2  the command could not start or finish for the reason printed: a wrong flag or setting,
     a port in use, an output directory that cannot be written, a store that does not exist
     or cannot be read, a key that is not there; for build, a variable, group or lead time
     named by --vars, --groups or --leads that cannot be built (nothing built; the matching
     --allow-missing-vars/-groups/-leads builds the others), or a store with nothing to render
     (no map layer and no embedding item)
  3  build published, but left out forecast groups it could not read, each named
     on stderr; build --allow-skipped exits 0 instead
  4  build or publish found nothing new: the published build already holds everything it
     would publish, so nothing was published and no kept build was removed

Run it as \`npm run -s gridcast -- <command>\` or \`npx gridcast <command>\` in the project directory:
both use the Node.js 24 that \`npm ci\` installs.`;

/** The version in package.json, the one `npm ci` installed. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "unknown";
}

export function buildProgram(): Command {
  const program = new Command("gridcast")
    .description("Publish gridded forecasts and EO latent embeddings from one Zarr store")
    .option("-c, --config <file>", "settings file (default ./gridcast.config.json when present)")
    .addHelpText(
      "afterAll",
      "\nSettings: defaults < gridcast.config.json (or --config) < GRIDCAST_* variables < flags; each flag's\nhelp names its default and setting.",
    )
    .version(packageVersion(), "-V, --version", "print gridcast's version")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", EXIT_CODES)
    .exitOverride();
  registerInspect(program);
  registerSample(program);
  registerBuild(program);
  registerPublish(program);
  registerServe(program);
  registerKeys(program);
  registerStart(program);
  return program;
}

// npm configs of the same name as a gridcast flag that a user may well keep in an .npmrc: their
// presence says nothing about the command line.
const NPM_OWN_CONFIGS = new Set(["force", "json"]);

/**
 * gridcast flags that npm took for itself: `npm start --port 21081` hands npm the flag (as
 * npm_config_port) and gridcast only the stray `21081`, and `npm start --port=21081` hands gridcast
 * nothing at all, so the server would start on the default port. Run by npm
 * (npm_lifecycle_event is set), each long flag of the command is looked up among npm's configs.
 */
export function flagsTakenByNpm(program: Command, argv: string[], env = process.env): string | undefined {
  const script = env.npm_lifecycle_event;
  if (!script) return undefined;
  const args = argv.slice(2);
  const command = program.commands.find((c) => c.name() === args[0] || c.aliases().includes(args[0]));
  const options = [...program.options, ...(command?.options ?? [])];
  const taken: string[] = [];
  for (const o of options) {
    const long = o.long?.replace(/^--(no-)?/, "");
    if (!long || NPM_OWN_CONFIGS.has(long)) continue;
    const value = env[`npm_config_${long.replace(/-/g, "_")}`];
    if (value === undefined) continue;
    const stray = args.slice(1).find((a) => !a.startsWith("-"));
    const shown = value === "true" || value === "" ? (o.required && stray ? ` ${stray}` : "") : ` ${value}`;
    taken.push(`--${o.long?.replace(/^--/, "")}${o.required ? shown : ""}`);
  }
  if (taken.length === 0) return undefined;
  const run = script === "start" || script === "test" ? `npm ${script}` : `npm run ${script}`;
  return (
    `npm took ${taken.join(" ")} for itself (npm hands a script only what follows --): ` +
    `run ${run} -- ${taken.join(" ")}`
  );
}

/** Run the CLI; errors become one clear line on stderr and a non-zero exit code. */
export async function run(argv: string[]): Promise<void> {
  const program = buildProgram();
  const npmTook = flagsTakenByNpm(program, argv);
  if (npmTook) {
    process.stderr.write(`gridcast: ${npmTook}\n`);
    process.exitCode = EXIT.operator;
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander already printed help or the usage error; a usage error is an operator mistake
      process.exitCode = e.exitCode === 0 ? EXIT.ok : EXIT.operator;
      return;
    }
    const msg = e instanceof GridcastError ? e.message : `unexpected error: ${(e as Error)?.message ?? String(e)}`;
    process.stderr.write(`gridcast: ${msg}\n`);
    if (process.env.GRIDCAST_DEBUG) process.stderr.write(`${(e as Error)?.stack}\n`);
    process.exitCode = e instanceof GridcastError ? EXIT.operator : EXIT.unexpected;
    throw e;
  }
}
