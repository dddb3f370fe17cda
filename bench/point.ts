// /point warm: req/s against a trivial JSON route on the same server (target ≥ 0.5), and the
// cold-read latency p50 with the decoded-chunk cache emptied before each request.
import { type BenchRow, benchServer, benchStore, load, percentile } from "./lib.ts";

export async function run(seconds = 5): Promise<BenchRow[]> {
  const store = await benchStore();
  const srv = await benchServer(store, { max_heavy_requests: 1000 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const H = { "X-API-Key": key };
    const pointUrl = `${srv.url}/point?lat=48.1&lon=11.6&var=t2m`;
    await fetch(pointUrl, { headers: H }); // warm metadata and the chunk
    const trivial = await load(`${srv.url}/healthz`, { seconds });
    const warm = await load(pointUrl, { headers: H, seconds });
    if (warm.errors || warm.non2xx) throw new Error(`/point load had ${warm.errors} errors, ${warm.non2xx} non-2xx`);

    const cold: number[] = [];
    for (let i = 0; i < 40; i++) {
      srv.ctx.store.cache.invalidate();
      const t0 = performance.now();
      const r = await fetch(`${srv.url}/point?lat=${-60 + i * 3}&lon=${i * 9}&var=t2m`, { headers: H });
      await r.arrayBuffer();
      cold.push(performance.now() - t0);
    }
    const coldP50 = percentile(cold, 50);
    const warmP50 = warm.p50;
    return [
      {
        bench: "/point warm",
        figure: "req/s",
        value: warm.rps,
        baseline: "/healthz req/s",
        baselineValue: trivial.rps,
        ratio: warm.rps / trivial.rps,
        target: 0.5,
        note: `p99 ${warm.p99} ms`,
      },
      {
        bench: "/point cold read",
        figure: "p50 ms",
        value: coldP50,
        baseline: "warm p50 ms",
        baselineValue: warmP50,
        ratio: coldP50 > 0 ? warmP50 / coldP50 : 0,
        note: "ratio = warm/cold latency",
      },
    ];
  } finally {
    await srv.close();
  }
}

if (import.meta.main) {
  const { printRows } = await import("./lib.ts");
  printRows(await run());
}
