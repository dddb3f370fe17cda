// A small Zarr writer for the synthetic store, v3 and v2, uncompressed little-endian bytes through
// zstd. Metadata follows what zarr-python and xarray write (dimension names, CF attributes,
// consolidated metadata), so every reader of real stores can read these too. Output bytes depend
// only on the inputs: JSON keys keep insertion order and each chunk is one zstd frame.
//
// Chunks go to a worker thread (chunk-queue.ts) that compresses and writes them while the caller
// computes the next ones; metadata documents are small and written here, synchronously.
import { mkdirSync, writeFileSync } from "node:fs";
import { endianness } from "node:os";
import { dirname, join } from "node:path";
import { strides } from "../store/region.ts";
import { writeChunkFile } from "./chunk-file.ts";
import { ChunkQueue } from "./chunk-queue.ts";

export type DType = "float32" | "float64" | "int16" | "int32" | "int64";
export type Format = 2 | 3;
export type Json = Record<string, unknown>;
/** "NaN" for a float NaN (JSON has no NaN); null only for v2 arrays without a fill value. */
export type Fill = number | "NaN" | null;
export type TypedArr = Float32Array | Float64Array | Int16Array | Int32Array | BigInt64Array;

export interface ArraySpec {
  shape: number[];
  chunks: number[];
  dtype: DType;
  dims: string[];
  fill: Fill;
  attrs?: Json;
}

const V2_DTYPE: Record<DType, string> = { float32: "<f4", float64: "<f8", int16: "<i2", int32: "<i4", int64: "<i8" };
const CTOR = {
  float32: Float32Array,
  float64: Float64Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
};

export interface WriterOptions {
  /**
   * Compress and write chunks on the calling thread rather than on a chunk worker: for a writer
   * that already runs on a worker thread of its own (part-worker.ts), one of several in parallel.
   */
  inline?: boolean;
  /**
   * false: write chunks only, no metadata documents (they are still recorded for consolidation).
   * A part of a group whose metadata another part writes.
   */
  metadata?: boolean;
}

export class ZarrWriter {
  readonly root: string;
  readonly level: number;
  readonly metadata: boolean;
  #json = { files: 0, bytes: 0 };
  #inline: { files: number; bytes: number } | undefined;
  #dirs = new Set<string>();
  #chunks: ChunkQueue;
  /** Every v3 node written so far (path → document), for the root's consolidated metadata. */
  #v3Nodes = new Map<string, Json>();

  constructor(root: string, level = 3, opts: WriterOptions = {}) {
    // Chunks are written as the platform lays them out; Zarr here is little endian.
    if (endianness() !== "LE") throw new Error("the sample writer needs a little-endian platform");
    this.root = root;
    this.level = level;
    this.metadata = opts.metadata ?? true;
    this.#inline = opts.inline ? { files: 0, bytes: 0 } : undefined;
    this.#chunks = new ChunkQueue(level);
  }

  /** Files and bytes written so far (chunks count once the worker has written them). */
  get files(): number {
    return this.#json.files + this.#chunks.files + (this.#inline?.files ?? 0);
  }

  get bytes(): number {
    return this.#json.bytes + this.#chunks.bytes + (this.#inline?.bytes ?? 0);
  }

  /** The v3 nodes recorded so far, for a writer that consolidates the root (adoptV3). */
  v3Nodes(): [string, Json][] {
    return [...this.#v3Nodes];
  }

  /** Take over v3 nodes another writer (a part on another thread) recorded, and its counts. */
  adopt(nodes: [string, Json][], files: number, bytes: number): void {
    for (const [path, doc] of nodes) this.#v3Nodes.set(path, doc);
    this.#json.files += files;
    this.#json.bytes += bytes;
  }

  writeJson(key: string, doc: unknown, compact = false): void {
    if (!this.metadata) return;
    const file = join(this.root, key);
    const dir = dirname(file);
    if (!this.#dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.#dirs.add(dir);
    }
    const bytes = new TextEncoder().encode(`${JSON.stringify(doc, null, compact ? undefined : 2)}\n`);
    writeFileSync(file, bytes);
    this.#json.files++;
    this.#json.bytes += bytes.byteLength;
  }

  /** Queue one chunk; resolves once there is room for another. `data` must not change afterwards. */
  writeCompressed(key: string, data: TypedArr): Promise<void> {
    const file = join(this.root, key);
    if (this.#inline) {
      this.#inline.bytes += writeChunkFile(
        file,
        new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
        this.level,
        this.#dirs,
      );
      this.#inline.files++;
      return Promise.resolve();
    }
    return this.#chunks.write(file, data);
  }

  /** Wait for every queued chunk; throws the first write error. */
  flush(): Promise<void> {
    return this.#chunks.flush();
  }

  /** Wait for queued chunks and stop the chunk worker. */
  close(): Promise<void> {
    return this.#chunks.close();
  }

  /** Remember a v3 node's document for the root's consolidated metadata. */
  recordV3(path: string, doc: Json): void {
    this.#v3Nodes.set(path, doc);
  }

  /**
   * The root group, written last with every v3 node below it inlined (as zarr-python's
   * consolidate_metadata does), so a store on plain HTTP object storage can be discovered
   * without listing. v2 nodes cannot be described there and are left out.
   */
  rootGroup(attrs: Json): void {
    const metadata: Json = {};
    for (const path of [...this.#v3Nodes.keys()].sort(byCodeUnit)) metadata[path] = this.#v3Nodes.get(path);
    const doc = {
      zarr_format: 3,
      node_type: "group",
      attributes: attrs,
      consolidated_metadata: { kind: "inline", must_understand: false, metadata },
    };
    // Compact: this one document describes the whole hierarchy and is read at every open.
    this.writeJson("zarr.json", doc, true);
  }

  /** A group whose metadata is written at once (no consolidated metadata). */
  plainGroup(path: string, format: Format, attrs: Json = {}): void {
    new GroupNode(this, path, format, attrs, false).close();
  }

  /** A group that collects its arrays and writes consolidated metadata on close(). */
  group(path: string, format: Format, attrs: Json = {}, consolidated = true): GroupNode {
    return new GroupNode(this, path, format, attrs, consolidated);
  }
}

export class GroupNode {
  readonly writer: ZarrWriter;
  readonly path: string;
  readonly format: Format;
  readonly attrs: Json;
  readonly consolidated: boolean;
  readonly #children: ArrayNode[] = [];

  constructor(writer: ZarrWriter, path: string, format: Format, attrs: Json, consolidated: boolean) {
    this.writer = writer;
    this.path = path;
    this.format = format;
    this.attrs = attrs;
    this.consolidated = consolidated;
  }

  array(name: string, spec: ArraySpec): ArrayNode {
    const a = new ArrayNode(this.writer, this.path ? `${this.path}/${name}` : name, this.format, spec);
    this.#children.push(a);
    return a;
  }

  /** Write the group's own metadata, consolidating its arrays' metadata when asked. */
  close(): void {
    const key = (f: string) => (this.path ? `${this.path}/${f}` : f);
    if (this.format === 3) {
      const doc: Json = { zarr_format: 3, node_type: "group", attributes: this.attrs };
      if (this.consolidated) {
        const metadata: Json = {};
        for (const c of [...this.#children].sort((a, b) => byCodeUnit(a.name, b.name))) metadata[c.name] = c.doc;
        doc.consolidated_metadata = { kind: "inline", must_understand: false, metadata };
      }
      this.writer.writeJson(key("zarr.json"), doc);
      this.writer.recordV3(this.path, {
        zarr_format: 3,
        node_type: "group",
        attributes: this.attrs,
        consolidated_metadata: null,
      });
      return;
    }
    this.writer.writeJson(key(".zgroup"), { zarr_format: 2 });
    this.writer.writeJson(key(".zattrs"), this.attrs);
    if (this.consolidated) {
      const metadata: Json = { ".zattrs": this.attrs, ".zgroup": { zarr_format: 2 } };
      for (const c of [...this.#children].sort((a, b) => byCodeUnit(a.name, b.name))) {
        metadata[`${c.name}/.zarray`] = c.doc;
        metadata[`${c.name}/.zattrs`] = c.v2Attrs;
      }
      this.writer.writeJson(key(".zmetadata"), { metadata, zarr_consolidated_format: 1 });
    }
  }
}

export class ArrayNode {
  readonly writer: ZarrWriter;
  readonly path: string;
  readonly name: string;
  readonly format: Format;
  readonly spec: ArraySpec;
  /** zarr.json (v3) or .zarray (v2) document. */
  readonly doc: Json;
  readonly v2Attrs: Json;

  constructor(writer: ZarrWriter, path: string, format: Format, spec: ArraySpec) {
    if (spec.shape.length !== spec.chunks.length || spec.shape.length !== spec.dims.length) {
      throw new Error(`array ${path}: shape, chunks and dims differ in length`);
    }
    this.writer = writer;
    this.path = path;
    this.name = path.slice(path.lastIndexOf("/") + 1);
    this.format = format;
    this.spec = spec;
    const attrs = spec.attrs ?? {};
    this.v2Attrs = { ...attrs, _ARRAY_DIMENSIONS: spec.dims };
    if (format === 3) {
      this.doc = {
        zarr_format: 3,
        node_type: "array",
        shape: spec.shape,
        data_type: spec.dtype,
        chunk_grid: { name: "regular", configuration: { chunk_shape: spec.chunks } },
        chunk_key_encoding: { name: "default", configuration: { separator: "/" } },
        fill_value: spec.fill ?? 0,
        codecs: [
          { name: "bytes", configuration: { endian: "little" } },
          { name: "zstd", configuration: { level: writer.level, checksum: false } },
        ],
        attributes: attrs,
        dimension_names: spec.dims,
        storage_transformers: [],
      };
      writer.writeJson(`${path}/zarr.json`, this.doc);
      writer.recordV3(path, this.doc);
    } else {
      this.doc = {
        zarr_format: 2,
        shape: spec.shape,
        chunks: spec.chunks,
        dtype: V2_DTYPE[spec.dtype],
        compressor: { id: "zstd", level: writer.level },
        fill_value: spec.fill,
        order: "C",
        filters: null,
        dimension_separator: ".",
      };
      writer.writeJson(`${path}/.zarray`, this.doc);
      writer.writeJson(`${path}/.zattrs`, this.v2Attrs);
    }
  }

  /** A full-size chunk buffer pre-filled with the fill value (edge chunks are stored padded). */
  chunkBuffer(): TypedArr {
    const n = this.spec.chunks.reduce((a, b) => a * b, 1);
    const buf = new CTOR[this.spec.dtype](n);
    const f = this.spec.fill;
    if (buf instanceof BigInt64Array) buf.fill(BigInt(typeof f === "number" ? f : 0));
    else buf.fill(f === "NaN" ? Number.NaN : (f ?? 0));
    return buf;
  }

  writeChunk(coords: number[], data: TypedArr): Promise<void> {
    const n = this.spec.chunks.reduce((a, b) => a * b, 1);
    if (data.length !== n || !(data instanceof CTOR[this.spec.dtype])) {
      throw new Error(`array ${this.path}: chunk must be a ${this.spec.dtype} array of ${n} values`);
    }
    const key = this.format === 3 ? `${this.path}/c/${coords.join("/")}` : `${this.path}/${coords.join(".")}`;
    return this.writer.writeCompressed(key, data);
  }

  /** Write a whole (small) array given in C order, cutting it into padded chunks. */
  async writeAll(data: TypedArr): Promise<void> {
    const { shape, chunks } = this.spec;
    const nd = shape.length;
    const grid = shape.map((s, d) => Math.ceil(s / chunks[d]));
    const total = grid.reduce((a, b) => a * b, 1);
    const sStride = strides(shape);
    const cStride = strides(chunks);
    for (let flat = 0; flat < total; flat++) {
      const cc = unravel(flat, grid);
      const buf = this.chunkBuffer();
      const lo = cc.map((c, d) => c * chunks[d]);
      const ext = lo.map((l, d) => Math.min(chunks[d], shape[d] - l));
      // Copy contiguous runs along the last dimension.
      const outer = ext.slice(0, nd - 1);
      const runs = outer.reduce((a, b) => a * b, 1);
      for (let r = 0; r < runs; r++) {
        const idx = unravel(r, outer);
        let src = lo[nd - 1];
        let dst = 0;
        for (let d = 0; d < nd - 1; d++) {
          src += (lo[d] + idx[d]) * sStride[d];
          dst += idx[d] * cStride[d];
        }
        (buf as Float64Array).set((data as Float64Array).subarray(src, src + ext[nd - 1]), dst);
      }
      await this.writeChunk(cc, buf);
    }
  }
}

/** Plain code-unit order: the same on every machine, unlike locale-aware comparison. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function unravel(flat: number, shape: number[]): number[] {
  const out = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = flat % shape[d];
    flat = Math.floor(flat / shape[d]);
  }
  return out;
}
