// Worker thread of the sample writer: compresses chunks (one zstd frame each, content size in the
// header) and writes them, so the main thread only computes fields. One message per chunk; the
// reply carries the stored size or the error.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parentPort } from "node:worker_threads";
import { constants, zstdCompressSync } from "node:zlib";

export interface ChunkJob {
  id: number;
  file: string;
  data: Uint8Array;
  level: number;
}

export type ChunkDone = { id: number; bytes: number } | { id: number; error: string };

const made = new Set<string>();

parentPort?.on("message", (job: ChunkJob) => {
  try {
    const packed = zstdCompressSync(job.data, {
      params: { [constants.ZSTD_c_compressionLevel]: job.level, [constants.ZSTD_c_checksumFlag]: 0 },
      pledgedSrcSize: job.data.byteLength,
    });
    const dir = dirname(job.file);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    writeFileSync(job.file, packed);
    parentPort?.postMessage({ id: job.id, bytes: packed.byteLength } satisfies ChunkDone);
  } catch (e) {
    parentPort?.postMessage({ id: job.id, error: (e as Error)?.message ?? String(e) } satisfies ChunkDone);
  }
});
