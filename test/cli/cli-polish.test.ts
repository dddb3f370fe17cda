// The small things an operator meets first: `--version`, output into a pipe its reader closed
// early (`gridcast --help | head -1`), and an output directory on a kernel pseudo-file system,
// which Node's recursive mkdir would spin on for ever.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { cleanup, tempDir } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/gridcast");
/** Hang detector for one CLI run (a refusal takes well under a second when nothing is wrong). */
const CLI_TIMEOUT_MS = 30_000;
const work = tempDir();
after(() => cleanup(work));

const cli = (args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: CLI_TIMEOUT_MS, cwd: work });

test("--version prints the package's version and exits 0", () => {
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  for (const flag of ["--version", "-V"]) {
    const r = cli([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
});

test("a reader that closes the pipe early ends the command quietly: exit 0, no EPIPE trace", async () => {
  const child = spawn(process.execPath, [BIN, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
  // Closed before the command has written anything: every write it makes meets EPIPE.
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((ok) => child.on("close", ok));
  assert.equal(stderr, "");
  assert.equal(code, 0);
});

test("--out on /proc or /sys is refused at once with exit 2 and one line", () => {
  mkdirSync(join(work, "store"), { recursive: true });
  for (const out of ["/proc/gridcast-out", "/sys/gridcast-out/deeper"]) {
    const r = cli(["build", "--store", join(work, "store"), "--out", out]);
    assert.equal(r.error, undefined, `${out}: no answer within ${CLI_TIMEOUT_MS} ms`);
    assert.equal(r.status, 2, r.stderr);
    assert.match(
      r.stderr,
      /^gridcast: --out \/(proc|sys)\/gridcast-out\S* is on the kernel's (proc|sysfs) file system/,
    );
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }
});
