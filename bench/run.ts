// `npm run bench`: every benchmark in one table, each figure beside a baseline measured in the
// same run. Never part of `npm test`; results go into BENCHMARKS.md by hand with this command.
import os from "node:os";
import { nativeDecoderInUse } from "../src/native.ts";
import { type BenchRow, printRows } from "./lib.ts";

const only = process.argv.slice(2);
const benches: [string, () => Promise<BenchRow[]>][] = [
  ["render", async () => (await import("./render.ts")).run()],
  ["point", async () => (await import("./point.ts")).run()],
  ["point-wrk", async () => (await import("./point-wrk.ts")).run()],
  ["public", async () => (await import("./public.ts")).run()],
  ["key-check", async () => (await import("./key-check.ts")).run()],
  ["data", async () => (await import("./data-chunks.ts")).run()],
  ["export", async () => (await import("./export.ts")).run()],
  ["embeddings", async () => (await import("./embeddings.ts")).run()],
  ["chunk-version", async () => (await import("./chunk-version.ts")).run()],
  ["xarray", async () => (await import("./xarray.ts")).run()],
  ["codecs", async () => (await import("./codecs.ts")).run()],
  ["gdal", async () => (await import("./gdal.ts")).run()],
];

const rows: BenchRow[] = [];
for (const [name, run] of benches) {
  if (only.length && !only.includes(name)) continue;
  process.stderr.write(`bench ${name} …\n`);
  rows.push(...(await run()));
}
const cpu = os.cpus()[0]?.model ?? "unknown cpu";
process.stdout.write(
  `machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.versions.node}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}\nBlosc decoder: ${nativeDecoderInUse()}\n\n`,
);
printRows(rows);
