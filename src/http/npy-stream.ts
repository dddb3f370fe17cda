// Streams a .npy body whose total size is known up front: header first, then each slab as it is
// read. Content-Length lets clients detect a cut; a read error mid-body aborts the connection.
import type { IncomingMessage, ServerResponse } from "node:http";
import Type from "typebox";

export const npyResponseHeaders = {
  "X-SVC-Field": {
    description:
      "JSON description of the array: name, stored name, dims, shape, dtype, units and coordinates of every axis",
    schema: Type.String(),
  },
  "Content-Disposition": { description: "Download file name", schema: Type.String() },
};

export interface NpyStream {
  header: Uint8Array;
  bytes: number;
  field: Record<string, unknown>;
  filename: string;
  chunks: AsyncIterable<Float32Array>;
  signal: AbortSignal;
}

export async function streamNpy(req: IncomingMessage, res: ServerResponse, s: NpyStream): Promise<void> {
  res.statusCode = 200;
  res.setHeader("Content-Type", "application/octet-stream");
  res.setHeader("Content-Length", s.bytes);
  res.setHeader("Content-Disposition", `attachment; filename="${s.filename.replace(/[^\w.~-]/g, "_")}"`);
  res.setHeader("X-SVC-Field", JSON.stringify(s.field));
  res.setHeader("Cache-Control", "no-store");
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  const iter = s.chunks[Symbol.asyncIterator]();
  // Read the first slab before sending headers, so an early failure is still a problem response.
  let first = await iter.next();
  res.write(s.header);
  try {
    while (!first.done) {
      if (s.signal.aborted) break;
      const a = first.value;
      const ok = res.write(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      if (!ok) await new Promise((r) => res.once("drain", r));
      first = await iter.next();
    }
    res.end();
  } catch {
    res.destroy();
  }
}
