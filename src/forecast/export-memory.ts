// The memory exports may hold at once, beside the chunk cache: the figure the README states, the
// deploy's pod limit is sized for, and test/http/export-memory.test.ts holds a real server to.
import { SLAB_POOL_BYTES } from "../read-ahead.ts";
import { POOL_BYTES as DECODE_POOL_BYTES } from "../store/scan-buffers.ts";

const MIB = 1024 * 1024;

/**
 * What exports (and latent slices) may add to the server's memory beside the chunk cache, with
 * `concurrent` of them in flight (max_heavy_requests at most): two slabs each (the one being sent
 * and the one being read; a lead larger than a slab goes in bands of rows), the free slabs kept,
 * the decoded chunks scans hold (scan_hold_mb) and the free decode buffers kept. In bytes.
 */
export function exportMemoryBound(s: { read_slab_mb: number; scan_hold_mb: number }, concurrent: number): number {
  return concurrent * 2 * s.read_slab_mb * MIB + SLAB_POOL_BYTES + s.scan_hold_mb * MIB + DECODE_POOL_BYTES;
}
