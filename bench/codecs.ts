// Chunk decoding alone, one thread, same chunk files, rounds alternating: the native Blosc decoder
// (src/store/codecs) against the WebAssembly Blosc codec zarrita uses by default, on the chunks of
// the xarray-written bench store (Blosc lz4, byte shuffle, 1×25×90×90 float32).
//   node bench/codecs.ts [rounds]
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Blosc from "numcodecs/blosc";
import { decodeBlosc } from "../src/store/codecs/blosc-decode.ts";
import { type BenchRow, printRows } from "./lib.ts";
import { xarrayStore } from "./xarray.ts";

export async function run(rounds = 3): Promise<BenchRow[]> {
  const dir = join(xarrayStore(), "forecast", "global", "t2m");
  const files = readdirSync(dir)
    .filter((f) => !f.startsWith("."))
    .slice(0, 48)
    .map((f) => new Uint8Array(readFileSync(join(dir, f))));
  const bound = 25 * 90 * 90 * 4;
  const wasm = Blosc.fromConfig({ cname: "lz4", clevel: 5, shuffle: 1, blocksize: 0 } as never);
  const sum = { native: 0, wasm: 0 };
  const cpu = { native: 0, wasm: 0 };
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  let bytes = 0;
  for (const f of files) {
    decodeBlosc(f, bound);
    await wasm.decode(f);
  }
  for (let r = 0; r < rounds; r++) {
    for (const f of files) {
      let t = performance.now();
      let c = process.cpuUsage();
      const out = decodeBlosc(f, bound);
      cpu.native += cpuMs(process.cpuUsage(c));
      sum.native += performance.now() - t;
      t = performance.now();
      c = process.cpuUsage();
      await wasm.decode(f);
      cpu.wasm += cpuMs(process.cpuUsage(c));
      sum.wasm += performance.now() - t;
      bytes += (out as Uint8Array).byteLength;
    }
  }
  const native = bytes / 1e6 / (sum.native / 1000);
  const web = bytes / 1e6 / (sum.wasm / 1000);
  return [
    {
      bench: "Blosc-lz4 chunk decode, one thread",
      figure: "native MB/s",
      value: native,
      baseline: "WebAssembly (numcodecs) MB/s",
      baselineValue: web,
      ratio: native / web,
      note: `${files.length} chunks × ${rounds} rounds, alternating; CPU ms per chunk ${(cpu.native / files.length / rounds).toFixed(2)} vs ${(cpu.wasm / files.length / rounds).toFixed(2)}`,
    },
  ];
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 3)));
