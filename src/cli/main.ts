import { run } from "./program.ts";

// run() has already printed the error and set the exit code.
run(process.argv).catch(() => {});
