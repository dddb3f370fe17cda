// Large builds: what `gridcast serve` pays as the published build grows, and what a build costs in
// each tile format. Everything on the project's disk (.gridcast/bench, a real disk, not tmpfs).
//   node bench/large-build.ts [--sizes 10000,100000,1000000] [--skip-build]
//
// Build rows: the z0..7 pyramid of one 0.25° layer (21,845 tiles, demo store) built in both
// formats, with build time and files and bytes on disk (du); the z/x/y build is the baseline.
//
// Serve rows: for each size N and format, two builds of N tiles are made cheaply from one real
// z0..6 build: z/x/y builds get hard links of its tiles until they hold N files, archive builds
// get hard links of its archive under other lead names until they address N tiles. A fresh
// `gridcast serve` process (its own RSS) is started on the first; measured: time to the first
// /healthz, first catalog, first tile (route and static path), then /healthz latency (p99, max)
// from 4 clients while <out>/current is switched to the second build (a publish), and the
// process's peak RSS (VmHWM). The baseline of every figure is the smallest size: serving must not
// grow with the build.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { switchCurrent } from "../src/pipeline/publish.ts";
import { type BuildReport, runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, benchStore } from "./lib.ts";

const ROOT = resolve(import.meta.dirname, "..");
const LINKS_PER_SOURCE = 50_000; // below ext4's 65,000 links per inode
const HEALTH_CLIENTS = 4;

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const sizes = (arg("--sizes") ?? "10000,100000,1000000").split(",").map(Number);
const work = join(BENCH_DIR, "large");

function du(path: string): { files: number; bytes: number } {
  const bytes = Number(execFileSync("du", ["-s", "-B1", path], { encoding: "utf8" }).split("\t")[0]);
  const files = Number(execFileSync("sh", ["-c", `find "${path}" -type f | wc -l`], { encoding: "utf8" }).trim());
  return { files, bytes };
}

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
const ms = (x: number): string => `${x.toFixed(1)} ms`;

async function buildRows(store: string): Promise<string[]> {
  const rows: string[] = [];
  const results: { tiles: string; r: BuildReport; d: { files: number; bytes: number } }[] = [];
  for (const tiles of ["zxy", "pmtiles"] as const) {
    const out = join(work, `build-${tiles}`);
    rmSync(out, { recursive: true, force: true });
    const r = await runBuild({
      store,
      out,
      tiles,
      groups: ["global"],
      vars: ["t2m"],
      leads: [0],
      concurrency: 2,
      reuse: false,
      progress: false,
      webDir: null,
    });
    const d = du(join(out, "builds", r.build_id, "tiles"));
    results.push({ tiles, r, d });
    rmSync(out, { recursive: true, force: true });
  }
  const base = results[0];
  for (const { tiles, r, d } of results) {
    rows.push(
      `| ${tiles} | ${r.totals.tiles} | ${r.seconds.toFixed(1)} s | ${r.render_seconds.toFixed(1)} s + ${(r.output?.assemble_seconds ?? 0).toFixed(2)} s | ` +
        `${d.files} | ${mib(d.bytes)} | ${(base.r.seconds / r.seconds).toFixed(2)} | ${(d.bytes / base.d.bytes).toFixed(2)} |`,
    );
  }
  return rows;
}

/** A real z0..6 build of one layer and lead in `format`: the seed every padded build is linked from. */
async function seed(store: string, format: "zxy" | "pmtiles"): Promise<{ dir: string; report: BuildReport }> {
  const out = join(work, `seed-${format}`);
  rmSync(out, { recursive: true, force: true });
  const report = await runBuild({
    store,
    out,
    tiles: format,
    maxZoom: 6,
    groups: ["global"],
    vars: ["t2m"],
    leads: [0],
    concurrency: 2,
    progress: false,
    webDir: null,
  });
  return { dir: join(out, "builds", report.build_id), report };
}

/** builds/<id> holding the seed and padding up to `n` tiles, made of hard links. */
function padded(seedDir: string, format: "zxy" | "pmtiles", seedTiles: number, out: string, id: string, n: number) {
  const dir = join(out, "builds", id);
  execFileSync("cp", ["-al", seedDir, dir]);
  const catalog = JSON.parse(readFileSync(join(dir, "catalog.json"), "utf8"));
  catalog.build_id = id;
  rmSync(join(dir, "catalog.json"));
  writeFileSync(join(dir, "catalog.json"), JSON.stringify(catalog));
  const lead = catalog.layers[0].runs[0].leads[0];
  if (format === "pmtiles") {
    const archive = join(dir, lead.archive.slice(1));
    const copies = Math.max(0, Math.ceil(n / seedTiles) - 1);
    for (let i = 0; i < copies; i++) linkSync(archive, archive.replace(/\d+\.pmtiles$/, `pad-${i}.pmtiles`));
    return;
  }
  const tile = join(dir, lead.tiles.slice(1).replace("{z}/{x}/{y}", "6/33/20"));
  let from = tile;
  for (let i = 0; i < n - seedTiles; i++) {
    const sub = join(dir, "tiles", "pad", String(Math.floor(i / 1000)));
    if (i % 1000 === 0) mkdirSync(sub, { recursive: true });
    // A fresh inode per 50k links: the seed's own tile is shared with the other padded build.
    if (i % LINKS_PER_SOURCE === 0) {
      from = join(sub, `source-${i}.png`);
      cpSync(tile, from);
      continue;
    }
    linkSync(from, join(sub, `${i % 1000}.png`));
  }
}

/**
 * Baseline for z/x/y builds: what the previous design paid at each switch, in its own process:
 * indexing the build's file tree in memory (a sirv instance with dev: false over the build).
 */
function indexCost(dir: string): { ms: number; rss: number } {
  const script =
    `const { default: sirv } = await import(${JSON.stringify(join(ROOT, "node_modules/sirv/build.mjs"))});` +
    `const t0 = performance.now(); sirv(${JSON.stringify(dir)}, { dev: false, etag: true });` +
    `console.log(JSON.stringify({ ms: performance.now() - t0, rss: process.memoryUsage().rss / 2 ** 20 }));`;
  const out = execFileSync(process.execPath, ["--max-old-space-size=8192", "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  return JSON.parse(out);
}

async function timed(url: string): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const r = await fetch(url);
  await r.arrayBuffer();
  return { ms: performance.now() - t0, status: r.status };
}

function startServe(store: string, out: string): Promise<{ proc: ChildProcess; url: string; started: number }> {
  const t0 = performance.now();
  const env = { ...process.env, GRIDCAST_DB: join(out, "ledger.db") };
  const proc = spawn(
    process.execPath,
    ["bin/gridcast", "serve", "--quiet", "--port", "0", "--store", store, "--out", out],
    { cwd: ROOT, env },
  );
  return new Promise((ok, fail) => {
    let text = "";
    proc.stderr!.on("data", (d) => {
      text += d;
      const m = /serving on (http:\/\/\S+)/.exec(text);
      if (m) ok({ proc, url: m[1], started: t0 });
    });
    proc.on("exit", (c) => fail(new Error(`serve exited ${c}: ${text}`)));
  });
}

const vmHwm = (pid: number): number =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function serveRow(store: string, format: "zxy" | "pmtiles", seedDir: string, seedTiles: number, n: number) {
  const out = join(work, `serve-${format}-${n}`);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, "builds"), { recursive: true });
  const made = performance.now();
  padded(seedDir, format, seedTiles, out, "a", n);
  padded(seedDir, format, seedTiles, out, "b", n);
  const makeSeconds = (performance.now() - made) / 1000;
  switchCurrent(out, "a");
  const { proc, url, started } = await startServe(store, out);
  try {
    let up = 0;
    for (;;) {
      const r = await fetch(`${url}/healthz`).catch(() => undefined);
      if (r?.ok) {
        up = performance.now() - started;
        break;
      }
    }
    const catalog = await timed(`${url}/api/forecast/catalog`);
    const cat = await (await fetch(`${url}/api/forecast/catalog`)).json();
    const lead = cat.layers[0].runs[0].leads[0];
    const tile = await timed(`${url}${lead.route.replace("{z}/{x}/{y}", "5/16/10")}`);
    const file = await timed(`${url}${lead.tiles.replace("{z}/{x}/{y}", "5/17/10")}`);
    if (catalog.status !== 200 || tile.status !== 200 || file.status !== 200)
      throw new Error(`status ${catalog.status}/${tile.status}/${file.status}`);
    // /healthz from 4 clients for 1 s before the switch and 2 s after; every latency counts.
    const lat: number[] = [];
    let stop = false;
    const client = async (): Promise<void> => {
      while (!stop) {
        const t = await timed(`${url}/healthz`);
        lat.push(t.ms);
      }
    };
    const tileClient = async (): Promise<void> => {
      while (!stop) await timed(`${url}${lead.route.replace("{z}/{x}/{y}", "4/8/5")}`);
    };
    const clients = [...Array.from({ length: HEALTH_CLIENTS }, client), tileClient()];
    await new Promise((r) => setTimeout(r, 1000));
    switchCurrent(out, "b");
    const t0 = performance.now();
    let switched = 0;
    while (!switched) {
      const c = await (await fetch(`${url}/api/forecast/catalog`)).json();
      if (c.build_id === "b") switched = performance.now() - t0;
    }
    await new Promise((r) => setTimeout(r, 2000));
    stop = true;
    await Promise.all(clients);
    lat.sort((a, b) => a - b);
    const old = format === "zxy" ? indexCost(join(out, "builds", "b")) : undefined;
    return {
      old,
      format,
      n,
      makeSeconds,
      up,
      catalog: catalog.ms,
      tile: tile.ms,
      file: file.ms,
      p99: lat[Math.floor(lat.length * 0.99)],
      max: lat.at(-1)!,
      switched,
      rss: vmHwm(proc.pid!),
      requests: lat.length,
    };
  } finally {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
    rmSync(out, { recursive: true, force: true });
  }
}

mkdirSync(work, { recursive: true });
const store = await benchStore("demo");
if (!args.includes("--skip-build")) {
  process.stderr.write("build rows …\n");
  const rows = await buildRows(store);
  process.stdout.write(
    "| tiles | tiles built | build time | of which render + archive assembly | files (du) | bytes on disk (du -B1) | speed vs zxy | bytes vs zxy |\n" +
      "|---|---|---|---|---|---|---|---|\n" +
      `${rows.join("\n")}\n\n`,
  );
}
process.stdout.write(
  "| format | tiles in build | serve up | first catalog | first tile (route) | first tile (static) | /healthz p99 during publish | max | switch seen after | peak RSS | ratio to smallest (RSS, p99) | old design: index per switch (time, RSS) |\n" +
    "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
);
for (const format of ["zxy", "pmtiles"] as const) {
  const s = await seed(store, format);
  const base: { rss: number; p99: number }[] = [];
  for (const n of sizes) {
    process.stderr.write(`serve ${format} ${n} …\n`);
    const r = await serveRow(store, format, s.dir, s.report.totals.tiles, n);
    if (!base.length) base.push(r);
    process.stderr.write(`  builds made in ${r.makeSeconds.toFixed(1)} s, ${r.requests} /healthz requests\n`);
    process.stdout.write(
      `| ${format} | ${n.toLocaleString("en")} | ${ms(r.up)} | ${ms(r.catalog)} | ${ms(r.tile)} | ${ms(r.file)} | ` +
        `${ms(r.p99)} | ${ms(r.max)} | ${ms(r.switched)} | ${r.rss.toFixed(0)} MB | ` +
        `${(r.rss / base[0].rss).toFixed(2)}, ${(r.p99 / base[0].p99).toFixed(2)} | ` +
        `${r.old ? `${(r.old.ms / 1000).toFixed(1)} s, ${r.old.rss.toFixed(0)} MB` : "—"} |\n`,
    );
  }
  rmSync(join(work, `seed-${format}`), { recursive: true, force: true });
}
if (existsSync(work)) rmSync(work, { recursive: true, force: true });
