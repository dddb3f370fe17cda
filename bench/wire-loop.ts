// A loop of requests of one bench row against one bench server, for profiling the server (not a
// bench: it prints curl's time, the server's CPU and curl's CPU per request, and compares with
// nothing). Rows: "zstd" and "blosc", bench/npy-zarr.ts's 30 MiB latent slices (metered route);
// "export", bench/xarray.ts's four 40°×60°×25-lead boxes, one request each. The chunk cache is
// emptied before each request, as in the benches. Run it under `perf record -g`, `strace -c -f` or
// `node --cpu-prof`; with NPY_LOOP_WAIT=s it prints `ready <pid>` and waits s seconds before the
// loop and after it, so a profiler can attach to the server's process for the loop alone.
//   node bench/wire-loop.ts [zstd|blosc|export] [requests, default 30]
import { rmSync } from "node:fs";
import { join } from "node:path";
import { writeEmbeddingIndexes } from "../src/embeddings/index-writer.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, benchServer, curlGet } from "./lib.ts";
import { NPY_Y_STOP, npyBenchItem, npyBenchStore } from "./npy-zarr.ts";
import { EXPORT_BOXES, xarrayStore } from "./xarray.ts";

const kind = process.argv[2] ?? "zstd";
const n = Number(process.argv[3] ?? 30);
const isExport = kind === "export";
const store = isExport ? xarrayStore() : npyBenchStore();
const out = join(BENCH_DIR, `wire-loop-out-${process.pid}`);
if (!isExport) await writeEmbeddingIndexes(new Store(store), join(out, "current"));
const srv = await benchServer(
  store,
  isExport ? { field_export_max_mb: 1024, max_heavy_requests: 64 } : { out, embeddings_api_max_mb: 64 },
);
try {
  const { key } = await srv.ctx.ledger.createKey({
    name: "bench",
    scopes: [isExport ? "weather" : "embeddings"],
    credits: isExport ? 0 : 1e9,
    rate: 0,
  });
  const urls = isExport
    ? EXPORT_BOXES.map((b) => {
        const q = new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: "24" });
        for (const [k, v] of Object.entries(b)) q.set(k, String(v));
        return `${srv.url}/api/export/forecast~global/npy?${q}`;
      })
    : [`${srv.url}/api/embeddings/npy/${npyBenchItem(kind)}?y_stop=${NPY_Y_STOP}`];
  const H = { "X-API-Key": key };
  for (const url of urls) await curlGet(url, H);
  const wait = Number(process.env.NPY_LOOP_WAIT ?? 0);
  if (wait > 0) {
    console.log(`ready ${process.pid}`);
    await new Promise((ok) => setTimeout(ok, wait * 1000));
  }
  let wall = 0;
  let cpu = 0;
  let client = 0;
  for (let i = 0; i < n; i++) {
    srv.ctx.store.cache.invalidate();
    const c0 = process.cpuUsage();
    const r = await curlGet(urls[i % urls.length], H);
    const c = process.cpuUsage(c0);
    wall += r.seconds;
    cpu += (c.user + c.system) / 1e6;
    client += r.clientCpu;
  }
  const ms = (s: number) => ((s / n) * 1000).toFixed(1);
  console.log(
    `done ${kind}: ${n} requests, curl ${ms(wall)} ms each, server CPU ${ms(cpu)} ms, curl CPU ${ms(client)} ms (10 ms ticks)`,
  );
  if (wait > 0) await new Promise((ok) => setTimeout(ok, wait * 1000));
} finally {
  await srv.close();
  rmSync(out, { recursive: true, force: true });
}
