// Node's compile cache for the CLI and its tile workers: the TypeScript sources are stripped and
// compiled once per version and kept on disk (in the system's temporary directory unless
// NODE_COMPILE_CACHE names another; NODE_DISABLE_COMPILE_CACHE=1 turns it off). Each tile worker
// otherwise spends about half a second loading its modules before its first tile.
import { enableCompileCache } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Turn the cache on for this process and, through the environment, for the workers it starts. */
export function useCompileCache(): void {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return;
  process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "gridcast-compile-cache");
  // A directory that cannot be written leaves the cache off; nothing else changes.
  enableCompileCache(process.env.NODE_COMPILE_CACHE);
}
