// commander wiring only: each command lives in its own file and calls into the domain.
import { Command, CommanderError } from "commander";
import { GridcastError } from "../errors.ts";
import { registerBuild } from "./build.ts";
import { registerInspect } from "./inspect.ts";
import { registerKeys } from "./keys.ts";
import { registerPublish } from "./publish.ts";
import { registerSample } from "./sample.ts";
import { registerServe } from "./serve.ts";
import { registerStart } from "./start.ts";

export function buildProgram(): Command {
  const program = new Command("gridcast")
    .description("Publish gridded forecasts and EO latent embeddings from one Zarr store")
    .option("-c, --config <file>", "settings file (default ./gridcast.config.json when present)")
    .showHelpAfterError("(run with --help for usage)")
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
      // commander already printed help or the usage error
      process.exitCode = e.exitCode;
      return;
    }
    const msg = e instanceof GridcastError ? e.message : `unexpected error: ${(e as Error)?.message ?? String(e)}`;
    process.stderr.write(`gridcast: ${msg}\n`);
    if (process.env.GRIDCAST_DEBUG) process.stderr.write(`${(e as Error)?.stack}\n`);
    process.exitCode = e instanceof GridcastError ? 2 : 1;
    throw e;
  }
}
