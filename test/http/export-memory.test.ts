// Exports are bounded in memory by construction: a real `gridcast serve` process answers 24
// concurrent whole-globe exports (13 MB each, leads of 6.5 MB against 1 MiB slabs) to clients that
// read slowly, first as .npy then as GeoTIFF, and its peak resident set (VmHWM from /proc) grows
// by no more than the README's bound for 24 exports: two slabs each, the free slabs kept, the
// scans' hold and the decode-buffer pool, and the chunk cache. A GeoTIFF built whole in memory
// (24 × 13 MB of bands) or a lead held whole in a slab (24 × 2 × 6.5 MB) exceeds it.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { DEFAULTS } from "../../src/config.ts";
import { exportMemoryBound } from "../../src/forecast/export-memory.ts";
import { DIRECTORY_CACHE_BYTES } from "../../src/published/archive-reader.ts";
import { STATIC_CACHE_BYTES } from "../../src/published/static-cache.ts";
import { BIG_EXPORT, bigStore } from "../helpers/big-store.ts";
import { docsText } from "../helpers/docs.ts";
import { cleanup, tempDir } from "../helpers/harness.ts";
import { procMib, resetPeak, type ServeProcess, serveProcess, slowGet } from "../helpers/serve-process.ts";

const CONCURRENT = 24;
const MIB = 1024 * 1024;
const SETTINGS = { read_slab_mb: 1, scan_hold_mb: 16, chunk_cache_mb: 16 };
/** The export's bytes: the whole globe at 0.2°, two leads. */
const EXPORT_BYTES = 2 * 901 * 1800 * 4;

let storeDir: string;
let work: string;
let srv: ServeProcess | undefined;

before(async () => {
  storeDir = await bigStore();
  work = tempDir("gridcast-export-memory-");
});
after(async () => {
  await srv?.close();
  cleanup(storeDir, work);
});

for (const format of ["npy", "tiff"]) {
  test(`${CONCURRENT} concurrent whole-globe ${format} exports to slow readers stay within the stated bound`, async () => {
    // A server of its own for each format: memory paged in by one run would hide the other's.
    await srv?.close();
    const dir = join(work, format);
    mkdirSync(dir);
    srv = await serveProcess(storeDir, dir, {
      GRIDCAST_READ_SLAB_MB: String(SETTINGS.read_slab_mb),
      GRIDCAST_SCAN_HOLD_MB: String(SETTINGS.scan_hold_mb),
      GRIDCAST_CHUNK_CACHE_MB: String(SETTINGS.chunk_cache_mb),
    });
    const url = `${srv.url}${BIG_EXPORT.replace("/npy?", `/${format}?`)}`;
    const headers = { "X-API-Key": srv.key };
    // One export first: modules, the store's metadata and the chunk cache are warm, as in service.
    const one = await slowGet(url, headers, 0);
    assert.equal(one.status, 200);
    const baseline = procMib(srv.pid, "VmRSS");
    resetPeak(srv.pid);
    const reads = await Promise.all(Array.from({ length: CONCURRENT }, () => slowGet(url, headers, 1)));
    const peak = procMib(srv.pid, "VmHWM");
    for (const r of reads) {
      assert.equal(r.status, 200);
      assert.equal(r.bytes, r.declared);
      assert.ok(r.bytes >= EXPORT_BYTES, `${r.bytes} bytes`);
    }
    const bound = (exportMemoryBound(SETTINGS, CONCURRENT) + SETTINGS.chunk_cache_mb * MIB) / MIB;
    const growth = peak - baseline;
    process.stderr.write(`${format}: baseline ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)}, bound ${bound}\n`);
    assert.ok(growth <= bound, `${format}: grew ${growth.toFixed(0)} MiB, bound ${bound.toFixed(0)} MiB`);
  });
}

test("the README's figure for exports is the code's, and the deploy's pod limit holds the whole sum", () => {
  const root = resolve(import.meta.dirname, "../..");
  const exports = exportMemoryBound(DEFAULTS, DEFAULTS.max_heavy_requests) / MIB;
  assert.equal(exports, 480);
  const readme = docsText().replace(/\s+/g, " ");
  assert.match(readme, /\+ 64 MiB however large and however many they are: 480 MiB at the defaults/);
  // The process itself (about 150 MB here), the chunk cache, the static caches, the archive
  // directories and the exports' bound, with room to spare, under the pod's limit.
  const total = 150 + DEFAULTS.chunk_cache_mb + (2 * STATIC_CACHE_BYTES + DIRECTORY_CACHE_BYTES) / MIB + exports;
  const yaml = readFileSync(join(root, "deploy/k8s/serve.yaml"), "utf8");
  const limit = Number(/limits:\s*\n\s*memory: (\d+)Mi/.exec(yaml)?.[1]);
  assert.ok(total * 1.25 <= limit, `${total} MiB at most, the pod's limit ${limit}Mi`);
});
