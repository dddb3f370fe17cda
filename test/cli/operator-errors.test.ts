// Operator mistakes, as an operator makes them: the CLI as a child process. Each is one line on
// stderr and exit code 2, found before any work starts; `--help` documents the exit codes; an old
// Node gets a readable message instead of a stack trace.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { cleanup, tempDir } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const NODE = process.execPath;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function gridcast(args: string[], opts: { uid?: number; gid?: number; node?: string; pre?: string[] } = {}) {
  return promisify(execFile)(opts.node ?? NODE, [...(opts.pre ?? []), "bin/gridcast", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
    uid: opts.uid,
    gid: opts.gid,
    env: { ...process.env, GRIDCAST_DEBUG: "" },
  }).then(
    (r): Result => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e): Result => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

/** Exit 2 and exactly one line on stderr, matching `pattern`. */
function oneLine(r: Result, pattern: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^gridcast: /);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /unexpected error|\bat \S+ \(/);
}

let dir: string;
let store: string;
before(() => {
  dir = tempDir();
  // An existing directory is all the preflight checks look at; the errors come before any read.
  store = join(dir, "store");
  mkdirSync(store);
});
after(() => cleanup(dir));

test("inspect and build on a store that is not there say it does not exist", async () => {
  oneLine(
    await gridcast(["inspect", "--store", join(dir, "missing")]),
    /cannot read the store \S+missing: it does not exist/,
  );
  oneLine(
    await gridcast(["build", "--store", join(dir, "missing"), "--out", join(dir, "o1")]),
    /cannot read the store \S+missing: it does not exist/,
  );
  assert.equal(existsSync(join(dir, "o1", "builds")), false, "nothing was started");
});

test("build --out on a file, below a file, or in a directory this user cannot write", async () => {
  const file = join(dir, "a-file");
  writeFileSync(file, "x");
  oneLine(await gridcast(["build", "--store", store, "--out", file]), /--out \S+a-file is a file, not a directory/);
  oneLine(
    await gridcast(["build", "--store", store, "--out", join(file, "sub")]),
    /cannot be created: part of the path is a file/,
  );
  // root writes anywhere it can reach; sysfs is refused to root too, as a pseudo-file system. (Running the CLI
  // as another user fails instead when the clone sits in a private directory, as CI's may.)
  let unwritable = "/sys/gridcast-test-out";
  if (process.getuid?.() !== 0) {
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    unwritable = join(locked, "out");
  }
  oneLine(
    await gridcast(["build", "--store", store, "--out", unwritable]),
    /--out \S+\/(locked\/out is not writable by this user|gridcast-test-out is on the kernel's sysfs file system)/,
  );
});

test("start on a port in use fails at once, before writing the demo store or rendering", async () => {
  const busy: Server = createServer();
  await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", () => ok()));
  const port = (busy.address() as { port: number }).port;
  try {
    const demo = join(dir, "demo");
    const r = await gridcast([
      "start",
      "--port",
      String(port),
      "--store",
      join(demo, "store"),
      "--out",
      join(demo, "out"),
      "--db",
      join(demo, "ledger.db"),
    ]);
    oneLine(r, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use; .*--port`));
    assert.equal(existsSync(join(demo, "store")), false, "no demo store was written");
    assert.equal(existsSync(join(demo, "out", "builds")), false, "no build was started");
  } finally {
    busy.close();
  }
});

test("serve on a port in use: the same line; on a missing store: exit 2 naming it, as --help says", async () => {
  const busy: Server = createServer();
  await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", () => ok()));
  const port = (busy.address() as { port: number }).port;
  try {
    const args = ["serve", "--port", String(port), "--store", store, "--db", join(dir, "l1.db")];
    oneLine(await gridcast([...args, "--out", join(dir, "o2")]), /port \d+ on 127\.0\.0\.1 is already in use/);
  } finally {
    busy.close();
  }
  const r = await gridcast([
    "serve",
    "--quiet",
    "--port",
    "0",
    "--store",
    join(dir, "nowhere"),
    "--db",
    join(dir, "l2.db"),
  ]);
  oneLine(r, /cannot read the store \S+nowhere: it does not exist \(pass --store or set GRIDCAST_STORE\)/);
  assert.equal(r.code, 2);
});

test("--help documents the exit codes and how to run the CLI; a usage error exits 2", async () => {
  const help = await gridcast(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit codes:\n\s+0 +done\n\s+1 +unexpected.*\n\s+2 +the command could not/);
  assert.match(help.stdout, /\n\s+3 +build published, but left out forecast groups/);
  // Every command's help names the defaults of the settings its flags override.
  const serve = await gridcast(["serve", "--help"]);
  for (const d of [
    /default\s+data\/demo;\s+setting store/,
    /default\s+output;\s+setting out/,
    /default\s+8080;\s+setting port/,
  ]) {
    assert.match(serve.stdout, d);
  }
  assert.match((await gridcast(["build", "--help"])).stdout, /default\s+data\/demo;\s+setting store/);
  assert.match(help.stdout, /npm run -s gridcast -- <command>/);
  const bad = await gridcast(["build", "--no-such-flag"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown option '--no-such-flag'/);
});

test("an older Node gets one readable message naming the Node it needs and how to run the CLI", async () => {
  // Node 24 made to report version 20: the launcher's check, independent of the machine.
  const fake = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})`;
  const r = await gridcast(["--help"], { pre: ["--import", fake] });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^gridcast needs Node\.js 24 or newer; this is Node 20\.20\.2\./);
  assert.match(r.stderr, /npx gridcast/);
  assert.doesNotMatch(r.stderr, /ERR_UNKNOWN_FILE_EXTENSION|\bat \S+ \(/);
  // And the machine's own Node, when it has one: a readable refusal if old, the usage if not.
  if (existsSync("/usr/bin/node")) {
    const sys = await gridcast(["--help"], { node: "/usr/bin/node" });
    const text = sys.stdout + sys.stderr;
    if (sys.code === 0) assert.match(text, /Usage: gridcast/);
    else assert.match(text, /^gridcast needs Node\.js 24 or newer/);
    assert.doesNotMatch(text, /ERR_UNKNOWN_FILE_EXTENSION/);
  }
});

test("a huge shard count is exit 2 with one line, and leaves nothing behind", async () => {
  const out = join(dir, "shard-out");
  for (const shard of ["1/99999999999", "1/10001"]) {
    oneLine(
      await gridcast(["build", "--store", store, "--out", out, "--shard", shard, "--build-id", "b1"]),
      /--shard: at most 10000 shards/,
    );
    assert.equal(existsSync(out), false, `${shard} left ${out} behind`);
  }
});

test("flags npm keeps for itself (npm start --port N) are named with the form that reaches gridcast", async () => {
  // As a user types them: npm takes --port (and --store) for its own configs and hands the script
  // the stray value, or nothing at all with --port=N, where the server would start on 8080.
  const npm = (args: string[]) =>
    promisify(execFile)("npm", args, {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}`, GRIDCAST_DEBUG: "" },
    }).then(
      (r): Result => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e): Result => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  const lineOf = (r: Result) => r.stderr.split("\n").filter((l) => l.startsWith("gridcast: "));
  const spaced = await npm(["start", "--silent", "--port", "21081"]);
  assert.equal(spaced.code, 2, spaced.stderr);
  assert.deepEqual(lineOf(spaced), [
    "gridcast: npm took --port 21081 for itself (npm hands a script only what follows --): run npm start -- --port 21081",
  ]);
  const joined = await npm(["start", "--silent", "--port=21082", `--store=${join(dir, "x")}`]);
  assert.equal(joined.code, 2, joined.stderr);
  assert.match(lineOf(joined)[0], /run npm start -- (--port 21082 --store \S+x|--store \S+x --port 21082)$/);
  assert.equal(existsSync(join(dir, "x")), false, "nothing was written");
  // The right form passes the flag through: a busy port is then reported as that port.
  const busy: Server = createServer();
  await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", () => ok()));
  const port = (busy.address() as { port: number }).port;
  try {
    const r = await npm(["start", "--silent", "--", "--port", String(port), "--store", join(dir, "demo-npm")]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      lineOf(r)[0],
      new RegExp(`port ${port} .*in use; .*--port \\(through npm: npm start -- --port ${port + 1}\\)`),
    );
  } finally {
    busy.close();
  }
});
