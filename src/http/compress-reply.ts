// Route replies compressed on the fly (the catalog and the build's documents are compressed at
// build time instead): moderate levels, since a client waits; the result remembered by its coded
// ETag, which names the body and the coding, so a document asked for again (the OpenAPI
// description, a collection listing) is compressed once.
import { brotliCompressSync, gzipSync, constants as z } from "node:zlib";
import { BoundedMap } from "../bounded-map.ts";

export type DynamicCoding = "br" | "gzip";

const GZIP_LEVEL = 6;
const BROTLI_QUALITY = 5;
/** Compressed bodies remembered, by coded ETag; bounded, starting again empty once full. */
const MEMO_MAX = 64;
/** Bodies larger than this are compressed each time rather than remembered. */
const MEMO_BODY_MAX = 1024 * 1024;
const memo = new BoundedMap<string, Buffer>(MEMO_MAX);

export function compressDynamic(body: string | Buffer, coding: DynamicCoding, codedTag: string): Buffer {
  const known = memo.get(codedTag);
  if (known) return known;
  const out =
    coding === "gzip"
      ? gzipSync(body, { level: GZIP_LEVEL })
      : brotliCompressSync(body, { params: { [z.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } });
  if (out.length <= MEMO_BODY_MAX) memo.set(codedTag, out);
  return out;
}
