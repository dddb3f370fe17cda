// A .npy export whose store fails after the headers went out must not look complete: the body
// is cut short of its Content-Length and the connection is closed, so curl, fetch and numpy all
// see a truncated download instead of a short array or zeros. A decoded chunk of the wrong size
// is refused (500 corrupt-data) with the store and key in the log.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ZarrWriter } from "../../src/sample/zarr-writer.ts";
import {
  cleanup,
  get,
  getToEnd,
  PYTHON,
  sampleStore,
  type TestServer,
  tempDir,
  testServer,
} from "../helpers/harness.ts";
import { listen, rangeServer } from "../helpers/static-server.ts";

let storeDir: string;
let upstream: Server;
let srv: TestServer;
let key: string;
let failAfter = Number.POSITIVE_INFINITY;
let reads: { reset: () => void; count: () => number };
let perLead = 0;
const scratch = tempDir();

before(async () => {
  storeDir = await sampleStore();
  const files = rangeServer(storeDir, () => "none");
  let chunkReads = 0;
  // In front of the file server: chunk reads of t2m start failing once `failAfter` have been served.
  const { createServer } = await import("node:http");
  upstream = createServer((req, res) => {
    if (req.method === "GET" && /\/t2m\/c\//.test(req.url ?? "") && ++chunkReads > failAfter) {
      res.statusCode = 500;
      res.end("backend exploded");
      return;
    }
    files.emit("request", req, res);
  });
  // No decoded-chunk cache, no scans and slabs of one lead: every lead of an export reads its
  // chunk again, and the second lead is read after the headers went out. (A scan reads each chunk
  // once; its failures mid-body are tested in test/store/scan.test.ts.)
  srv = await testServer(await listen(upstream), { chunk_cache_mb: 0, read_slab_mb: 0, scan_hold_mb: 0 });
  key = await srv.key(["weather"]);
  failAfter = Number.POSITIVE_INFINITY;
  chunkReads = 0;
  reads = {
    reset: () => {
      chunkReads = 0;
    },
    count: () => chunkReads,
  };
});
after(async () => {
  await srv.close();
  upstream.closeAllConnections();
  upstream.close();
  cleanup(storeDir, scratch);
});

const Q = "var=t2m&time_index=0&lead_start=0&lead_stop=6&lat_min=-40&lat_max=40&lon_min=60&lon_max=200";

describe("an export cut mid-body", () => {
  test("the whole export arrives when the store holds up", async () => {
    reads.reset();
    const r = await getToEnd(`${srv.url}/api/export/forecast~global/npy?${Q}`, { "X-API-Key": key });
    assert.equal(r.status, 200);
    assert.equal(r.ended, "complete");
    assert.equal(r.got.length, r.declared);
    // 7 leads, each reading the same chunks again (no cache).
    assert.equal(reads.count() % 7, 0, `${reads.count()} chunk reads`);
    perLead = reads.count() / 7;
    assert.ok(perLead >= 1);
  });

  test("a store failure after the first lead: fewer bytes than Content-Length, connection cut, numpy refuses", async () => {
    if (perLead === 0) {
      reads.reset();
      await getToEnd(`${srv.url}/api/export/forecast~global/npy?${Q}`, { "X-API-Key": key });
      perLead = reads.count() / 7;
    }
    reads.reset();
    failAfter = perLead; // the first lead's chunks are read; the second lead's reads fail
    try {
      const t0 = performance.now();
      const r = await getToEnd(`${srv.url}/api/export/forecast~global/npy?${Q}`, { "X-API-Key": key });
      // Closed at once, not left for a timeout to end (a generous bound: the failure is immediate).
      assert.ok(performance.now() - t0 < 5000, "a cut body left the client waiting");
      assert.equal(r.status, 200, "headers went out with the first lead");
      assert.equal(r.ended, "cut");
      assert.ok(r.got.length < r.declared, `${r.got.length} of ${r.declared} bytes and no sign of a cut`);
      const file = join(scratch, "cut.npy");
      require_write(file, r.got);
      assert.throws(
        () => execFileSync(PYTHON, ["-c", `import numpy as np; np.load(${JSON.stringify(file)})`], { stdio: "pipe" }),
        /Error/,
      );
      // fetch, as a JavaScript client would: the body promise rejects. The cut request's reads
      // still in flight are let finish first: a new request for the same chunk would share one
      // of them instead of reading (and counting) its own.
      await quiet();
      reads.reset();
      await assert.rejects(
        fetch(`${srv.url}/api/export/forecast~global/npy?${Q}`, { headers: { "X-API-Key": key } }).then((x) =>
          x.arrayBuffer(),
        ),
      );
    } finally {
      failAfter = Number.POSITIVE_INFINITY;
    }
  });
});

/** Until no chunk read has been made for 200 ms. */
async function quiet(): Promise<void> {
  for (let seen = -1; seen !== reads.count(); ) {
    seen = reads.count();
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

function require_write(file: string, bytes: Buffer): void {
  execFileSync(PYTHON, ["-c", "import sys; open(sys.argv[1],'wb').write(sys.stdin.buffer.read())", file], {
    input: bytes,
  });
}

describe("decoded chunks of the wrong size", () => {
  test("a valid zstd frame holding half a chunk: 500 corrupt-data, store and key logged, not in the body", async () => {
    const dir = await sampleStore();
    const local = await testServer(dir);
    try {
      const k = await local.key(["weather"]);
      const chunk = "forecast/global/msl/c/0/0/0/0";
      const good = readFileSync(join(dir, chunk));
      const w = new ZarrWriter(dir);
      await w.writeCompressed(chunk, new Float32Array((7 * 90 * 90) / 2).fill(101_325));
      await w.close();
      assert.ok(!readFileSync(join(dir, chunk)).equals(good));
      const before = local.logs.length;
      const r = await get(`${local.url}/point?lat=80&lon=10&var=msl&run=0&group=forecast/global`, { "X-API-Key": k });
      assert.equal(r.status, 500, r.body.toString());
      assert.equal(r.json().type, "/problems/corrupt-data");
      assert.ok(!r.body.toString().includes("msl/c"), r.body.toString());
      const line = local.logs.slice(before).find((l) => l.level === "error");
      assert.ok(line);
      assert.equal(line.key, chunk);
      assert.match(String(line.store), /^directory store \//);
      assert.match(String(line.detail), /28350 values/);
    } finally {
      await local.close();
      cleanup(dir);
    }
  });
});
