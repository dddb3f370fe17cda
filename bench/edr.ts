// EDR against the routes it is built on, in one run on one server: warm position answers per
// second against /point's for the same point and variable (16 connections, autocannon), and cube
// answers per second (CoverageJSON) against .npy exports of the same box, nodes and leads (one
// client, warm chunk cache for both), for a regional box and a 30°×30° one. Targets ≥ 0.8 each.
import { type BenchRow, benchServer, benchStore, type Load, load, numberArgs, printRows } from "./lib.ts";

/** A regional box, and the 30°×30° box bench/export.ts reads. */
const BOXES = [
  { lon_min: 0, lat_min: 40, lon_max: 20, lat_max: 55 },
  { lon_min: -10, lat_min: 30, lon_max: 20, lat_max: 60 },
];

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
    const boxUrls = BOXES.map((box) => {
      const q = new URLSearchParams({
        var: "t2m",
        time_index: String(g.runs.length - 1),
        lead_start: "0",
        lead_stop: String(last),
      });
      for (const [k, v] of Object.entries(box)) q.set(k, String(v));
      return {
        npy: `${srv.url}/api/export/forecast~global/npy?${q}`,
        cube: `${srv.url}/edr/collections/forecast~global/cube?bbox=${box.lon_min},${box.lat_min},${box.lon_max},${box.lat_max}&parameter-name=t2m`,
      };
    });
    for (const u of [pointUrl, edrUrl, ...boxUrls.flatMap((b) => [b.npy, b.cube])]) {
      await (await fetch(u, { headers: H })).arrayBuffer();
    }

    // Each pair measured twice in turn (A B B A), so neither side always runs first on a busy machine.
    const loads = { point: [] as Load[], edr: [] as Load[] };
    for (const side of ["point", "edr", "edr", "point"] as const) {
      const l = await load(side === "point" ? pointUrl : edrUrl, {
        headers: H,
        seconds: Math.max(1, Math.round(seconds / 2)),
      });
      if (l.errors || l.non2xx) throw new Error(`load had ${l.errors} errors, ${l.non2xx} non-2xx`);
      loads[side].push(l);
    }
    const mean = (ls: Load[]) => ls.reduce((s, l) => s + l.rps, 0) / ls.length;
    const point = { rps: mean(loads.point), p99: Math.max(...loads.point.map((l) => l.p99)) };
    const edr = { rps: mean(loads.edr), p99: Math.max(...loads.edr.map((l) => l.p99)) };
    const cubes: BenchRow[] = [];
    for (const b of boxUrls) {
      // In turn, as above: export, cube, cube, export.
      const half = seconds / 2;
      const npy1 = await rate(b.npy, H, half);
      const cube1 = await rate(b.cube, H, half);
      const cube2 = await rate(b.cube, H, half);
      const npy2 = await rate(b.npy, H, half);
      const cube = (cube1 + cube2) / 2;
      const npyMean = (npy1 + npy2) / 2;
      const nodes = (await (await fetch(b.cube, { headers: H })).json()).ranges.t2m.values.length;
      cubes.push({
        bench: "EDR cube (CoverageJSON)",
        figure: "answers/s",
        value: cube,
        baseline: ".npy export answers/s",
        baselineValue: npyMean,
        ratio: cube / npyMean,
        target: 0.8,
        note: `${nodes} values a cube (the same box, all leads), warm cache`,
      });
    }
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
      ...cubes,
    ];
  } finally {
    await srv.close();
  }
}

if (import.meta.main) printRows(await run(numberArgs()[0]));
