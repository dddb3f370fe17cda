// Zarr metadata documents, v2 and v3, read directly or from consolidated metadata. This is the
// one description of a node that both the readers (through zarrita) and the /data publisher use.
import { CorruptDataError } from "../errors.ts";
import type { Backend } from "./backend.ts";

export type Json = Record<string, unknown>;

export interface ArrayMeta {
  shape: number[];
  chunks: number[];
  /** Normalised data type name: float32, int16, int64, ... */
  dtype: string;
  fill_value: unknown;
  dimension_names: string[] | undefined;
  /** v3 codec chain (for v2 arrays, the equivalent chain built from compressor and filters). */
  codecs: Json[];
  /**
   * Why this array cannot be read (zero or negative sizes, a chunk shape with a 0, absurd sizes);
   * undefined when its shape and chunks are sound. Kept rather than thrown, so one bad array in
   * consolidated metadata fails only the group holding it.
   */
  problem?: string;
}

/** Largest chunk gridcast decodes (elements): far above any producer's, far below memory limits. */
export const MAX_CHUNK_ELEMENTS = 2 ** 27;
const MAX_DIM = 2 ** 40;

/** Why a shape/chunk pair is unusable, or undefined when it is sound. */
export function shapeProblem(shape: unknown, chunks: unknown): string | undefined {
  if (!Array.isArray(shape) || !shape.every((n) => Number.isSafeInteger(n))) return "shape is not a list of integers";
  if (!Array.isArray(chunks) || !chunks.every((n) => Number.isSafeInteger(n))) {
    return "chunk shape is not a list of integers";
  }
  if (chunks.length !== shape.length) return `chunk shape has ${chunks.length} dimensions, shape ${shape.length}`;
  if (shape.some((n) => n <= 0)) return `shape [${shape.join(", ")}] has a zero or negative size`;
  if (shape.some((n) => n > MAX_DIM)) return `shape [${shape.join(", ")}] is absurdly large`;
  if (chunks.some((n) => n <= 0)) return `chunk shape [${chunks.join(", ")}] has a zero or negative size`;
  const elements = chunks.reduce((a: number, b: number) => a * b, 1);
  if (elements > MAX_CHUNK_ELEMENTS)
    return `chunk shape [${chunks.join(", ")}] holds ${elements} values, above the limit`;
  return undefined;
}

export interface NodeMeta {
  kind: "group" | "array";
  format: 2 | 3;
  /** Path relative to the store root without leading or trailing "/" ("" is the root). */
  path: string;
  attrs: Json;
  array?: ArrayMeta;
  /** The stored documents, byte for byte meaning: zarr.json, or .zarray/.zgroup and .zattrs. */
  raw: Record<string, Json>;
}

const decoder = new TextDecoder();

function parse(bytes: Uint8Array, what: string): Json {
  try {
    // Bare NaN (invalid JSON some writers emit) becomes the spec's "NaN"; quoted "NaN" stays as it is.
    const v = JSON.parse(decoder.decode(bytes).replace(/(?<!")\bNaN\b(?!")/g, '"NaN"'));
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
    return v as Json;
  } catch (cause) {
    throw new CorruptDataError(`invalid Zarr metadata (${what})`, {}, { cause });
  }
}

const V2_DTYPES: Record<string, string> = {
  "|b1": "bool",
  "|i1": "int8",
  "|u1": "uint8",
  i2: "int16",
  i4: "int32",
  i8: "int64",
  u2: "uint16",
  u4: "uint32",
  u8: "uint64",
  f2: "float16",
  f4: "float32",
  f8: "float64",
};

export function v2DtypeName(dtype: string): string {
  if (dtype.startsWith("|")) return V2_DTYPES[dtype] ?? dtype;
  return V2_DTYPES[dtype.slice(1)] ?? dtype;
}

function v2Codecs(z: Json): Json[] {
  const codecs: Json[] = [];
  const filters = (z.filters as Json[] | null) ?? [];
  for (const f of filters) codecs.push({ name: `numcodecs.${f.id}`, configuration: { ...f } });
  const dtype = String(z.dtype);
  codecs.push({ name: "bytes", configuration: { endian: dtype.startsWith(">") ? "big" : "little" } });
  const c = z.compressor as Json | null;
  if (c) codecs.push({ name: String(c.id), configuration: { ...c } });
  return codecs;
}

/**
 * A v3 array of zarr's numpy.datetime64 / numpy.timedelta64 extension data types (Earth2Studio
 * and other zarr-python 3 writers that skip xarray's CF encoding): int64 counts of `unit` ×
 * `scale_factor`, read as int64 with the CF units that say so, the document zarrita opens
 * rewritten the same way. A unit gridcast cannot turn into a fixed duration (months, years)
 * leaves the type as it is, and the array is refused with its name.
 */
function v3DatetimeAsInt64(doc: Json): { doc: Json; problem?: string } {
  const dt = doc.data_type as { name?: unknown; configuration?: { unit?: unknown; scale_factor?: unknown } } | unknown;
  if (typeof dt !== "object" || dt === null) return { doc };
  const { name, configuration } = dt as { name?: unknown; configuration?: { unit?: unknown; scale_factor?: unknown } };
  if (name !== "numpy.datetime64" && name !== "numpy.timedelta64") return { doc };
  const unit = NUMPY_UNITS[String(configuration?.unit)];
  const scale = configuration?.scale_factor ?? 1;
  if (!unit || typeof scale !== "number" || !Number.isSafeInteger(scale) || scale < 1) {
    return {
      doc,
      problem: `${name} unit ${JSON.stringify(configuration?.unit)} × ${JSON.stringify(scale)} is not a fixed duration gridcast reads`,
    };
  }
  const tick = scale === 1 ? unit : `${scale} ${unit}`;
  const attrs = (doc.attributes as Json) ?? {};
  const units = name === "numpy.datetime64" ? `${tick} since 1970-01-01` : tick;
  return {
    doc: {
      ...doc,
      data_type: "int64",
      attributes: typeof attrs.units === "string" ? attrs : { ...attrs, units },
    },
  };
}

function fromV3(path: string, stored: Json): NodeMeta {
  const { doc, problem: typeProblem } =
    stored.node_type === "array" ? v3DatetimeAsInt64(stored) : { doc: stored, problem: undefined };
  const attrs = (doc.attributes as Json) ?? {};
  if (doc.node_type === "group") return { kind: "group", format: 3, path, attrs, raw: { "zarr.json": doc } };
  if (doc.node_type !== "array") throw new CorruptDataError("zarr.json without a valid node_type");
  const grid = doc.chunk_grid as { configuration?: { chunk_shape?: number[] } } | undefined;
  const codecs = (doc.codecs as Json[]) ?? [];
  // A sharded array's readable chunk is the shard's inner chunk; the stored object is the shard.
  const sharding = codecs.find((c) => c.name === "sharding_indexed")?.configuration as
    | { chunk_shape?: number[] }
    | undefined;
  const chunks = sharding?.chunk_shape ?? grid?.configuration?.chunk_shape ?? [];
  return {
    kind: "array",
    format: 3,
    path,
    attrs,
    raw: { "zarr.json": doc },
    array: {
      shape: doc.shape as number[],
      chunks,
      dtype: String(doc.data_type),
      fill_value: doc.fill_value,
      dimension_names: (doc.dimension_names as string[] | undefined) ?? undefined,
      codecs,
      problem:
        typeProblem ??
        shapeProblem(doc.shape, chunks) ??
        (sharding && grid?.configuration?.chunk_shape?.some((n) => !(Number.isSafeInteger(n) && n > 0))
          ? "shard shape has a zero or negative size"
          : undefined),
    },
  };
}

const NUMPY_UNITS: Record<string, string> = {
  ns: "nanoseconds",
  us: "microseconds",
  ms: "milliseconds",
  s: "seconds",
  m: "minutes",
  h: "hours",
  D: "days",
};

/**
 * A v2 array of numpy datetime64/timedelta64 (written by zarr itself, without xarray's CF encoding)
 * holds int64 counts of its unit: read it as int64 with the CF units that say so. zarrita has no
 * datetime types, so the document zarrita opens is rewritten the same way.
 */
function datetimeAsInt64(zarray: Json, attrs: Json): { zarray: Json; attrs: Json } {
  const m = /^([<>|]?)([Mm])8\[(\w+)\]$/.exec(String(zarray.dtype));
  const unit = m ? NUMPY_UNITS[m[3]] : undefined;
  if (!m || !unit) return { zarray, attrs };
  const units = m[2] === "M" ? `${unit} since 1970-01-01` : unit;
  return {
    zarray: { ...zarray, dtype: `${m[1] === ">" ? ">" : "<"}i8`, fill_value: null },
    attrs: typeof attrs.units === "string" ? attrs : { ...attrs, units },
  };
}

function fromV2(
  path: string,
  zarrayDoc: Json | undefined,
  zgroup: Json | undefined,
  zattrs: Json | undefined,
): NodeMeta {
  let attrs = zattrs ?? {};
  let zarray = zarrayDoc;
  if (zarray) ({ zarray, attrs } = datetimeAsInt64(zarray, attrs));
  if (zarray) {
    const raw: Record<string, Json> = { ".zarray": zarray };
    if (zattrs) raw[".zattrs"] = zattrs;
    return {
      kind: "array",
      format: 2,
      path,
      attrs,
      raw,
      array: {
        shape: zarray.shape as number[],
        chunks: zarray.chunks as number[],
        dtype: v2DtypeName(String(zarray.dtype)),
        fill_value: zarray.fill_value,
        dimension_names: (attrs._ARRAY_DIMENSIONS as string[] | undefined) ?? undefined,
        codecs: v2Codecs(zarray),
        problem: shapeProblem(zarray.shape, zarray.chunks),
      },
    };
  }
  const raw: Record<string, Json> = { ".zgroup": zgroup ?? { zarr_format: 2 } };
  if (zattrs) raw[".zattrs"] = zattrs;
  return { kind: "group", format: 2, path, attrs, raw };
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}/${key}`;
}

/** Read one node's metadata from the store; undefined when there is no node at `path`. */
export async function readNode(backend: Backend, path: string): Promise<NodeMeta | undefined> {
  const v3 = await backend.get(join(path, "zarr.json"));
  if (v3) return fromV3(path, parse(v3, "zarr.json"));
  const [za, zg] = await Promise.all([backend.get(join(path, ".zarray")), backend.get(join(path, ".zgroup"))]);
  if (!za && !zg) return undefined;
  const zattrs = await backend.get(join(path, ".zattrs"));
  return fromV2(
    path,
    za ? parse(za, ".zarray") : undefined,
    zg ? parse(zg, ".zgroup") : undefined,
    zattrs ? parse(zattrs, ".zattrs") : undefined,
  );
}

/**
 * Consolidated metadata below `path`: v3 inline `consolidated_metadata` in zarr.json (as zarr-python
 * writes it) or v2 `.zmetadata`. Returns every node below `path` keyed by its full path, or
 * undefined when the node at `path` has none.
 */
export async function readConsolidated(backend: Backend, path: string): Promise<Map<string, NodeMeta> | undefined> {
  const v3 = await backend.get(join(path, "zarr.json"));
  if (v3) {
    const doc = parse(v3, "zarr.json");
    const cm = doc.consolidated_metadata as { metadata?: Record<string, Json> } | null | undefined;
    if (!cm?.metadata) return undefined;
    const out = new Map<string, NodeMeta>();
    out.set(path, fromV3(path, { ...doc, consolidated_metadata: null }));
    for (const [rel, child] of Object.entries(cm.metadata)) out.set(join(path, rel), fromV3(join(path, rel), child));
    return out;
  }
  const zm = await backend.get(join(path, ".zmetadata"));
  if (!zm) return undefined;
  const docs = (parse(zm, ".zmetadata").metadata ?? {}) as Record<string, Json>;
  const byNode = new Map<string, { za?: Json; zg?: Json; zattrs?: Json }>();
  for (const [key, doc] of Object.entries(docs)) {
    const slash = key.lastIndexOf("/");
    const rel = slash < 0 ? "" : key.slice(0, slash);
    const file = key.slice(slash + 1);
    const entry = byNode.get(rel) ?? {};
    if (file === ".zarray") entry.za = doc;
    else if (file === ".zgroup") entry.zg = doc;
    else if (file === ".zattrs") entry.zattrs = doc;
    byNode.set(rel, entry);
  }
  const out = new Map<string, NodeMeta>();
  for (const [rel, e] of byNode) {
    if (!e.za && !e.zg) continue;
    const full = rel === "" ? path : join(path, rel);
    out.set(full, fromV2(full, e.za, e.zg, e.zattrs));
  }
  return out;
}

/**
 * Direct children by parent path, made once per metadata map: a walk asks for the children of
 * every group, and a scan of the whole map each time would cost nodes × groups (about 4 × 10⁵
 * key tests for the demo store's embeddings, a third of a "nothing new" build). Made again when
 * the map's size has changed.
 */
const childIndexes = new WeakMap<Map<string, NodeMeta>, { size: number; byParent: Map<string, Set<string>> }>();

function childIndex(nodes: Map<string, NodeMeta>): Map<string, Set<string>> {
  const known = childIndexes.get(nodes);
  if (known && known.size === nodes.size) return known.byParent;
  const byParent = new Map<string, Set<string>>();
  const add = (parent: string, name: string) => {
    let names = byParent.get(parent);
    if (!names) byParent.set(parent, (names = new Set()));
    names.add(name);
  };
  for (const p of nodes.keys()) {
    if (p === "") continue;
    // Every ancestor of the path has the next segment as a child (also where the map holds no
    // node for the ancestor itself: a group implied by its members).
    const parts = p.split("/");
    add("", parts[0]);
    for (let i = 1; i < parts.length; i++) add(parts.slice(0, i).join("/"), parts[i]);
  }
  childIndexes.set(nodes, { size: nodes.size, byParent });
  return byParent;
}

/** Names of the direct children of a node, from consolidated metadata or a directory listing. */
export function childrenFrom(nodes: Map<string, NodeMeta>, path: string): string[] {
  return [...(childIndex(nodes).get(path) ?? [])].sort();
}
