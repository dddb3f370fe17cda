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

/** Run the CLI; errors become one clear line on stderr and a non-zero exit code. */
export async function run(argv: string[]): Promise<void> {
  const program = buildProgram();
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
