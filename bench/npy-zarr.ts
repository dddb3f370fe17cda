// Embedding .npy slices against zarr-python reading the same slice from the same Zarr v2 store
// (written by Debian's xarray + zarr 2, one item with Zstandard, one with zarr's default Blosc):
// MB/s of a 30 MiB slice (480 of 512 rows, every column and feature), gridcast over loopback HTTP
// (curl in its own process) and through the store layer alone (no HTTP), against zarr-python 2
// opening the array afresh and reading the slice into numpy, rounds interleaved in one run.
//   node bench/npy-zarr.ts [rounds]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { DEFAULTS, MIB } from "../src/config.ts";
import { writeEmbeddingIndexes } from "../src/embeddings/index-writer.ts";
import { tileGeometry } from "../src/embeddings/mgrs.ts";
import { parseItemName } from "../src/embeddings/names.ts";
import { planSlice, readSlice } from "../src/embeddings/slice.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, type BenchRow, benchServer, curlGet, printRows } from "./lib.ts";

const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
const PEER = resolve(import.meta.dirname, "npy_zarr_peer.py");
const TILE = "32TNS";
const Y_STOP = 480;
const item = (family: string) => `${family}~rf~v1.0~base~map~2024_01_01_2024_12_31~${TILE}`;

function benchStore(): string {
  const dir = join(BENCH_DIR, "npy-zarr-v2");
  if (!existsSync(join(dir, "embeddings", "blosc"))) {
    mkdirSync(dir, { recursive: true });
    const g = tileGeometry(TILE);
    execFileSync(
      PYTHON,
      [PEER, "write", dir, TILE, String(g.origin.easting), String(g.origin.northing), String(g.epsg)],
      {
        stdio: "inherit",
      },
    );
  }
  return dir;
}

function startPeer() {
  const child = spawn(PYTHON, [PEER, "serve", String(Y_STOP)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const reply = async () => JSON.parse((await lines.next()).value as string) as { seconds: number; bytes: number };
  return {
    ready: reply(),
    ask(cmd: string) {
      child.stdin.write(`${cmd}\n`);
      return reply();
    },
    close: () => child.kill(),
  };
}

export async function run(rounds = 8): Promise<BenchRow[]> {
  const store = benchStore();
  const out = join(BENCH_DIR, `npy-zarr-out-${process.pid}`);
  await writeEmbeddingIndexes(new Store(store), join(out, "current"));
  const srv = await benchServer(store, { out, embeddings_api_max_mb: 64 });
  const peer = startPeer();
  const rows: BenchRow[] = [];
  try {
    await peer.ready;
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["embeddings"], credits: 1e9, rate: 0 });
    const H = { "X-API-Key": key };
    for (const family of ["zstd", "blosc"]) {
      const name = item(family);
      const dir = join(store, "embeddings", ...name.split("~"));
      const url = `${srv.url}/api/embeddings/npy/${name}?y_stop=${Y_STOP}`;
      const sum = { http: [0, 0], layer: [0, 0], zarr: [0, 0] };
      const add = (k: keyof typeof sum, r: { seconds: number; bytes: number }) => {
        sum[k][0] += r.seconds;
        sum[k][1] += r.bytes;
      };
      const layer = async () => {
        const s = new Store(store);
        const t0 = performance.now();
        const plan = await planSlice(s, parseItemName(name), { y_stop: Y_STOP }, 64);
        const body = await readSlice(s, plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB);
        return { seconds: (performance.now() - t0) / 1000, bytes: body.byteLength - plan.header.length };
      };
      // Warm-up of all three (page cache, workers, imports), then interleaved rounds.
      await curlGet(url, H);
      await layer();
      await peer.ask(`read ${dir}`);
      for (let i = 0; i < rounds; i++) {
        srv.ctx.store.cache.invalidate();
        add("http", await curlGet(url, H));
        add("zarr", await peer.ask(`read ${dir}`));
        add("layer", await layer());
      }
      const mbs = (k: keyof typeof sum) => sum[k][1] / 1e6 / sum[k][0];
      const z = mbs("zarr");
      rows.push(
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast .npy over HTTP, MB/s",
          value: mbs("http"),
          baseline: "zarr-python 2 reading the same slice",
          baselineValue: z,
          ratio: mbs("http") / z,
          target: 1,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast store layer (no HTTP), MB/s",
          value: mbs("layer"),
          baseline: "zarr-python 2 reading the same slice",
          baselineValue: z,
          ratio: mbs("layer") / z,
        },
      );
    }
  } finally {
    peer.close();
    await srv.close();
  }
  return rows;
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 8)));
