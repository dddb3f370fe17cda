// `npm start` as a newcomer runs it, on a fresh directory, timed phase by phase: the demo store
// written, the server answering, the first catalog (what the viewer polls), the first tile of the
// layer the viewer opens on. Prints one line per phase, seconds after the command, and the load
// average before and after. Stops the server once the first tile is in.
//   node bench/first-map.ts [runs]   (default 1; each run on its own empty directory)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeDecoderInUse } from "../src/native.ts";

const ROOT = join(import.meta.dirname, "..");
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

interface Phases {
  store?: number;
  serving?: number;
  catalog?: number;
  tile?: number;
  storeLine?: string;
}

async function status(url: string): Promise<number> {
  try {
    const r = await fetch(url);
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

async function once(): Promise<Phases> {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-first-map-"));
  const args = ["start", "--", "--port", "0", "--quiet"];
  args.push("--store", join(dir, "demo"), "--out", join(dir, "output"), "--db", join(dir, "ledger.db"));
  const t0 = performance.now();
  const at = () => (performance.now() - t0) / 1000;
  const child = spawn("npm", args, { cwd: ROOT, detached: true, env: { ...process.env, npm_config_loglevel: "warn" } });
  const p: Phases = {};
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => {
    out += d;
    if (p.serving === undefined && /gridcast is serving on/.test(out)) p.serving = at();
  });
  child.stderr?.on("data", (d) => {
    err += d;
    const m = /demo store ready: .*/.exec(err);
    if (p.store === undefined && m) {
      p.store = at();
      p.storeLine = m[0];
    }
  });
  const exited = new Promise((ok) => child.on("exit", ok));
  try {
    while (p.tile === undefined) {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}: ${err.slice(-2000)}`);
      const url = /gridcast is serving on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) {
        if (p.catalog === undefined && (await status(`${url}/api/forecast/catalog`)) === 200) p.catalog = at();
        if (p.catalog !== undefined && (await status(`${url}/api/forecast/tile/0/0/0?layer=global.t2m`)) === 200)
          p.tile = at();
      }
      if (p.tile === undefined) await new Promise((ok) => setTimeout(ok, 100));
    }
  } finally {
    if (child.exitCode === null && child.pid !== undefined) {
      process.kill(-child.pid, "SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return p;
}

const runs = Number(process.argv[2] ?? 1);
const f = (s?: number) => (s === undefined ? "?" : `${s.toFixed(1)} s`);
process.stdout.write(
  `machine: ${os.cpus().length} cores, Node ${process.versions.node}; Blosc decoder: ${nativeDecoderInUse()}\n`,
);
for (let r = 1; r <= runs; r++) {
  const before = load();
  const p = await once();
  process.stdout.write(
    `run ${r}: demo store written ${f(p.store)}, serving ${f(p.serving)}, first catalog ${f(p.catalog)}, ` +
      `first tile ${f(p.tile)} after \`npm start\` (load ${before} → ${load()}; ${p.storeLine ?? ""})\n`,
  );
}
