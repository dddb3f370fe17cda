// Export .npy: MB/s of output for a 30°×30° × all leads box through HTTP, against a plain read of
// the same chunks through the store layer (decode + copy, no HTTP) in the same run.
import { DEFAULTS, MIB } from "../src/config.ts";
import { boxLeads, planBox } from "../src/forecast/box.ts";
import { registry } from "../src/registry/registry.ts";
import { Store } from "../src/store/store.ts";
import { type BenchRow, benchServer, benchStore } from "./lib.ts";

const BOX = { lat_min: 30, lat_max: 60, lon_min: -10, lon_max: 20 };

export async function run(rounds = 20): Promise<BenchRow[]> {
  const storeDir = await benchStore();
  const probe = new Store(storeDir);
  const g = await probe.forecastGroup("forecast/global");
  const lastLead = g.leads.length - 1;
  const req = { group: "forecast/global", var: "t2m", time_index: 0, lead_start: 0, lead_stop: lastLead, ...BOX };

  // Baseline: the same chunks decoded and copied by the store layer, cold cache each round.
  let plainBytes = 0;
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) {
    const s = new Store(storeDir, { cacheMb: 256 });
    const plan = await planBox(s, registry, req, 1024);
    for await (const slab of boxLeads(plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB))
      plainBytes += slab.byteLength;
  }
  const plainMBs = plainBytes / 1e6 / ((performance.now() - t0) / 1000);

  const srv = await benchServer(storeDir, { field_export_max_mb: 1024 });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["weather"], credits: 0, rate: 0 });
    const q = new URLSearchParams({ var: "t2m", time_index: "0", lead_start: "0", lead_stop: String(lastLead) });
    for (const [k, v] of Object.entries(BOX)) q.set(k, String(v));
    const url = `${srv.url}/api/export/forecast~global/npy?${q}`;
    let bytes = 0;
    const t1 = performance.now();
    for (let i = 0; i < rounds; i++) {
      srv.ctx.store.cache.invalidate();
      const r = await fetch(url, { headers: { "X-API-Key": key } });
      if (r.status !== 200) throw new Error(`export answered ${r.status}`);
      bytes += (await r.arrayBuffer()).byteLength;
    }
    const httpMBs = bytes / 1e6 / ((performance.now() - t1) / 1000);
    return [
      {
        bench: "export npy 30°×30° all leads",
        figure: "MB/s",
        value: httpMBs,
        baseline: "plain chunk read MB/s",
        baselineValue: plainMBs,
        ratio: httpMBs / plainMBs,
        note: `${(bytes / rounds / 1e6).toFixed(2)} MB per export, cold cache`,
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
