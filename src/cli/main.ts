import { run } from "./program.ts";

// A reader that stops early (`gridcast --help | head -1`) closes the pipe: what is left to write
// has nowhere to go, which is not a failure of the command, so the process ends quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    process.exit(process.exitCode ?? 0);
  });
}

// run() has already printed the error and set the exit code.
run(process.argv).catch(() => {});
