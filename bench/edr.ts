// EDR against the routes it is built on, in one run on one server: warm position answers per
// second against /point's for the same point and variable (16 connections, autocannon), and cube
// answers per second (CoverageJSON) against .npy exports of the same box, nodes and leads (one
// client, warm chunk cache for both). Targets ≥ 0.8 each.
import { type BenchRow, benchServer, benchStore, load, numberArgs, printRows } from "./lib.ts";

const BOX = { lon_min: 0, lat_min: 40, lon_max: 20, lat_max: 55 };

async function rate(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  let n = 0;
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const r = await fetch(url, { headers });
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
    await r.arrayBuffer();
    n++;
  }
  return n / seconds;
}

export async function run(seconds = 5): Promise<BenchRow[]> {
  const store = await benchStore("demo");
  const srv = await benchServer(store, { max_heavy_requests: 1000, field_export_max_mb: 1024 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const H = { "X-API-Key": key };
    const g = await srv.ctx.store.forecastGroup("forecast/global");
    const last = g.leads.length - 1;
    const pointUrl = `${srv.url}/point?lat=48.1&lon=11.6&var=t2m`;
    const edrUrl = `${srv.url}/edr/collections/forecast~global/position?coords=POINT(11.6%2048.1)&parameter-name=t2m`;
    const q = new URLSearchParams({
      var: "t2m",
      time_index: String(g.runs.length - 1),
      lead_start: "0",
      lead_stop: String(last),
    });
    for (const [k, v] of Object.entries(BOX)) q.set(k, String(v));
    const npyUrl = `${srv.url}/api/export/forecast~global/npy?${q}`;
    const cubeUrl = `${srv.url}/edr/collections/forecast~global/cube?bbox=${BOX.lon_min},${BOX.lat_min},${BOX.lon_max},${BOX.lat_max}&parameter-name=t2m`;
    for (const u of [pointUrl, edrUrl, npyUrl, cubeUrl]) await (await fetch(u, { headers: H })).arrayBuffer();

    const point = await load(pointUrl, { headers: H, seconds });
    const edr = await load(edrUrl, { headers: H, seconds });
    for (const l of [point, edr])
      if (l.errors || l.non2xx) throw new Error(`load had ${l.errors} errors, ${l.non2xx} non-2xx`);
    const npy = await rate(npyUrl, H, seconds);
    const cube = await rate(cubeUrl, H, seconds);
    const nodes = (await (await fetch(cubeUrl, { headers: H })).json()).ranges.t2m.values.length;
    return [
      {
        bench: "EDR position warm",
        figure: "answers/s",
        value: edr.rps,
        baseline: "/point answers/s",
        baselineValue: point.rps,
        ratio: edr.rps / point.rps,
        target: 0.8,
        note: `p99 ${edr.p99} ms vs ${point.p99} ms`,
      },
      {
        bench: "EDR cube (CoverageJSON)",
        figure: "answers/s",
        value: cube,
        baseline: ".npy export answers/s",
        baselineValue: npy,
        ratio: cube / npy,
        target: 0.8,
        note: `${nodes} values a cube (the same box, all leads), warm cache`,
      },
    ];
  } finally {
    await srv.close();
  }
}

if (import.meta.main) printRows(await run(numberArgs()[0]));
