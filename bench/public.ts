// Public files against the HTTP stack's own floor: wrk (an external C client) with 32 connections
// on loopback against /healthz, a static tile, the tile route, the catalog, a TileJSON, a legend
// and the viewer of the demo store's whole build (every group, z0–3: the documents of the build
// `npm start` publishes), and nginx (one worker) serving the same tile file from the same build
// directory. Rounds alternate the targets so drifting machine load hits all alike; every figure
// is printed as a ratio to /healthz (and the tile to nginx) of the same run, by requests/s and by
// the server's CPU per request, with p99 and the mean latency 32 connections imply at that rate.
// Then the compressed size of every kind of document, from the build's files and on the wire.
//   node bench/public.ts [seconds per target, default 5] [rounds, default 2]
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { runBuild } from "../src/pipeline/run.ts";
import { BENCH_DIR, type BenchRow, benchServer, benchStore, numberArgs } from "./lib.ts";

const run$ = promisify(execFile);
/** The figures: ratios to /healthz and nginx, and the p99 bound under 32 connections. */
const CONNECTIONS = 32;

interface Wrk {
  rps: number;
  /** Server CPU time per request, µs (user + system of the serving process over the run). */
  cpuUs: number;
  p99ms: number;
  non2xx: number;
  errors: number;
  bytes: number;
  requests: number;
}

function ms(text: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return Number.NaN;
  return Number(m[1]) * (m[2] === "us" ? 1e-3 : m[2] === "s" ? 1e3 : 1);
}

async function wrk(url: string, seconds: number, headers: string[] = []): Promise<Wrk> {
  const args = [
    "-t2",
    `-c${CONNECTIONS}`,
    `-d${seconds}s`,
    "--timeout",
    "10s",
    "--latency",
    ...headers.flatMap((h) => ["-H", h]),
    url,
  ];
  const { stdout } = await run$("wrk", args, { maxBuffer: 1 << 20 });
  const num = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? 0);
  const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const requests = num(/(\d+) requests in/);
  const mb = /requests in [\d.]+\w+, ([\d.]+)(B|KB|MB|GB) read/.exec(stdout);
  const unit = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }[mb?.[2] ?? "B"] ?? 1;
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p99ms: ms(/\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? ""),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/),
    errors: errs ? errs.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    bytes: mb ? Number(mb[1]) * unit : 0,
    requests,
    cpuUs: Number.NaN,
  };
}

/** CPU seconds (user + system) a process has used, from /proc (clock ticks of 1/100 s). */
export function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * wrk against `url`, with the CPU the server spent per request: this process's own (the server
 * runs in it) or, for nginx, its worker's. CPU per request hardly moves with other work on the
 * machine, unlike requests/s, so it is the figure to compare on a loaded machine.
 */
async function measured(url: string, seconds: number, headers: string[], nginxWorker?: number): Promise<Wrk> {
  const cpu0 = nginxWorker ? procCpuSeconds(nginxWorker) * 1e6 : totalUs(process.cpuUsage());
  const w = await wrk(url, seconds, headers);
  const cpu1 = nginxWorker ? procCpuSeconds(nginxWorker) * 1e6 : totalUs(process.cpuUsage());
  w.cpuUs = w.requests ? (cpu1 - cpu0) / w.requests : Number.NaN;
  return w;
}

const totalUs = (u: NodeJS.CpuUsage) => u.user + u.system;

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

/** nginx with one worker serving `root` on a loopback port; temp config, stopped by `stop`. */
export async function nginx(root: string): Promise<{ url: string; worker: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-nginx-"));
  const port = await freePort();
  const conf = join(dir, "nginx.conf");
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  types { image/png png; application/json json; text/html html; }
  server { listen 127.0.0.1:${port}; root ${root}; }
}
`,
  );
  const child = spawn("nginx", ["-c", conf, "-p", dir], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${url}/`).then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // The one worker the master started: the process that serves, whose CPU is counted.
  const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/);
  if (children.length !== 1) throw new Error(`nginx: expected one worker, found ${children.join(" ") || "none"}`);
  return {
    url,
    worker: Number(children[0]),
    stop: async () => {
      const gone = new Promise((r) => child.once("exit", r));
      child.kill("SIGQUIT");
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The first z3 tile file of the build: tiles/<layer>/<run>/<lead>/3/<x>/<y>.png. */
export function aTile(build: string, layer: string): string {
  const base = join(build, "tiles", layer);
  const run = readdirSync(base).sort()[0];
  const lead = readdirSync(join(base, run)).sort()[0];
  const xs = readdirSync(join(base, run, lead, "3")).sort();
  const x = xs[Math.floor(xs.length / 2)];
  const y = readdirSync(join(base, run, lead, "3", x)).filter((n) => /^\d+\.png$/.test(n))[0];
  return `/tiles/${layer}/${run}/${lead}/3/${x}/${y}`;
}

export async function run(seconds = 5, rounds = 2): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const out = join(BENCH_DIR, "public-output");
  rmSync(out, { recursive: true, force: true });
  await runBuild({ store, out, maxZoom: 3, progress: false });
  const build = realpathSync(join(out, "current"));
  const srv = await benchServer(store, { out });
  const ngx = await nginx(build);
  try {
    const catalog = (await (await fetch(`${srv.url}/api/forecast/catalog`)).json()) as {
      layers: {
        id: string;
        legend: { json: string; png: string };
        runs: { token: string; leads: { hours: number; tilejson: string }[] }[];
      }[];
    };
    // The temperature field: a full-colour base tile, the kind a viewer asks for most.
    const layer = catalog.layers.find((l) => l.id === "global.t2m") ?? catalog.layers[0];
    const r = layer.runs[0];
    const lead = r.leads[0];
    const tile = aTile(build, layer.id);
    const [, , , , , z, x, yPng] = tile.split("/");
    const targets: [string, string, string[]][] = [
      ["/healthz", `${srv.url}/healthz`, []],
      ["static tile", `${srv.url}${tile}`, []],
      ["static tile, 304", `${srv.url}${tile}`, ["If-None-Match: ETAG"]],
      [
        "tile route",
        `${srv.url}/api/forecast/tile/${z}/${x}/${yPng.replace(".png", "")}?layer=${layer.id}&run=${r.token}&lead=${lead.hours}`,
        [],
      ],
      ["catalog (gzip, br accepted)", `${srv.url}/api/forecast/catalog`, ["Accept-Encoding: gzip, br"]],
      ["catalog.json file (gzip, br accepted)", `${srv.url}/catalog.json`, ["Accept-Encoding: gzip, br"]],
      ["TileJSON (gzip, br accepted)", `${srv.url}${lead.tilejson}`, ["Accept-Encoding: gzip, br"]],
      ["legend PNG", `${srv.url}/${layer.legend.png}`, []],
      ["legend JSON (gzip, br accepted)", `${srv.url}/${layer.legend.json}`, ["Accept-Encoding: gzip, br"]],
      ["viewer page (gzip, br accepted)", `${srv.url}/`, ["Accept-Encoding: gzip, br"]],
      ["nginx, same tile file", `${ngx.url}${tile}`, []],
    ];
    // The ETag a revalidating client names.
    const etag = (await fetch(`${srv.url}${tile}`)).headers.get("etag") ?? '"none"';
    for (const t of targets) t[2] = t[2].map((h) => h.replace("ETAG", etag));
    // Every target once, unmeasured: the JIT, the caches and the build's leftover garbage settle
    // before anything is counted.
    for (const [, url, headers] of targets) await wrk(url, 1, headers);
    const sum = new Map<string, Wrk & { cpuTotal: number }>();
    for (let i = 0; i < rounds; i++) {
      for (const [name, url, headers] of targets) {
        const w = await measured(url, seconds, headers, name.startsWith("nginx") ? ngx.worker : undefined);
        // A wrong status is a failure; a socket error (a timeout on a machine loaded past its
        // cores) is counted and printed beside the figure.
        if (w.non2xx && !name.includes("304")) throw new Error(`non-2xx under load on ${name}: ${JSON.stringify(w)}`);
        const s = sum.get(name) ?? {
          rps: 0,
          p99ms: 0,
          non2xx: 0,
          errors: 0,
          bytes: 0,
          requests: 0,
          cpuUs: 0,
          cpuTotal: 0,
        };
        s.rps += w.rps / rounds;
        s.p99ms = Math.max(s.p99ms, w.p99ms);
        s.bytes += w.bytes;
        s.requests += w.requests;
        s.errors += w.errors;
        s.cpuTotal += w.cpuUs * w.requests;
        s.cpuUs = s.cpuTotal / s.requests;
        sum.set(name, s);
        process.stderr.write(
          `round ${i + 1}: ${name} ${w.rps.toFixed(0)} req/s, p99 ${w.p99ms.toFixed(2)} ms, ` +
            `server CPU ${w.cpuUs.toFixed(1)} µs/request\n`,
        );
      }
    }
    // Sizes of the compressed documents against their identity bodies: every document of the build
    // by kind (what its twins hold), then a few answers as they go out on the wire.
    const sizeRows = documentSizes(build);
    const sizes: string[] = [];
    for (const [name, path] of [
      ["catalog route", "/api/forecast/catalog"],
      ["TileJSON", lead.tilejson],
      ["legend JSON", `/${layer.legend.json}`],
      ["viewer page", "/"],
      ["OpenAPI description (route reply, compressed on the fly)", "/openapi.json"],
      ["vendor bundle leaflet.js (node_modules)", "/vendor/leaflet/leaflet.js"],
    ] as const) {
      const plain = await fetch(`${srv.url}${path}`, { headers: { "Accept-Encoding": "identity" } });
      const plainBytes = (await plain.arrayBuffer()).byteLength;
      const enc = await rawGet(`${srv.url}${path}`, "gzip, br");
      sizes.push(`${name}: ${plainBytes} B identity, ${enc.bytes} B ${enc.encoding || "identity"}`);
      if (enc.encoding === "gzip") gunzipSync(enc.body);
      sizeRows.push({
        bench: "public",
        figure: `on the wire: ${name}, ${enc.encoding || "identity"} bytes`,
        value: enc.bytes,
        baseline: "identity bytes",
        baselineValue: plainBytes,
        ratio: plainBytes / enc.bytes,
        target: 5,
        note: "ratio: times smaller",
      });
    }
    process.stderr.write(`${sizes.join("\n")}\n`);
    const health = sum.get("/healthz")!;
    const nginxTile = sum.get("nginx, same tile file")!;
    const rows: BenchRow[] = [];
    // Little's law: with every connection waiting for its answer, the mean latency is connections
    // over requests/s. The p99 printed here is the larger of the rounds', with the server inside this
    // bench's process; the ≤ 2 ms target is judged by bench/public-tail.ts, where the server runs
    // as `gridcast serve` in a process of its own (as in production) and the tail is printed with
    // its causes (run queue, collections) beside nginx's and a bare node:http server's.
    const p99Note = (s: Wrk) =>
      [
        `p99 ${s.p99ms.toFixed(2)} ms (server in this process; the tail target is public-tail.ts's), ` +
          `mean ${((CONNECTIONS / s.rps) * 1000).toFixed(2)} ms`,
        s.errors ? `${s.errors} socket errors` : "",
      ]
        .filter(Boolean)
        .join("; ");
    rows.push({
      bench: "public",
      figure: `/healthz req/s (${CONNECTIONS} connections; server CPU ${health.cpuUs.toFixed(1)} µs/request)`,
      value: Math.round(health.rps),
      baseline: "itself",
      baselineValue: Math.round(health.rps),
      ratio: 1,
      note: p99Note(health),
    });
    for (const [name, s] of sum) {
      if (name === "/healthz") continue;
      const againstNginx = name === "nginx, same tile file";
      const judged = name.startsWith("static tile") || name.startsWith("catalog") || name.startsWith("TileJSON");
      rows.push({
        bench: "public",
        figure: `${name} req/s`,
        value: Math.round(s.rps),
        baseline: "/healthz req/s",
        baselineValue: Math.round(health.rps),
        ratio: s.rps / health.rps,
        target: againstNginx ? undefined : judged ? 0.7 : undefined,
        note: p99Note(s),
      });
      // The same comparison by server CPU per request (/healthz's over this one's: higher is
      // better, as for requests/s), which other work on the machine hardly moves.
      rows.push({
        bench: "public",
        figure: `${name}: server CPU µs/request`,
        value: s.cpuUs,
        baseline: againstNginx ? "gridcast static tile µs/request" : "/healthz µs/request",
        baselineValue: againstNginx ? sum.get("static tile")!.cpuUs : health.cpuUs,
        ratio: againstNginx ? sum.get("static tile")!.cpuUs / s.cpuUs : health.cpuUs / s.cpuUs,
        target: judged ? 0.7 : undefined,
        note: againstNginx ? "ratio: times less CPU than gridcast" : "ratio: /healthz's CPU over this",
      });
      if (name === "static tile") {
        rows.push({
          bench: "public",
          figure: "static tile req/s",
          value: Math.round(s.rps),
          baseline: "nginx (1 worker) on the same file",
          baselineValue: Math.round(nginxTile.rps),
          ratio: s.rps / nginxTile.rps,
          target: 0.2,
          note: `nginx p99 ${nginxTile.p99ms.toFixed(2)} ms`,
        });
      }
    }
    rows.push(...sizeRows);
    const tileBytes = statSync(join(build, tile)).size;
    process.stderr.write(`tile ${tile}: ${tileBytes} bytes\n`);
    return rows;
  } finally {
    await ngx.stop();
    await srv.close();
  }
}

/** Document kinds of a build, by where they are and what they are called. */
const KINDS: [string, RegExp][] = [
  ["catalog.json", /^catalog\.json$/],
  ["WMTS capabilities", /^wmts\/.*\.xml$/],
  ["manifest.json", /^manifest\.json$/],
  ["TileJSON", /^tilejson\/.*\.json$/],
  ["legend JSON", /^legends\/.*\.json$/],
  ["viewer page (index.html)", /^index\.html$/],
  ["viewer scripts and styles", /^[^/]+\.(js|css)$/],
];

/**
 * Every document of the build by kind: identity bytes against the brotli and gzip twins', summed
 * over the kind, with the least and the most any one file of it gained, and the bytes brotli saves
 * on a mean file of the kind (set beside what a response's own headers weigh, ~400 B). A document
 * without a twin (too small to gain) counts at its own size. Each kind's largest file is printed
 * (stderr) with its twins' sizes.
 */
export function documentSizes(build: string): BenchRow[] {
  const totals = new Map<
    string,
    { files: number; plain: number; br: number; gz: number; worst: number; best: number; largest: string }
  >();
  const twin = (path: string, suffix: string, plain: number) => {
    try {
      return statSync(join(build, `${path}${suffix}`)).size;
    } catch {
      return plain;
    }
  };
  const walk = (rel: string) => {
    for (const d of readdirSync(join(build, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory() && path !== "tiles" && path !== "embeddings") walk(path);
      if (!d.isFile()) continue;
      const kind = KINDS.find(([, re]) => re.test(path))?.[0];
      if (!kind) continue;
      const plain = statSync(join(build, path)).size;
      const br = twin(path, ".br", plain);
      const gz = twin(path, ".gz", plain);
      const t = totals.get(kind) ?? {
        files: 0,
        plain: 0,
        br: 0,
        gz: 0,
        worst: Number.POSITIVE_INFINITY,
        best: 0,
        largest: path,
      };
      t.files++;
      t.plain += plain;
      t.br += br;
      t.gz += gz;
      t.worst = Math.min(t.worst, plain / br);
      t.best = Math.max(t.best, plain / br);
      if (plain > statSync(join(build, t.largest)).size) t.largest = path;
      totals.set(kind, t);
    }
  };
  walk("");
  const lines = ["document sizes (identity / gzip twin / brotli twin, bytes):"];
  for (const [kind, t] of totals) {
    const plain = statSync(join(build, t.largest)).size;
    const gz = twin(t.largest, ".gz", plain);
    const br = twin(t.largest, ".br", plain);
    lines.push(
      `  ${kind}, largest ${t.largest}: ${plain} / ${gz} (${(plain / gz).toFixed(1)}×) / ${br} (${(plain / br).toFixed(1)}×)`,
    );
  }
  process.stderr.write(`${lines.join("\n")}\n`);
  return [...totals].map(([kind, t]) => ({
    bench: "public",
    figure: `build's ${kind}: ${t.files} file(s), brotli bytes`,
    value: t.br,
    baseline: "identity bytes",
    baselineValue: t.plain,
    ratio: t.plain / t.br,
    target: 5,
    note:
      `times smaller (gzip ${(t.plain / t.gz).toFixed(1)}×); per file ${t.worst.toFixed(1)}–${t.best.toFixed(1)}×, ` +
      `mean file ${Math.round(t.plain / t.files)} B, brotli saves ${Math.round((t.plain - t.br) / t.files)} B of it per request`,
  }));
}

/** One GET with the given Accept-Encoding, body left encoded (fetch would decode it). */
async function rawGet(url: string, acceptEncoding: string): Promise<{ encoding: string; bytes: number; body: Buffer }> {
  const { request } = await import("node:http");
  return new Promise((ok, fail) => {
    const req = request(url, { headers: { "Accept-Encoding": acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        ok({ encoding: String(res.headers["content-encoding"] ?? ""), bytes: body.length, body });
      });
    });
    req.on("error", fail);
    req.end();
  });
}

if (import.meta.main) {
  const nums = numberArgs();
  const { printRows } = await import("./lib.ts");
  printRows(await run(nums[0], nums[1]));
  process.stdout.write(`${(await run$("uptime")).stdout}`);
}
