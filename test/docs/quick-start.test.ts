// The README's quick start as a newcomer walks it: a fresh clone of the committed tree, then the
// first command exactly as the README writes it (`npm ci && npm start`), with nothing else on the
// machine prepared. Only the port is moved (GRIDCAST_PORT=0, a free one: the README's way to set
// any setting) so that the test never meets a server someone else runs on 8080. It must print the
// address and the demo key, answer the viewer, the catalog once the first map is published, and a
// keyed /point with that key. The second command is the one CI runs (.ci/run), checked as text.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { cleanup, get, tempDir, until } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const work = tempDir("gridcast-clone-");
let child: ChildProcess | undefined;
after(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((ok) => child?.on("exit", ok));
    process.kill(-child.pid, "SIGTERM");
    await exited;
  }
  cleanup(work);
});

const readme = readFileSync(join(ROOT, "README.md"), "utf8");
const quick = readme.slice(readme.indexOf("## Quick start"));
const commands = (/```sh\n([\s\S]*?)```/.exec(quick)?.[1] ?? "")
  .split("\n")
  .map((l) => l.replace(/#.*$/, "").trim())
  .filter(Boolean);

test("the quick start is two commands: npm start and the test command CI runs", () => {
  assert.deepEqual(commands, ["npm ci && npm start", "npm ci && npm test"]);
  assert.match(readFileSync(join(ROOT, ".ci/run"), "utf8"), /^npm ci && npm test$/m);
});

test("a fresh clone: `npm ci && npm start` as written serves the viewer, the first map and /point with the printed key", async () => {
  const clone = join(work, "c");
  execFileSync("git", ["clone", "-q", ROOT, clone]);
  let out = "";
  let err = "";
  // npm ci on a clean tree needs the registry, as a newcomer's does; its Node is the machine's.
  child = spawn("bash", ["-c", commands[0]], {
    cwd: clone,
    detached: true,
    env: { ...process.env, GRIDCAST_PORT: "0", npm_config_loglevel: "warn" },
  });
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  const url = await until(
    `the serving line (stderr: ${err.slice(-400)})`,
    () => /gridcast is serving on (http:\/\/\S+)/.exec(out)?.[1],
    420_000,
  );
  const key = await until("the demo key", () => /demo key +(gck_\S+)/.exec(out)?.[1], 60_000);
  assert.equal((await get(`${url}/`)).status, 200, "the viewer page");
  // Polled as a viewer does, twice a second (a refused or reset poll is tried again).
  const catalog = await until(
    "the first map",
    async () => {
      const r = await get(`${url}/api/forecast/catalog`).catch(() => undefined);
      if (r?.status === 200) return r.json();
      await new Promise((ok) => setTimeout(ok, 500));
      return undefined;
    },
    300_000,
  );
  assert.ok(catalog.layers.length > 0);
  const p = await get(`${url}/point?lat=46.5&lon=10.1&var=2t`, { "X-API-Key": key });
  assert.equal(p.status, 200, p.body.toString());
  assert.ok(p.json().values.length > 0);
  assert.equal((await get(`${url}/point?lat=46.5&lon=10.1&var=2t`)).status, 401, "keyed");
});
