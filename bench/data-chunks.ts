// /data chunk throughput: GETs of stored chunks through the token gate (key check, key-space
// lookup, pass-through read, ETag) against sirv serving the very same chunk bytes as static files,
// both on loopback in this process, measured back to back in one run (target ratio ≥ 0.7).
//   node bench/data-chunks.ts [seconds]
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import sirv from "sirv";
import { BENCH_DIR, type BenchRow, benchServer, benchStore, type Load, load } from "./lib.ts";
import { wrk } from "./wrk.ts";

/** Distinct chunks cycled through, so neither side serves one hot object. */
const CHUNKS = 32;
const CONNECTIONS = 16;

function cycle(base: string, paths: string[], headers: Record<string, string>, seconds: number): Promise<Load> {
  // wrk when installed (an external client, as the issue asks), autocannon in-process otherwise.
  if (HAVE_WRK) return wrk(base, { paths, headers, connections: CONNECTIONS, seconds });
  return load(base, { paths, headers, connections: CONNECTIONS, seconds });
}

const HAVE_WRK = spawnSync("wrk", ["-v"]).error === undefined;

export async function run(seconds = 5): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const srv = await benchServer(store, { max_heavy_requests: 1000 });
  const staticDir = join(BENCH_DIR, `chunks-${process.pid}`);
  let plain: ReturnType<typeof createServer> | undefined;
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const H = { "X-API-Key": key };
    const prefix = "/data/datasets/forecast~global/zarr";
    const zarray = (await (await fetch(`${srv.url}${prefix}/t2m/.zarray`, { headers: H })).json()) as {
      shape: number[];
      chunks: number[];
    };
    const grid = zarray.shape.map((s, d) => Math.ceil(s / zarray.chunks[d]));
    // Chunks (time 0, all leads) across the lat × lon block grid; copy their served bytes out as files.
    const keys: string[] = [];
    for (let i = 0; keys.length < CHUNKS && i < grid[2] * grid[3]; i++)
      keys.push(`t2m/0.0.${Math.floor(i / grid[3])}.${i % grid[3]}`);
    let bytes = 0;
    for (const k of keys) {
      const r = await fetch(`${srv.url}${prefix}/${k}`, { headers: H });
      if (r.status !== 200) throw new Error(`${k}: ${r.status}`);
      const body = new Uint8Array(await r.arrayBuffer());
      bytes += body.length;
      mkdirSync(dirname(join(staticDir, k)), { recursive: true });
      writeFileSync(join(staticDir, k), body);
    }
    // sirv lists the directory once when created (dev: false), as it does in production.
    const server = createServer(sirv(staticDir, { dev: false, etag: true }));
    plain = server;
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const plainUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const gated = await cycle(
      srv.url,
      keys.map((k) => `${prefix}/${k}`),
      H,
      seconds,
    );
    const baseline = await cycle(
      plainUrl,
      keys.map((k) => `/${k}`),
      {},
      seconds,
    );
    for (const [name, l] of [
      ["gate", gated],
      ["sirv", baseline],
    ] as const) {
      if (l.errors || l.non2xx) throw new Error(`${name}: ${l.errors} errors, ${l.non2xx} non-2xx`);
    }
    const note = `${keys.length} chunks, mean ${(bytes / keys.length / 1024).toFixed(0)} KiB, ${CONNECTIONS} connections, ${HAVE_WRK ? "wrk" : "autocannon"}`;
    return [
      {
        bench: "/data chunk GET",
        figure: "req/s",
        value: gated.rps,
        baseline: "sirv req/s",
        baselineValue: baseline.rps,
        ratio: gated.rps / baseline.rps,
        target: 0.7,
        note: `${note}; p99 ${gated.p99} ms vs ${baseline.p99} ms`,
      },
      {
        bench: "/data chunk GET",
        figure: "MB/s",
        value: gated.mbps,
        baseline: "sirv MB/s",
        baselineValue: baseline.mbps,
        ratio: gated.mbps / baseline.mbps,
        target: 0.7,
      },
    ];
  } finally {
    // Requests autocannon left in flight must not find the files gone.
    plain?.closeAllConnections();
    await new Promise((ok) => (plain ? plain.close(ok) : ok(undefined)));
    await srv.close();
    rmSync(staticDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { printRows } = await import("./lib.ts");
  printRows(await run(Number(process.argv[2] ?? 5)));
}
