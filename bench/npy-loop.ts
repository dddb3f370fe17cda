// A loop of .npy slice requests against one bench server, for profiling the server (not a bench:
// it prints CPU and wall time per slice, no peer). Run it under `node --cpu-prof`, `strace -c -f`
// or `perf record -g` to see where a slice's time goes; the store is bench/npy-zarr.ts's.
//   node bench/npy-loop.ts [family: zstd|blosc] [requests, default 30]
import { join } from "node:path";
import { writeEmbeddingIndexes } from "../src/embeddings/index-writer.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, benchServer, curlGet } from "./lib.ts";
import { NPY_Y_STOP, npyBenchItem, npyBenchStore } from "./npy-zarr.ts";

const family = process.argv[2] ?? "zstd";
const n = Number(process.argv[3] ?? 30);
const store = npyBenchStore();
const out = join(BENCH_DIR, `npy-loop-out-${process.pid}`);
await writeEmbeddingIndexes(new Store(store), join(out, "current"));
const srv = await benchServer(store, { out, embeddings_api_max_mb: 64 });
try {
  const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["embeddings"], credits: 1e9, rate: 0 });
  const url = `${srv.url}/api/embeddings/npy/${npyBenchItem(family)}?y_stop=${NPY_Y_STOP}`;
  const H = { "X-API-Key": key };
  await curlGet(url, H);
  // With a wait (seconds), a profiler can attach to this process (pid printed) before the loop.
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
    const r = await curlGet(url, H);
    const c = process.cpuUsage(c0);
    wall += r.seconds;
    cpu += (c.user + c.system) / 1e6;
    client += r.clientCpu;
  }
  const ms = (s: number) => ((s / n) * 1000).toFixed(1);
  console.log(
    `done ${family}: ${n} slices, curl ${ms(wall)} ms a slice, server CPU ${ms(cpu)} ms, curl CPU ${ms(client)} ms`,
  );
  if (wait > 0) await new Promise((ok) => setTimeout(ok, wait * 1000));
} finally {
  await srv.close();
}
