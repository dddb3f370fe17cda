// A static file server for HTTP store tests that honours Range (206 with an exact Content-Range),
// or misbehaves on it in one of the ways real servers and proxies do.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";

export type Lie = "none" | "wrong-range" | "short-body" | "ignore-range-truncated" | "flaky";

/** A static server that honours Range, or misbehaves on it in the way `mode()` says. */
export function rangeServer(dir: string, mode: () => Lie): Server {
  const failed = new Set<string>();
  return createServer((req, res) => {
    if (mode() === "flaky" && !failed.has(`${req.method} ${req.url} ${req.headers.range}`)) {
      // Every distinct request fails once with 503, as an object store shedding load does.
      failed.add(`${req.method} ${req.url} ${req.headers.range}`);
      res.statusCode = 503;
      res.end("slow down");
      return;
    }
    const rel = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "");
    let body: Buffer;
    try {
      body = readFileSync(join(dir, rel));
    } catch {
      res.statusCode = 404;
      res.end();
      return;
    }
    const lie = mode();
    const m = /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? ""));
    if (!m) {
      res.setHeader("Content-Length", body.length);
      res.end(body);
      return;
    }
    let start = m[1] === "" ? body.length - Number(m[2]) : Number(m[1]);
    const end = m[1] === "" ? body.length - 1 : Number(m[2]);
    if (lie === "ignore-range-truncated") {
      // Ignores Range and serves a file that lost its tail (the shard index): 200, whole body.
      const cut = body.subarray(0, Math.max(0, end - 8));
      res.setHeader("Content-Length", cut.length);
      res.end(cut);
      return;
    }
    if (lie === "wrong-range") start = Math.max(0, start - 16); // a proxy that rounded the range
    const part = body.subarray(start, end + 1);
    res.statusCode = 206;
    res.setHeader("Content-Range", `bytes ${start}-${end}/${body.length}`);
    if (lie === "short-body") {
      // Chunked, so the framing looks complete: the Content-Range promises more than the body holds.
      res.end(part.subarray(0, part.length >> 1));
      return;
    }
    res.setHeader("Content-Length", part.length);
    res.end(part);
  });
}

/** Listen on a free loopback port; resolves with the base URL (trailing slash). */
export function listen(s: Server): Promise<string> {
  return new Promise((ok) =>
    s.listen(0, "127.0.0.1", () => ok(`http://127.0.0.1:${(s.address() as { port: number }).port}/`)),
  );
}
