// Chunk decoding alone, one thread, same chunk files, on the chunks of the xarray-written bench
// store (Blosc lz4, byte shuffle, 1×25×90×90 float32):
//  - the addon's C Blosc decoder against numcodecs (c-blosc, what xarray decodes with) in Python;
//  - the built-in decoder (the fallback) against the WebAssembly Blosc codec zarrita ships.
//   node bench/codecs.ts [rounds]

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Blosc from "numcodecs/blosc";
import { nativeAddon } from "../src/native.ts";
import { decodeBlosc } from "../src/store/codecs/blosc-decode.ts";
import { type BenchRow, printRows } from "./lib.ts";
import { xarrayStore } from "./xarray.ts";

export async function run(rounds = 3): Promise<BenchRow[]> {
  const dir = join(xarrayStore(), "forecast", "global", "t2m");
  const paths = readdirSync(dir)
    .filter((f) => !f.startsWith("."))
    .slice(0, 48)
    .map((f) => join(dir, f));
  const files = paths.map((p) => new Uint8Array(readFileSync(p)));
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
  const rows: BenchRow[] = [];
  const addon = nativeAddon();
  if (addon) {
    // The addon's C decoder, on this thread, then numcodecs in Python on the same files.
    const out = new Uint8Array(bound);
    for (const f of files) addon.decodeSync(f, out);
    const c = process.cpuUsage();
    for (let r = 0; r < rounds; r++) for (const f of files) addon.decodeSync(f, out);
    const ours = cpuMs(process.cpuUsage(c)) / files.length / rounds;
    const code = [
      "import sys, time, os",
      "from numcodecs import blosc",
      "blosc.use_threads = False",
      "fs = [open(p, 'rb').read() for p in sys.argv[2:]]",
      "for f in fs: blosc.decompress(f)",
      "t = time.process_time()",
      "for r in range(int(sys.argv[1])):",
      "    for f in fs: blosc.decompress(f)",
      "print((time.process_time() - t) * 1000 / len(fs) / int(sys.argv[1]))",
    ].join("\n");
    const peer = Number(
      execFileSync(process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3", ["-c", code, String(rounds * 3), ...paths])
        .toString()
        .trim(),
    );
    rows.push({
      bench: "Blosc-lz4 chunk decode, one thread, CPU per chunk",
      figure: "the addon's C decoder, ms",
      value: ours,
      baseline: "numcodecs (Python, same library) ms",
      baselineValue: peer,
      ratio: peer / ours,
      note: `${files.length} chunk files; ratio = numcodecs ms / ours`,
    });
  }
  return [
    ...rows,
    {
      bench: "Blosc-lz4 chunk decode, one thread, built-in decoder (the fallback)",
      figure: "built-in MB/s",
      value: native,
      baseline: "WebAssembly (numcodecs) MB/s",
      baselineValue: web,
      ratio: native / web,
      note: `${files.length} chunks × ${rounds} rounds, alternating; CPU ms per chunk ${(cpu.native / files.length / rounds).toFixed(2)} vs ${(cpu.wasm / files.length / rounds).toFixed(2)}`,
    },
  ];
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 3)));
