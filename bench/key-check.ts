// Refusing a wrong secret for a known key id against refusing an unknown id, through the key
// cache as the server uses it: the two must cost the same (ratio ≈ 1.00), or response times
// would tell an attacker which ids exist. Interleaved batches so machine load hits both alike.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { KeyCachingLedger } from "../src/ledger/key-cache.ts";
import { openLedger } from "../src/ledger/open.ts";
import { BENCH_DIR, type BenchRow } from "./lib.ts";

export async function run(batches = 40, perBatch = 2000): Promise<BenchRow[]> {
  const file = join(BENCH_DIR, `keycheck-${process.pid}.db`);
  const ledger = new KeyCachingLedger(await openLedger(file));
  try {
    const { key, record } = await ledger.createKey({ name: "k", scopes: ["weather"], credits: 0, rate: 0 });
    const wrong = `gck_${record.id}_${"A".repeat(43)}`;
    const unknown = key.replace(record.id, "0".repeat(12));
    const time = async (k: string) => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perBatch; i++) await ledger.authenticate(k, "weather").catch(() => {});
      return Number(process.hrtime.bigint() - t0) / perBatch;
    };
    await time(wrong);
    await time(unknown); // both ids are in the cache from here on
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < batches; i++) {
      // Which goes first alternates, so neither always runs on a warmer (or busier) spell.
      if (i % 2) {
        a.push(await time(wrong));
        b.push(await time(unknown));
      } else {
        b.push(await time(unknown));
        a.push(await time(wrong));
      }
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
    const wrongNs = median(a);
    const unknownNs = median(b);
    return [
      {
        bench: "refusal: wrong secret, known id",
        figure: "ns/check",
        value: wrongNs,
        baseline: "refusal: unknown id, ns/check",
        baselineValue: unknownNs,
        ratio: wrongNs / unknownNs,
        note: `median of ${batches} interleaved batches of ${perBatch}; target ≈ 1.00`,
      },
    ];
  } finally {
    await ledger.close();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
}

if (import.meta.main) {
  const { printRows } = await import("./lib.ts");
  printRows(await run());
}
