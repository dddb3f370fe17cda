// Embedding .npy slices against zarr-python reading the same slice from the same Zarr v2 store
// (written by Debian's xarray + zarr 2, one item with Zstandard, one with zarr's default Blosc):
// MB/s of a 30 MiB slice (480 of 512 rows, every column and feature), rounds interleaved in one run:
//   - gridcast over loopback HTTP: the metered route with its key, curl in its own process as the
//     client reading the whole body (to /dev/null); curl's own time_total, connect to last byte.
//     The server's chunk cache is emptied before each round (every chunk read and decoded again);
//     it keeps the item's opened metadata, as a running server does.
//   - gridcast's store layer alone (no HTTP): a fresh Store (metadata read again), the slice
//     planned and read into one .npy body in memory.
//   - zarr-python 2 in its own process: the array opened afresh (.zarray read again, no decoded
//     chunks kept) and the slice read into a numpy array.
//   - the transport alone: a bare node:http server sending a ready body of the same size to the
//     same curl. With it, a ceiling: the best ratio any HTTP service could reach on this machine,
//     the peer's time over the larger of the bare transport's time and the CPU an HTTP answer
//     needs at the least (the bare server's, curl's for the body, a decode as cheap as the peer's)
//     spread over every core. A bar above the ceiling cannot be met here by any server.
// Chunk files are in the page cache for all three (warm-up round first); none keeps decoded chunks.
// The store layer's body is freed as soon as its read is timed (Python frees the peer's array
// likewise), so its garbage is not collected during, and billed to, the next HTTP round.
// The note gives CPU per slice, user + system over all threads: the bench process during the HTTP
// request (the server: HTTP, ledger, reads, decoding; curl's own CPU is not in it) and during the
// layer read, and the zarr-python process during its read. zarr-python reads from disk into its
// own memory; the HTTP row also moves the 30 MiB through a socket into a second process.
//   node bench/npy-zarr.ts [rounds]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { DEFAULTS, MIB } from "../src/config.ts";
import { writeEmbeddingIndexes } from "../src/embeddings/index-writer.ts";
import { tileGeometry } from "../src/embeddings/mgrs.ts";
import { parseItemName } from "../src/embeddings/names.ts";
import { planSlice, readSlice } from "../src/embeddings/slice.ts";
import { Store } from "../src/store/store.ts";
import { BENCH_DIR, type BenchRow, bareServer, benchServer, curlGet, printRows } from "./lib.ts";

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
  const reply = async () =>
    JSON.parse((await lines.next()).value as string) as { seconds: number; bytes: number; cpu: number };
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
  // The transport alone: a ready body of the slice's size to the same curl, and an empty one
  // (curl's own start-up, taken off its CPU for the body).
  const bare = await bareServer();
  try {
    await peer.ready;
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["embeddings"], credits: 1e9, rate: 0 });
    const H = { "X-API-Key": key };
    for (const family of ["zstd", "blosc"]) {
      const name = item(family);
      const dir = join(store, "embeddings", ...name.split("~"));
      const url = `${srv.url}/api/embeddings/npy/${name}?y_stop=${Y_STOP}`;
      const sum = { http: [0, 0, 0], layer: [0, 0, 0], zarr: [0, 0, 0], bare: [0, 0, 0] };
      const add = (k: keyof typeof sum, r: { seconds: number; bytes: number; cpu: number }) => {
        sum[k][0] += r.seconds;
        sum[k][1] += r.bytes;
        sum[k][2] += r.cpu;
      };
      /** curl's CPU seconds for the bare body and for an empty one, summed over the rounds. */
      const client = { body: 0, empty: 0 };
      /** CPU seconds (user + system, all threads) of this process over f. */
      const cpuOf = async <T>(f: () => Promise<T>): Promise<T & { cpu: number }> => {
        const c0 = process.cpuUsage();
        const r = await f();
        const c = process.cpuUsage(c0);
        return { ...r, cpu: (c.user + c.system) / 1e6 };
      };
      const layer = async () => {
        const s = new Store(store);
        const t0 = performance.now();
        const plan = await planSlice(s, parseItemName(name), { y_stop: Y_STOP }, 64);
        const body = await readSlice(s, plan, DEFAULTS.read_slab_mb * MIB, DEFAULTS.scan_hold_mb * MIB);
        const seconds = (performance.now() - t0) / 1000;
        const bytes = body.byteLength - plan.header.length;
        // Freed here, as Python frees the peer's array when its read ends: left to the GC, the 30
        // MiB body makes V8 start a full collection that runs during the next HTTP round, which
        // then pays for this row's garbage (about 20 ms of CPU per slice, measured).
        (body.buffer as ArrayBuffer).transfer(0);
        return { seconds, bytes };
      };
      /** The bare transport of the same number of bytes: curl's time, this process's CPU. */
      const bareRound = async () => {
        const r = await cpuOf(() => curlGet(bare.url));
        client.body += r.clientCpu;
        const full = bare.body;
        bare.body = new Uint8Array(0);
        client.empty += (await curlGet(bare.url)).clientCpu;
        bare.body = full;
        return r;
      };
      // Warm-up of all three (page cache, workers, imports), then interleaved rounds.
      bare.body = new Uint8Array((await curlGet(url, H)).bytes).fill(7);
      await bareRound();
      client.body = 0;
      client.empty = 0;
      await layer();
      await peer.ask(`read ${dir}`);
      for (let i = 0; i < rounds; i++) {
        srv.ctx.store.cache.invalidate();
        add("http", await cpuOf(() => curlGet(url, H)));
        add("zarr", await peer.ask(`read ${dir}`));
        add("layer", await cpuOf(layer));
        add("bare", await bareRound());
      }
      const mbs = (k: keyof typeof sum) => sum[k][1] / 1e6 / sum[k][0];
      const cpuMs = (k: keyof typeof sum) => ((sum[k][2] / rounds) * 1000).toFixed(1);
      const z = mbs("zarr");
      const zCpu = `zarr-python ${cpuMs("zarr")} ms`;
      // The best any HTTP service could do here: at least the bare transport's time, and at least
      // the CPU it needs spread over every core: the bare server's, curl's for the body, and a
      // decode as cheap as zarr-python's own (c-blosc / libzstd in the peer's process).
      const per = (x: number) => x / rounds;
      const bareWall = per(sum.bare[0]);
      const transportCpu = per(sum.bare[2]) + per(client.body - client.empty);
      const floor = Math.max(bareWall, (transportCpu + per(sum.zarr[2])) / availableParallelism());
      const zarrWall = per(sum.zarr[0]);
      rows.push(
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast .npy over HTTP, MB/s",
          value: mbs("http"),
          baseline: "zarr-python 2 reading the same slice",
          baselineValue: z,
          ratio: mbs("http") / z,
          target: 1,
          note: `CPU per slice: gridcast server ${cpuMs("http")} ms (curl not counted), ${zCpu}`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast store layer (no HTTP), MB/s",
          value: mbs("layer"),
          baseline: "zarr-python 2 reading the same slice",
          baselineValue: z,
          ratio: mbs("layer") / z,
          note: `CPU per slice: gridcast ${cpuMs("layer")} ms, ${zCpu}`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "ceiling: the best ratio any HTTP service could reach here",
          value: zarrWall / floor,
          baseline: "the bar",
          baselineValue: 1,
          ratio: zarrWall / floor / 1,
          note:
            `zarr-python ${(zarrWall * 1000).toFixed(1)} ms per slice against a floor of ${(floor * 1000).toFixed(1)} ms: ` +
            `the bare transport (a ready body to curl) ${(bareWall * 1000).toFixed(1)} ms, and CPU over ` +
            `${availableParallelism()} cores of the bare server ${(per(sum.bare[2]) * 1000).toFixed(1)} ms + curl's for the body ` +
            `${(per(client.body - client.empty) * 1000).toFixed(1)} ms + zarr-python's own decode ${cpuMs("zarr")} ms`,
        },
      );
    }
  } finally {
    peer.close();
    await srv.close();
    await bare.close();
  }
  return rows;
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 8)));
