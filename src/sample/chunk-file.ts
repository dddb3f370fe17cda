// One chunk of the sample writer on disk: a single zstd frame (content size in the header, no
// checksum), its directory made once. Shared by the chunk worker and the writer's inline mode.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { constants, zstdCompressSync } from "node:zlib";

/** Compress `data` at `level` and write it to `file`; `made` remembers directories already made. */
export function writeChunkFile(file: string, data: Uint8Array, level: number, made: Set<string>): number {
  const packed = zstdCompressSync(data, {
    params: { [constants.ZSTD_c_compressionLevel]: level, [constants.ZSTD_c_checksumFlag]: 0 },
    pledgedSrcSize: data.byteLength,
  });
  const dir = dirname(file);
  if (!made.has(dir)) {
    mkdirSync(dir, { recursive: true });
    made.add(dir);
  }
  writeFileSync(file, packed);
  return packed.byteLength;
}
