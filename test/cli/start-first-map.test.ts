// `npm start` as a newcomer runs it, on a fresh directory: the demo store is written, the server
// answers at once, and the first map (catalog and a tile of the default layer) is served long
// before the whole build ends. The times are printed for BENCHMARKS.md, never asserted. Then a
// restart: the published build is served at once while the new one renders, the plan is printed,
// and the demo key is the same one — the first still works.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { docsText } from "../helpers/docs.ts";
import { cleanup, get, tempDir, until } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const dir = tempDir("gridcast-start-");
after(() => cleanup(dir));

interface Started {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  started: number;
}

/** `npm start -- …` in its own process group, so stopping it stops npm's child too. */
function npmStart(): Started {
  const args = ["start", "--", "--port", "0", "--quiet"];
  args.push("--store", join(dir, "demo"), "--out", join(dir, "output"), "--db", join(dir, "ledger.db"));
  const started = performance.now();
  const child = spawn("npm", args, { cwd: ROOT, detached: true, env: { ...process.env, npm_config_loglevel: "warn" } });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  return { child, out: () => out, err: () => err.replaceAll("\r", "\n"), started };
}

async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null || s.child.pid === undefined) return;
  const exited = new Promise((ok) => s.child.on("exit", ok));
  process.kill(-s.child.pid, "SIGTERM");
  await exited;
}

const seconds = (s: Started) => ((performance.now() - s.started) / 1000).toFixed(1);
const urlOf = (s: Started) =>
  until("the serving line", () => /gridcast is serving on (http:\/\/\S+)/.exec(s.out())?.[1], 300_000);
const keyOf = (s: Started) => /demo key +(gck_\S+)/.exec(s.out())?.[1];

test("npm start on a fresh directory: the first map is served before the full build ends; a restart keeps serving with the same key", async () => {
  const first = npmStart();
  let key: string | undefined;
  let url: string;
  try {
    url = await urlOf(first);
    const serving = seconds(first);
    key = keyOf(first);
    assert.ok(key, first.out());
    // Polled as a viewer would: the catalog, then a tile of the layer it opens on.
    const catalog = await until(
      "the first catalog",
      // A connection reset by a loaded server is one more poll, not a failure.
      async () =>
        (await get(`${url}/api/forecast/catalog`).catch(() => undefined))?.status === 200 ? seconds(first) : undefined,
      600_000,
    );
    const tile = await get(`${url}/api/forecast/tile/0/0/0?layer=global.t2m`);
    assert.equal(tile.status, 200);
    assert.equal(tile.headers.get("content-type"), "image/png");
    const tileAt = seconds(first);
    // The catalog answers as soon as the stage is switched in; start says so a moment later.
    const err = await until(
      "the first stage's published line",
      () => (/published lead time \+0 h of the default layer/.test(first.err()) ? first.err() : undefined),
      120_000,
    );
    assert.doesNotMatch(err, /all lead times published/, "served before the full build ended");
    assert.match(
      err,
      /published lead time \+0 h of the default layer \(t2m\), zoom 0\.\.5 \(1 of 3\), [\d.]+ s after start/,
    );
    // It says which decoder serves (the native one wherever a compiler built the addon).
    assert.match(first.out(), /decoder +(native, gridcast C|JavaScript \(the native addon is)/);
    // What is still to come is in the catalog, for the viewer to show.
    assert.match((await get(`${url}/api/forecast/catalog`)).json().rendering ?? "", /the other layers/);
    console.log(
      `# npm start, fresh directory: serving ${serving} s, first catalog ${catalog} s, first tile ${tileAt} s ` +
        `after the command (demo store written first: ${/demo store ready: .*/.exec(err)?.[0] ?? "?"})`,
    );
    // The key works, and it is the one kept beside the ledger.
    assert.equal((await get(`${url}/point?lat=48.14&lon=11.58&var=2t`, { "X-API-Key": key })).status, 200);
    assert.match(first.out(), /1000 credits to start; new/);
    assert.equal(readFileSync(join(dir, "demo-key"), "utf8").trim(), key);
    // The README's size of the demo store ("about 140 MiB"), to the nearest 10 MiB.
    const said = Number(/writes the demo store \(about (\d+) MiB/.exec(docsText())?.[1]);
    const bytes = readdirSync(join(dir, "demo"), { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .reduce((n, d) => n + statSync(join(d.parentPath, d.name)).size, 0);
    assert.equal(
      Math.round(bytes / 2 ** 20 / 10) * 10,
      said,
      `demo store ${bytes} bytes; README says about ${said} MiB`,
    );
  } finally {
    await stop(first);
  }

  // A restart with the first stage published: the map is up as soon as the server is.
  const second = npmStart();
  try {
    url = await urlOf(second);
    const tile = await get(`${url}/api/forecast/tile/0/0/0?layer=global.t2m`);
    assert.equal(tile.status, 200, "the published build is served before anything renders");
    assert.equal(keyOf(second), key, "the demo key is the same across restarts");
    assert.match(second.out(), /1000 credits left; the same as last time, kept in \S+demo-key/);
    assert.equal((await get(`${url}/point?lat=48.14&lon=11.58&var=2t`, { "X-API-Key": key as string })).status, 200);
    const err = await until(
      "the restart's plan",
      () => (/plan: .*reused from the published build/.test(second.err()) ? second.err() : undefined),
      120_000,
    );
    assert.match(err, /serving the published build \S+ while a new one renders/);
    assert.match(err, /plan: lead time \+0 h of every layer: [\d,]+ tiles to render/);
    console.log(`# npm start again: serving the published build ${seconds(second)} s after the command`);
  } finally {
    await stop(second);
  }
});
