// Streams a body whose total size is known up front (a .npy, or a GeoTIFF with uncompressed
// strips): header first, then each slab as it is read. Content-Length lets clients detect a cut;
// a read error mid-body aborts the connection.
import type { IncomingMessage, ServerResponse } from "node:http";
import Type from "typebox";
import type { Delivery } from "./delivery.ts";
import { checkHeaderLines, fieldHeader } from "./header-budget.ts";

export const npyResponseHeaders = {
  "X-SVC-Field": {
    description:
      "JSON description of the array: name, stored name, dims, shape, dtype, units and coordinates of every axis",
    schema: Type.String(),
  },
  "Content-Disposition": { description: "Download file name", schema: Type.String() },
};

/** What a route hands over to be streamed. */
export interface NpyBody {
  header: Uint8Array;
  bytes: number;
  /** Described in X-SVC-Field (a .npy's array); none for a body that describes itself (GeoTIFF). */
  field?: Record<string, unknown>;
  /** Content-Type; application/octet-stream unless given. */
  type?: string;
  filename: string;
  /** Slabs of the body: float32 mostly; stored values in their own type for raw latents. */
  chunks: AsyncIterable<ArrayBufferView>;
  /** Called with each float32 slab once the connection has taken all of its bytes (see recycleSlab). */
  recycle?: (slab: Float32Array) => void;
  /** Response headers of the route's own (credits, for instance). */
  headers?: Record<string, string>;
}

export interface NpyStream extends NpyBody {
  signal: AbortSignal;
  /**
   * Runs once the first slab is read and before the headers are sent (the charge of a metered
   * route): a failure here is still a problem response; false means the client has gone.
   */
  beforeHead?: () => Promise<boolean>;
  /**
   * For a metered route: writes the body piece by piece and counts what the kernel took (see
   * delivery.ts). Created by beforeHead, so read it after that ran.
   */
  delivery?: () => Delivery | undefined;
}

export async function streamNpy(req: IncomingMessage, res: ServerResponse, s: NpyStream): Promise<void> {
  // Every header line within the budget, checked before any is set (a refusal is then a clean problem).
  const field = s.field ? fieldHeader(s.field) : undefined;
  if (s.headers) checkHeaderLines(s.headers);
  res.statusCode = 200;
  res.setHeader("Content-Type", s.type ?? "application/octet-stream");
  res.setHeader("Content-Length", s.bytes);
  res.setHeader("Content-Disposition", `attachment; filename="${s.filename.replace(/[^\w.~-]/g, "_")}"`);
  if (field !== undefined) res.setHeader("X-SVC-Field", field);
  res.setHeader("Cache-Control", "no-store");
  for (const [k, v] of Object.entries(s.headers ?? {})) res.setHeader(k, v);
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  const iter = s.chunks[Symbol.asyncIterator]();
  // Read the first slab before sending headers, so an early failure is still a problem response.
  let next: IteratorResult<ArrayBufferView>;
  try {
    next = await iter.next();
    if (s.beforeHead && !(await s.beforeHead())) {
      res.destroy();
      await iter.return?.();
      return;
    }
  } catch (e) {
    await iter.return?.();
    throw e;
  }
  const metered = s.delivery?.();
  try {
    if (metered) {
      if (!(await metered.write(s.header))) next = { done: true, value: undefined };
    } else res.write(s.header);
    while (!next.done) {
      if (s.signal.aborted || res.destroyed) break;
      const a = next.value;
      const recycle = a instanceof Float32Array ? s.recycle : undefined;
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      if (metered) {
        // Every piece of the slab completed: the connection holds no reference to it any more.
        if (!(await metered.write(bytes))) break;
        recycle?.(a as Float32Array);
      } else {
        // Only a write that completed hands the slab back; after an error it is left to the GC.
        const ok = recycle
          ? res.write(bytes, (err) => {
              if (!err) recycle(a as Float32Array);
            })
          : res.write(bytes);
        if (!ok && !(await drained(res, s.signal))) break;
      }
      next = await iter.next();
    }
  } catch (e) {
    // A read failed after the headers went out: cut the connection so the client sees a short body
    // against Content-Length, never a complete-looking file, and pass the error on to be logged
    // with the store and key it names.
    res.destroy();
    throw e;
  } finally {
    // Stop the reads behind the iterator (no-op when it finished).
    await iter.return?.();
  }
  if (s.signal.aborted || res.destroyed) res.destroy();
  else res.end();
}

/** Resolves true on drain, false when the client went away or the request was aborted first. */
function drained(res: ServerResponse, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted || res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      signal.removeEventListener("abort", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on("drain", onDrain);
    res.on("close", onClose);
    signal.addEventListener("abort", onClose, { once: true });
  });
}
