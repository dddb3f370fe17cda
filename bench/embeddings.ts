// Embedding .npy slices: MB/s of a 32 MiB slice (the default embeddings_api_max_mb) over loopback
// HTTP, cold (chunk cache emptied every round) and repeated (the same request again; a slice is a
// scan that decodes its chunks every time, so this differs from cold only by what the previous
// round left in caches), each against a baseline from the same run: cold against reading the same
// slice through the store layer without HTTP and against libzstd decoding the chunk files, the
// repeat against a bare node:http server sending a ready 32 MiB buffer to the same client. The client is
// curl in its own process, timing itself, so its buffering is not billed to the server's thread.
//   node bench/embeddings.ts [rounds]

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zstdDecompressSync } from "node:zlib";
import { DEFAULTS, MIB } from "../src/config.ts";
import { writeEmbeddingIndexes } from "../src/embeddings/index-writer.ts";
import { parseItemName } from "../src/embeddings/names.ts";
import { planSlice, readSlice } from "../src/embeddings/slice.ts";
import { writeSample } from "../src/sample/index.ts";
import { Store } from "../src/store/store.ts";
import { writeBigItem } from "../test/embeddings/fixtures.ts";
import { type BenchRow, benchServer, curlGet, printRows } from "./lib.ts";

/** 512 × 512 × 33 float32 in 2 × 2 chunks of 8.25 MiB; 32 features are exactly 32 MiB. */
const SHAPE: [number, number, number] = [512, 512, 33];
const SLICE = { feature_stop: 32 };

type Timed = { seconds: number; bytes: number };

/** Time a workload in this process: its wall time and the bytes it reports. */
async function wall(once: () => Promise<number>): Promise<Timed> {
  const t0 = performance.now();
  const bytes = await once();
  return { seconds: (performance.now() - t0) / 1000, bytes };
}

/** MB/s over several rounds of a timed workload. */
async function timed(rounds: number, once: () => Promise<Timed>): Promise<number> {
  let bytes = 0;
  let seconds = 0;
  for (let i = 0; i < rounds; i++) {
    const r = await once();
    bytes += r.bytes;
    seconds += r.seconds;
  }
  return bytes / 1e6 / seconds;
}

/** MB/s of two workloads run alternately, one round of each at a time. */
async function interleaved(rounds: number, a: () => Promise<Timed>, b: () => Promise<Timed>) {
  const sum = [
    [0, 0],
    [0, 0],
  ];
  for (let i = 0; i < rounds; i++) {
    for (const [k, fn] of [a, b].entries()) {
      const r = await fn();
      sum[k][0] += r.seconds;
      sum[k][1] += r.bytes;
    }
  }
  return sum.map(([s, bytes]) => bytes / 1e6 / s);
}

export async function run(rounds = 10): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "gridcast-bench-emb-"));
  const storeDir = join(dir, "store");
  await writeSample(storeDir, { preset: "tiny", seed: 7 });
  const big = await writeBigItem(storeDir, SHAPE);
  await writeEmbeddingIndexes(new Store(storeDir), join(dir, "out", "current"));
  const ref = parseItemName(big.name);

  // Baseline (cold): plan and read the slice through the store layer, a fresh store each round.
  const plainCold = await timed(rounds, () =>
    wall(async () => {
      const store = new Store(storeDir);
      const plan = await planSlice(store, ref, SLICE, 32);
      return (await readSlice(store, plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB)).byteLength;
    }),
  );

  // Baseline (cold, native): the same chunk files read and zstd-decoded by libzstd in one
  // thread, no Zarr layer and no HTTP; MB/s counts the slice's bytes, as the HTTP figure does.
  const latentDir = join(storeDir, "embeddings", big.path, "latent");
  const chunkFiles = readdirSync(latentDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== "zarr.json")
    .map((e) => join(e.parentPath, e.name));
  const nativeOnce = () =>
    wall(async () => {
      for (const f of chunkFiles) zstdDecompressSync(await readFile(f));
      return 32 * MIB;
    });

  // Baseline (warm): the transport alone, the same 32 MiB body from a bare server.
  const readyStore = new Store(storeDir);
  const ready = await readSlice(
    readyStore,
    await planSlice(readyStore, ref, SLICE, 32),
    DEFAULTS.read_slab_mb * MIB,
    DEFAULTS.scan_hold_mb * MIB,
  );
  const bare = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": ready.byteLength });
    res.end(ready);
  });
  await new Promise<void>((ok) => bare.listen(0, "127.0.0.1", ok));
  const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}/`;

  const srv = await benchServer(storeDir, { out: join(dir, "out") });
  try {
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["embeddings"], credits: 1e9, rate: 0 });
    const url = `${srv.url}/api/embeddings/npy/${big.name}?feature_stop=${SLICE.feature_stop}`;
    const h = { "X-API-Key": key };
    if ((await curlGet(url, h)).bytes !== ready.byteLength) throw new Error("unexpected body size");
    // Cold HTTP and the native decode alternate round by round, so both see the same load.
    const [httpCold, native] = await interleaved(
      rounds,
      () => {
        srv.ctx.store.cache.invalidate();
        return curlGet(url, h);
      },
      nativeOnce,
    );
    await curlGet(url, h);
    const httpWarm = await timed(rounds, () => curlGet(url, h));
    await curlGet(bareUrl);
    const loopback = await timed(rounds, () => curlGet(bareUrl));
    const note = `${(ready.byteLength / MIB).toFixed(3)} MiB body, ${rounds} rounds`;
    return [
      {
        bench: "embeddings npy 32 MiB, cold",
        figure: "MB/s",
        value: httpCold,
        baseline: "store-layer slice read MB/s",
        baselineValue: plainCold,
        ratio: httpCold / plainCold,
        note: `${note}; zstd decode every round`,
      },
      {
        bench: "embeddings npy 32 MiB, cold, against a native decode",
        figure: "MB/s",
        value: httpCold,
        baseline: "libzstd decode of the same chunk files MB/s",
        baselineValue: native,
        ratio: httpCold / native,
        target: 0.8,
        note: `${chunkFiles.length} chunk files`,
      },
      {
        bench: "embeddings npy 32 MiB, repeated",
        figure: "MB/s",
        value: httpWarm,
        baseline: "bare loopback MB/s",
        baselineValue: loopback,
        ratio: httpWarm / loopback,
        note: `${note}; decoded again each round (slices are scans: no chunk cache)`,
      },
    ];
  } finally {
    await srv.close();
    await new Promise((ok) => bare.close(ok));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 10)));
