// Embedding .npy slices against zarr-python reading the same slice from the same Zarr v2 store
// (written by Debian's xarray + zarr 2, one item with Zstandard, one with zarr's default Blosc):
// MB/s of a 30 MiB slice (480 of 512 rows, every column and feature), rounds interleaved in one run:
//   - gridcast over loopback HTTP: the metered route with its key, curl in its own process as the
//     client reading the whole body (to /dev/null); curl's own time_total, connect to last byte.
//     The server's chunk cache is emptied before each round (every chunk read and decoded again);
//     it keeps the item's opened metadata, as a running server does.
//   - gridcast's store layer alone (no HTTP): a fresh Store (metadata read again), the slice
//     planned and read into one .npy body in memory.
//   - zarr-python 2 in its own process reading the same store over HTTP from a static server
//     (nginx) of the store directory, as a remote user without gridcast would (the array opened
//     afresh each round, its .zarray fetched again; targets ≥ 10 for Blosc, ≥ 5 for Zstandard).
//   - the static server handing gridcast's own answer as a file to the same curl: the physical
//     limit of moving those bytes to that client (targets ≥ 0.6 for Blosc, ≥ 0.3 for Zstandard).
//   - zarr-python 2 in its own process reading the directory: the array opened afresh (.zarray
//     read again, no decoded chunks kept) and the slice read into a numpy array (a reference row).
// The bound: how much faster the static server hands the finished answer than zarr-python reads
// it over HTTP. No server can be further ahead of that reader than this on this machine, so it is
// printed beside the "× zarr-python over HTTP" target, with the reader's own profile (its time
// fetching from the store, decoding, and the rest: opening, indexing, copying; peer_phases.py).
// Chunk files are in the page cache for all (warm-up round first); none keeps decoded chunks.
// The store layer's body is freed as soon as its read is timed (Python frees the peer's array
// likewise), so its garbage is not collected during, and billed to, the next HTTP round.
// The note gives CPU per slice, user + system over all threads: the bench process during the HTTP
// request (the server: HTTP, ledger, reads, decoding; curl's own CPU is not in it) and during the
// layer read, and the zarr-python process during its read. zarr-python reads from disk into its
// own memory; the HTTP row also moves the 30 MiB through a socket into a second process.
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
import { staticServer } from "./static-server.ts";

const PYTHON = process.env.GRIDCAST_PYTHON ?? "/usr/bin/python3";
const PEER = resolve(import.meta.dirname, "npy_zarr_peer.py");
const TILE = "32TNS";
export const NPY_Y_STOP = 480;
const Y_STOP = NPY_Y_STOP;
/** The bars per codec family: against zarr-python over HTTP, and against the static file. */
const TARGETS: Record<string, { remote: number; file: number }> = {
  zstd: { remote: 5, file: 0.3 },
  blosc: { remote: 10, file: 0.6 },
};
export const npyBenchItem = (family: string): string => `${family}~rf~v1.0~base~map~2024_01_01_2024_12_31~${TILE}`;

export function npyBenchStore(): string {
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
    JSON.parse((await lines.next()).value as string) as {
      seconds: number;
      bytes: number;
      cpu: number;
      fetch?: number;
      decode?: number;
    };
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
  const store = npyBenchStore();
  const out = join(BENCH_DIR, `npy-zarr-out-${process.pid}`);
  await writeEmbeddingIndexes(new Store(store), join(out, "current"));
  const srv = await benchServer(store, { out, embeddings_api_max_mb: 64 });
  const peer = startPeer();
  const rows: BenchRow[] = [];
  // The store, and gridcast's answers as files, from a static server.
  const web = await staticServer();
  web.link("store", store);
  try {
    await peer.ready;
    const { key } = await srv.ctx.ledger.createKey({ name: "bench", scopes: ["embeddings"], credits: 1e9, rate: 0 });
    const H = { "X-API-Key": key };
    for (const family of ["zstd", "blosc"]) {
      const name = npyBenchItem(family);
      const dir = join(store, "embeddings", ...name.split("~"));
      const url = `${srv.url}/api/embeddings/npy/${name}?y_stop=${Y_STOP}`;
      const remote = `${web.url}store/embeddings/${name.split("~").join("/")}`;
      const sum = { http: [0, 0, 0], layer: [0, 0, 0], zarr: [0, 0, 0], remote: [0, 0, 0], file: [0, 0, 0] };
      /** The remote reader's seconds fetching and decoding, summed over its rounds. */
      const remotePhases = { fetch: 0, decode: 0 };
      const add = (k: keyof typeof sum, r: { seconds: number; bytes: number; cpu: number }) => {
        sum[k][0] += r.seconds;
        sum[k][1] += r.bytes;
        sum[k][2] += r.cpu;
      };
      const addRemote = (r: { seconds: number; bytes: number; cpu: number; fetch?: number; decode?: number }) => {
        add("remote", r);
        remotePhases.fetch += r.fetch ?? 0;
        remotePhases.decode += r.decode ?? 0;
      };
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
      // gridcast's answer, byte for byte, as a file the static server hands out.
      const answer = await fetch(url, { headers: H });
      if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}`);
      web.put(`${family}.npy`, new Uint8Array(await answer.arrayBuffer()));
      const fileRound = async () => ({ ...(await curlGet(`${web.url}${family}.npy`)), cpu: 0 });
      // Warm-up of all (page cache, workers, imports, the peer's HTTP session), then interleaved rounds.
      await fileRound();
      await layer();
      await peer.ask(`read ${dir}`);
      await peer.ask(`read ${remote}`);
      for (let i = 0; i < rounds; i++) {
        srv.ctx.store.cache.invalidate();
        add("http", await cpuOf(() => curlGet(url, H)));
        add("zarr", await peer.ask(`read ${dir}`));
        addRemote(await peer.ask(`read ${remote}`));
        add("file", await fileRound());
        add("layer", await cpuOf(layer));
      }
      const mbs = (k: keyof typeof sum) => sum[k][1] / 1e6 / sum[k][0];
      const cpuMs = (k: keyof typeof sum) => ((sum[k][2] / rounds) * 1000).toFixed(1);
      const z = mbs("zarr");
      const zCpu = `zarr-python ${cpuMs("zarr")} ms`;
      const ms = (k: keyof typeof sum) => `${((sum[k][0] / rounds) * 1000).toFixed(1)} ms`;
      const perRound = (s: number) => `${((s / rounds) * 1000).toFixed(1)} ms`;
      const remoteRest = sum.remote[0] - remotePhases.fetch - remotePhases.decode;
      const bound = mbs("file") / mbs("remote");
      rows.push(
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast .npy over HTTP, MB/s",
          value: mbs("http"),
          baseline: `zarr-python 2 over HTTP from ${web.kind} serving the store`,
          baselineValue: mbs("remote"),
          ratio: mbs("http") / mbs("remote"),
          target: TARGETS[family].remote,
          note: `per slice: gridcast ${ms("http")}, zarr-python over HTTP ${ms("remote")}; CPU per slice: gridcast server ${cpuMs("http")} ms (curl not counted), zarr-python over HTTP ${cpuMs("remote")} ms; bound ${bound.toFixed(2)} (next row)`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: `bound on the ratio above: ${web.kind} handing the answer as a file, MB/s`,
          value: mbs("file"),
          baseline: "zarr-python 2 over HTTP (same rounds)",
          baselineValue: mbs("remote"),
          ratio: bound,
          note: `no server can beat the remote reader by more than this here (target above ${TARGETS[family].remote}); the reader's ${ms("remote")}: fetching from the store ${perRound(remotePhases.fetch)}, decoding ${perRound(remotePhases.decode)}, the rest (open, index, copy) ${perRound(remoteRest)}`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast .npy over HTTP, MB/s",
          value: mbs("http"),
          baseline: `${web.kind} handing gridcast's answer as a file to the same curl`,
          baselineValue: mbs("file"),
          ratio: mbs("http") / mbs("file"),
          target: TARGETS[family].file,
          note: `per slice: gridcast ${ms("http")}, static file ${ms("file")}`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast .npy over HTTP, MB/s",
          value: mbs("http"),
          baseline: "zarr-python 2 reading the same slice from the directory (reference: no transport)",
          baselineValue: z,
          ratio: mbs("http") / z,
          note: `per slice: zarr-python in-process ${ms("zarr")}; ${zCpu}`,
        },
        {
          bench: `npy-zarr ${family}`,
          figure: "gridcast store layer (no HTTP), MB/s",
          value: mbs("layer"),
          baseline: "zarr-python 2 reading the same slice from the directory",
          baselineValue: z,
          ratio: mbs("layer") / z,
          note: `CPU per slice: gridcast ${cpuMs("layer")} ms, ${zCpu}`,
        },
      );
    }
  } finally {
    peer.close();
    await srv.close();
    await web.close();
  }
  return rows;
}

if (import.meta.main) printRows(await run(Number(process.argv[2] ?? 8)));
