// What goes wrong reading a chunk, as the errors gridcast answers with: damaged data is
// CorruptDataError, an unreachable or vanished store StoreUnavailableError, and the log line (never
// the client) names the store, key and chunk.
import * as zarr from "zarrita";
import { CorruptDataError, GridcastError, StoreUnavailableError } from "../errors.ts";
import type { Backend } from "./backend.ts";
import { CodecInputError } from "./codecs/bound.ts";
import type { Chunk } from "./region.ts";

/** How much of what a failed decode found is quoted in its refusal. */
const FOUND_MAX_CHARS = 160;

/** A decoded chunk must hold exactly one chunk of values: anything else is damaged data. */
export function checkChunk(c: Chunk, chunkShape: number[]): void {
  const n = chunkShape.reduce((a, b) => a * b, 1);
  const shapeOk = c.shape.length === chunkShape.length && c.shape.every((v, i) => v === chunkShape[i]);
  if (!shapeOk || c.data.length !== n) {
    const err = new CorruptDataError("stored data could not be decoded (a chunk holds the wrong number of values)");
    err.logFields = { detail: `decoded ${c.data.length} values of shape [${c.shape}], chunk shape [${chunkShape}]` };
    throw err;
  }
}

/** Name the store, stored key and chunk in the error's log line (never in the client's body). */
export function located(err: Error, backend: Backend, key: string, coords: number[]): Error {
  if (err instanceof GridcastError) {
    err.logFields = { store: backend.description, key, chunk: coords.join(","), ...err.logFields };
  }
  return err;
}

/**
 * The error a failed read becomes. `array` (the array's path in the store) and the kind of failure
 * are named in the message, so a client and an operator both learn which array is damaged and how.
 */
export function wrap(cause: unknown, array?: string): Error {
  if (cause instanceof GridcastError) return cause;
  const undecodable = (why: string) =>
    new CorruptDataError(`stored data could not be decoded${array ? ` (array ${array}: ${why})` : ""}`, {}, { cause });
  if (cause instanceof zarr.CodecPipelineError) return undecodable("its codec chain failed on a stored chunk");
  if (cause instanceof zarr.InvalidMetadataError) {
    return undecodable("its metadata names a data type or codec gridcast cannot read");
  }
  if (cause instanceof zarr.NotFoundError) return new StoreUnavailableError("array metadata is missing", {}, { cause });
  // What the decode met ("decoded 3 bytes, 180 expected", "byte length of Float32Array should be a
  // multiple of 4") is said to both; a message that could hold a path goes to the log line alone.
  const saying = (why: string, e: Error) => {
    const found = e.message.slice(0, FOUND_MAX_CHARS);
    const err = undecodable(/[\\/]/.test(found) ? why : `${why}: ${found}`);
    err.logFields = { detail: e.message };
    return err;
  };
  if (cause instanceof CodecInputError) return saying("a stored chunk does not decode with its codecs", cause);
  if (cause instanceof RangeError || cause instanceof TypeError) {
    return saying("its stored bytes do not match its metadata", cause);
  }
  return new StoreUnavailableError("the store cannot be read right now", {}, { cause });
}
