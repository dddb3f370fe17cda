// The serving commands (serve, start) run with a larger young generation than Node's default.
// Every request leaves some kilobytes of short-lived objects, and each minor collection (a
// scavenge) stops the event loop with every request in flight waiting behind it; Node starts the
// young generation at 1 MB a half and grows it only as objects survive, so a server answering
// small files collects every few hundred requests: under 32 connections up to a fifth of all
// requests then have a collection in their path (bench/public-tail.ts prints the share). A
// scavenge costs what survives it (the requests in flight), not the size of the space, so a
// larger one means as many times fewer pauses of about the same length.
//
// V8 sizes its heap once, when the process starts, so the launcher (bin/gridcast) restarts itself
// in place (execve: same process id, same descriptors and signals) with the flags, before any
// other module is loaded. An operator who names a young-generation size for Node (on its command
// line or in NODE_OPTIONS) keeps theirs: no restart then. Nor is a process started with an IPC
// channel (a parent's fork, a process manager's) restarted: the channel's descriptor would not
// survive the exec.

/** Each semi-space of the young generation of a serving process, MB. */
export const YOUNG_GENERATION_MB = 32;

/** Commands that run the server. */
const SERVING = new Set(["serve", "start"]);
/** Program options of gridcast that take a value, so their value is not read as the command. */
const VALUE_OPTIONS = new Set(["-c", "--config"]);
/** Node flags that size the young generation (V8 accepts - and _ alike). */
const YOUNG_FLAG = /^--(min-semi-space-size|max-semi-space-size|semi-space-growth-factor|max-heap-size)(=|$)/;

/** The command gridcast's arguments (process.argv without node and the script) name, if any. */
export function commandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--") return args[i + 1];
    if (VALUE_OPTIONS.has(a)) {
      i++;
      continue;
    }
    if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/**
 * The arguments (from argv[0] on) to restart this process with, or undefined when it runs as it
 * is: not a serving command, a young-generation size already chosen for Node, or an IPC channel
 * to its parent.
 */
export function youngGenerationRestart(
  argv: readonly string[],
  execArgv: readonly string[],
  nodeOptions = "",
  ipc = false,
): string[] | undefined {
  if (ipc || !SERVING.has(commandOf(argv.slice(2)) ?? "")) return undefined;
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map((a) => a.replace(/_/g, "-"));
  if (given.some((a) => YOUNG_FLAG.test(a))) return undefined;
  return [
    argv[0],
    `--min-semi-space-size=${YOUNG_GENERATION_MB}`,
    `--max-semi-space-size=${YOUNG_GENERATION_MB}`,
    ...execArgv,
    ...argv.slice(1),
  ];
}

/** Restarts this process in place with the serving young generation when it needs one. */
export function restartForServing(): void {
  const args = youngGenerationRestart(process.argv, process.execArgv, process.env.NODE_OPTIONS, !!process.channel);
  if (!args || typeof process.execve !== "function") return;
  process.execve(process.execPath, args, process.env);
}
