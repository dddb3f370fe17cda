// Worker thread of the decode pool: decodes one Blosc chunk per message and hands the decoded
// bytes back without copying them.
import { parentPort } from "node:worker_threads";
import { decodeBlosc, UNSUPPORTED } from "./blosc-decode.ts";

export type DecodeJob = { id: number; bytes: Uint8Array; bound: number };
export type DecodeDone =
  | { id: number; out: Uint8Array }
  | { id: number; unsupported: true }
  | { id: number; error: string };

parentPort?.on("message", (job: DecodeJob) => {
  try {
    const out = decodeBlosc(job.bytes, job.bound);
    if (out === UNSUPPORTED) parentPort?.postMessage({ id: job.id, unsupported: true } satisfies DecodeDone);
    else parentPort?.postMessage({ id: job.id, out } satisfies DecodeDone, [out.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort?.postMessage({ id: job.id, error: (e as Error).message } satisfies DecodeDone);
  }
});
