// `gridcast serve` and `start` run with a larger young generation than Node's default: the
// launcher restarts itself in place (same process id) with the flags, unless the operator chose
// a young-generation size for Node; other commands run as they are.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { commandOf, YOUNG_GENERATION_MB, youngGenerationRestart } from "../../src/cli/young-generation.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const FLAGS = [`--min-semi-space-size=${YOUNG_GENERATION_MB}`, `--max-semi-space-size=${YOUNG_GENERATION_MB}`];

let storeDir: string;
let dir: string;
before(async () => {
  storeDir = await sampleStore();
  dir = tempDir();
});
after(() => cleanup(storeDir, dir));

/** `gridcast serve` on a free port; resolves with the child once it listens, and its URL. */
async function serve(env: NodeJS.ProcessEnv, db: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "bin/gridcast"),
      "serve",
      "--store",
      storeDir,
      "--out",
      join(dir, "out"),
      "--db",
      join(dir, db),
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "-q",
    ],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const url = await new Promise<string>((ok, fail) => {
    let text = "";
    child.stderr?.on("data", (d: Buffer) => {
      text += d.toString();
      const m = /serving on (http:\S+)/.exec(text);
      if (m) ok(m[1]);
    });
    child.once("exit", (code) => fail(new Error(`exited ${code}: ${text}`)));
  });
  return { child, url };
}

/** The command line the kernel has for `pid` now (after any exec). */
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);

async function stop(child: ChildProcess): Promise<number | null> {
  const gone = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)));
  child.kill("SIGTERM");
  return gone;
}

describe("the serving young generation", () => {
  test("serve restarts in place with it: same process, serving, and it stops cleanly on SIGTERM", async () => {
    const { NODE_OPTIONS: _, ...env } = process.env;
    const { child, url } = await serve({ ...env, NODE_OPTIONS: "" }, "a.db");
    try {
      const args = cmdline(child.pid!);
      // The process the test started is the one serving, now running node with the flags.
      for (const f of FLAGS) assert.ok(args.includes(f), `${f} in ${args.join(" ")}`);
      assert.ok(args.indexOf(FLAGS[0]) < args.indexOf(join(ROOT, "bin/gridcast")), "a node flag, before the script");
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
    } finally {
      assert.equal(await stop(child), 0);
    }
  });

  test("an operator's own young-generation size (NODE_OPTIONS) is kept: no restart", async () => {
    const { child, url } = await serve({ NODE_OPTIONS: "--max-semi-space-size=0" }, "b.db");
    try {
      const args = cmdline(child.pid!);
      assert.ok(!args.some((a) => a.includes("semi-space")), args.join(" "));
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
    } finally {
      assert.equal(await stop(child), 0);
    }
  });

  test("which invocations restart", () => {
    const argv = (...a: string[]) => ["/usr/bin/node", "/app/bin/gridcast", ...a];
    assert.deepEqual(youngGenerationRestart(argv("serve", "-p", "8080"), []), [
      "/usr/bin/node",
      ...FLAGS,
      "/app/bin/gridcast",
      "serve",
      "-p",
      "8080",
    ]);
    // Node's own flags are kept, after the young generation's.
    assert.deepEqual(youngGenerationRestart(argv("start"), ["--enable-source-maps"])?.slice(1, 4), [
      ...FLAGS,
      "--enable-source-maps",
    ]);
    // The settings file option takes a value, which is not the command.
    assert.equal(commandOf(["-c", "serve.json", "build"]), "build");
    assert.ok(youngGenerationRestart(argv("--config", "x.json", "serve"), []));
    for (const other of [argv("build"), argv("keys", "create"), argv("--help"), argv()]) {
      assert.equal(youngGenerationRestart(other, []), undefined, other.join(" "));
    }
    // A size already chosen, on node's command line or in NODE_OPTIONS, in either spelling.
    assert.equal(youngGenerationRestart(argv("serve"), ["--max-semi-space-size=64"]), undefined);
    assert.equal(youngGenerationRestart(argv("serve"), [], "--max_semi_space_size=8 --no-warnings"), undefined);
    assert.equal(youngGenerationRestart(argv("serve"), [], "--max-heap-size=512"), undefined);
    // A parent's IPC channel would not survive the exec.
    assert.equal(youngGenerationRestart(argv("serve"), [], "", true), undefined);
    // The restarted process has the flags in its execArgv: it does not restart again.
    assert.equal(youngGenerationRestart(argv("serve"), FLAGS), undefined);
  });
});
