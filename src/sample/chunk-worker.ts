// Worker thread of the sample writer: compresses chunks (one zstd frame each, content size in the
// header) and writes them, so the main thread only computes fields. One message per chunk; the
// reply carries the stored size or the error.
import { parentPort } from "node:worker_threads";
import { writeChunkFile } from "./chunk-file.ts";

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
    const bytes = writeChunkFile(job.file, job.data, job.level, made);
    parentPort?.postMessage({ id: job.id, bytes } satisfies ChunkDone);
  } catch (e) {
    parentPort?.postMessage({ id: job.id, error: (e as Error)?.message ?? String(e) } satisfies ChunkDone);
  }
});
