// .npy slices of a latent: half-open ranges along y, x and feature (Python slice semantics without
// negative indices), planned from metadata so the size limit is enforced before any chunk is read.
// The limit and the price count the physical answer (4 bytes a value) whatever values= asks for.
// The answer is always (y, x, feature), whatever order the latent stores its dimensions in (a
// dimension it lacks has length 1), and holds physical values by default (the item's quantization
// undone, missing values NaN) or, with values=raw, the stored values in their stored type.
import { MIB } from "../config.ts";
import { InvalidParameterError, TooLargeError } from "../errors.ts";
import { type NpyDtype, npyHeader } from "../npy.ts";
import { readAhead, slab } from "../read-ahead.ts";
import { type OutValues, type Range, strides } from "../store/region.ts";
import { ChunkScan, releaseScanBytes, reserveScanBytes } from "../store/scan.ts";
import type { Store } from "../store/store.ts";
import { TYPED_ARRAYS } from "../store/typed-values.ts";
import { type ItemNodes, openItem, valuesDescription } from "./item.ts";
import { windowTransform } from "./item-geometry.ts";
import { ROLES } from "./layout.ts";
import type { ItemRef } from "./names.ts";

export const AXES = ["y", "x", "feature"] as const;
export const VALUES = ["physical", "raw"] as const;
export type Values = (typeof VALUES)[number];

export type SliceRequest = Partial<Record<`${(typeof AXES)[number]}_${"start" | "stop"}`, number>> & {
  values?: Values;
};

/** .npy type of the stored values served with values=raw. */
const RAW_NPY: Record<string, { descr: NpyDtype; make: (n: number) => OutValues }> = {
  float32: { descr: "<f4", make: (n) => new Float32Array(n) },
  float64: { descr: "<f8", make: (n) => new Float64Array(n) },
  int8: { descr: "|i1", make: (n) => new Int8Array(n) },
  uint8: { descr: "|u1", make: (n) => new Uint8Array(n) },
  int16: { descr: "<i2", make: (n) => new Int16Array(n) },
  uint16: { descr: "<u2", make: (n) => new Uint16Array(n) },
  int32: { descr: "<i4", make: (n) => new Int32Array(n) },
  uint32: { descr: "<u4", make: (n) => new Uint32Array(n) },
};

export interface SlicePlan {
  item: ItemNodes;
  /** (y, x, feature) ranges. */
  region: Range[];
  shape: number[];
  values: Values;
  /** Bytes of data sent, without the .npy header (narrower than pricedBytes for an int8 or int16 values=raw). */
  dataBytes: number;
  /**
   * Bytes of data of the physical answer (float32, 4 per value) whatever `values` asks for: the
   * figure the size limit and the price count, so the same information costs the same either way.
   */
  pricedBytes: number;
  header: Uint8Array;
  /** The X-SVC-Field description of the slice. */
  field: Record<string, unknown>;
  /** Scale values of a scale-array scheme, read once per plan: (y, x, feature) with 1 for absent roles. */
  scales?: { values: Float64Array; shape: [number, number, number] };
}

function axisRange(axis: string, n: number, start: number | undefined, stop: number | undefined): Range {
  const s = start ?? 0;
  const e = stop ?? n;
  const whole = (v: number) => Number.isSafeInteger(v) && v >= 0;
  if (!whole(s)) throw new InvalidParameterError(`${axis}_start`, `${axis}_start must be a non-negative integer`);
  if (!whole(e)) throw new InvalidParameterError(`${axis}_stop`, `${axis}_stop must be a non-negative integer`);
  if (e > n) throw new InvalidParameterError(`${axis}_stop`, `${axis}_stop must be at most ${n}, the ${axis} size`);
  if (s >= n) throw new InvalidParameterError(`${axis}_start`, `${axis}_start must be below ${n}, the ${axis} size`);
  if (s >= e) throw new InvalidParameterError(`${axis}_stop`, `${axis}_stop must be greater than ${axis}_start`);
  return [s, e];
}

/** Validate the ranges and size the answer; TooLargeError above limitMb MiB of data. */
export async function planSlice(store: Store, ref: ItemRef, req: SliceRequest, limitMb: number): Promise<SlicePlan> {
  const item = await openItem(store, ref);
  const values = req.values ?? "physical";
  if (!VALUES.includes(values)) throw new InvalidParameterError("values", "values must be physical or raw");
  const served = item.layout.axes.shape;
  const region = AXES.map((axis, d) => axisRange(axis, served[d], req[`${axis}_start`], req[`${axis}_stop`]));
  const shape = region.map(([s, e]) => e - s);
  const raw = RAW_NPY[item.latent.dtype];
  if (values === "raw" && !raw) {
    throw new InvalidParameterError("values", `values=raw is not served for a latent stored as ${item.latent.dtype}`);
  }
  const width = values === "raw" ? raw.make(0).BYTES_PER_ELEMENT : 4;
  const count = shape.reduce((a, b) => a * b, 1);
  const dataBytes = count * width;
  const pricedBytes = count * 4;
  if (pricedBytes > limitMb * MIB) {
    const sent =
      values === "raw" ? ` (values=raw would send ${(dataBytes / MIB).toFixed(3)} MiB of ${item.latent.dtype})` : "";
    throw new TooLargeError(
      `the slice would be ${(pricedBytes / MIB).toFixed(3)} MiB of float32 physical values${sent}, above the ${limitMb} MiB limit`,
      pricedBytes,
      limitMb,
      "narrow the y, x or feature range",
    );
  }
  const g = item.geometry;
  const desc = valuesDescription(item);
  const dtype = values === "raw" ? item.latent.dtype : "float32";
  const field = {
    name: ref.name,
    path: item.latent.path,
    dims: [...AXES],
    shape,
    dtype,
    values,
    quantization: desc.quantization,
    stored_dtype: desc.stored_dtype,
    stored_dims: item.latent.dims,
    offsets: { y: region[0][0], x: region[1][0], feature: region[2][0] },
    source_shape: served,
    crs: g.crs,
    transform: g.transform ? windowTransform(g.transform, region[0][0], region[1][0]) : null,
    missing:
      values === "physical"
        ? { served_as: "NaN", stored_values: desc.missing.stored_values, rule: desc.missing.rule }
        : { served_as: "as stored", stored_values: desc.missing.stored_values, rule: desc.missing.rule },
  };
  const header = npyHeader(values === "raw" ? raw.descr : "<f4", shape);
  const plan: SlicePlan = { item, region, shape, values, dataBytes, pricedBytes, header, field };
  return plan;
}

/** The stored dimension scans run along: the latent's y dimension (-1 when it has none). */
const yDim = (plan: SlicePlan) => plan.item.layout.axes.dimOf.y;

/**
 * Row ranges [y0, y1) of the bands a slice goes out in: whole y rows, at most `bandBytes` (at
 * least one row), aligned to the latent's chunk rows when a band spans whole chunks. The response
 * starts before the last chunks are decoded, and buffers of this size are recycled by the
 * allocator instead of being mapped (and faulted in) afresh for each request as one body of the
 * whole slice would be.
 */
export function bandRows(plan: SlicePlan, bandBytes: number): Range[] {
  const [[y0, y1]] = plan.region;
  const rowBytes = (plan.dataBytes / plan.shape[0]) | 0;
  const yd = yDim(plan);
  const chunkRows = yd < 0 ? 1 : plan.item.latent.chunks[yd];
  let per = Math.max(1, Math.floor(bandBytes / Math.max(rowBytes, 1)));
  if (per >= chunkRows) per -= per % chunkRows;
  const out: Range[] = [];
  for (let y = y0; y < y1; ) {
    let end = Math.min(y1, y + per);
    // Bands spanning whole chunks end on chunk boundaries, so no chunk is split between two.
    const aligned = end - (end % chunkRows);
    if (per >= chunkRows && end < y1 && aligned > y) end = aligned;
    out.push([y, end]);
    y = end;
  }
  return out;
}

/** The stored region and output placement of rows [y0, y1) of a plan (any dimension order). */
function storedRegion(plan: SlicePlan, [y0, y1]: Range): { region: Range[]; strides: number[] } {
  const { roles } = plan.item.layout.axes;
  const [, [x0, x1], [f0, f1]] = plan.region;
  const served: Range[] = [
    [y0, y1],
    [x0, x1],
    [f0, f1],
  ];
  const out = strides([y1 - y0, x1 - x0, f1 - f0]);
  return {
    region: roles.map((r) => served[ROLES.indexOf(r)]),
    strides: roles.map((r) => out[ROLES.indexOf(r)]),
  };
}

/** Read the scale array of a scale-array scheme over the plan's region, once. */
async function scalesOf(store: Store, plan: SlicePlan): Promise<void> {
  const s = plan.item.layout.scheme;
  if (s.kind !== "scale_array" || plan.scales) return;
  const meta = plan.item.nodes.get(s.path)!;
  const arr = store.array(meta);
  const dims = s.roles;
  const sizes = meta.array!.shape;
  // Along each served role: the plan's range, or [0, 1) where the scales are broadcast.
  const shape: [number, number, number] = [1, 1, 1];
  const region: Range[] = dims.map((r, d) => {
    const k = ROLES.indexOf(r);
    if (sizes[d] === 1) return [0, 1];
    shape[k] = plan.shape[k];
    return plan.region[k];
  });
  const st = strides(shape);
  const values = new Float64Array(shape[0] * shape[1] * shape[2]);
  await arr.readInto(region, values, {
    offset: 0,
    strides: dims.map((r, d) => (sizes[d] === 1 ? 0 : st[ROLES.indexOf(r)])),
  });
  plan.scales = { values, shape };
}

/** Physical values from stored ones in place, for rows [y0, y1) of a plan. */
function decodeBand(plan: SlicePlan, band: Float32Array, [y0, y1]: Range): void {
  const { scheme, missing } = plan.item.layout;
  const miss = missing.values;
  const n = band.length;
  const isMissing =
    miss.length === 0 ? undefined : miss.length === 1 ? (v: number) => v === miss[0] : (v: number) => miss.includes(v);
  if (scheme.kind === "raw" || scheme.kind === "cf_linear") {
    const sf = scheme.kind === "cf_linear" ? scheme.scale_factor : 1;
    const ao = scheme.kind === "cf_linear" ? scheme.add_offset : 0;
    if (sf === 1 && ao === 0 && !isMissing) return;
    for (let i = 0; i < n; i++) {
      const v = band[i];
      band[i] = isMissing?.(v) ? Number.NaN : v * sf + ao;
    }
    return;
  }
  if (scheme.kind === "signed_power") {
    const { divisor, power } = scheme;
    for (let i = 0; i < n; i++) {
      const v = band[i];
      band[i] = isMissing?.(v) ? Number.NaN : Math.sign(v) * (Math.abs(v) / divisor) ** power;
    }
    return;
  }
  // Scales, broadcast over the roles they lack; the plan's region starts at offset 0 of them.
  const { values: sc, shape } = plan.scales!;
  const [, nx, nf] = [y1 - y0, plan.shape[1], plan.shape[2]];
  const sy = shape[0] === 1 ? 0 : shape[1] * shape[2];
  const sx = shape[1] === 1 ? 0 : shape[2];
  const sfe = shape[2] === 1 ? 0 : 1;
  const row0 = y0 - plan.region[0][0];
  let i = 0;
  for (let y = 0; y < y1 - y0; y++) {
    for (let x = 0; x < nx; x++) {
      const base = (row0 + y) * sy + x * sx;
      for (let f = 0; f < nf; f++, i++) {
        const v = band[i];
        band[i] = isMissing?.(v) ? Number.NaN : v * sc[base + f * sfe];
      }
    }
  }
}

/**
 * The values of rows [y0, y1) of a planned slice, (y, x, feature): through a scan, through the
 * addon's decodeRuns ("runs": each chunk decoded and copied into the band on libuv's pool), or
 * through the chunk cache.
 */
export async function readBand(plan: SlicePlan, rows: Range, via?: ChunkScan | "runs"): Promise<OutValues> {
  const [, [x0, x1], [f0, f1]] = plan.region;
  const n = (rows[1] - rows[0]) * (x1 - x0) * (f1 - f0);
  const raw = plan.values === "raw";
  const latent = plan.item.latent;
  // Every value is written: each chunk of the region is copied, stored or its fill value.
  const values = raw ? RAW_NPY[latent.dtype].make(n) : slab(n, false);
  const { region, strides: st } = storedRegion(plan, rows);
  const place = { offset: 0, strides: st };
  // Stored values first (the copy converts integers to float32); the scheme and mask after.
  if (via === "runs") await latent.readStoredInto(region, values, place);
  else if (via) await via.readInto(region, values, place, null);
  else await latent.readInto(region, values, place, null);
  if (!raw) decodeBand(plan, values as Float32Array, rows);
  return values;
}

// Bands read by decodeRuns hold whole chunk rows, so each chunk is decoded once, straight into the
// one band it feeds; a band may then exceed the slab size, up to this many slabs (else the scan
// takes the slice). This many bands are read ahead of the one being sent, so the pool decodes
// while the main thread writes.
const RUNS_BAND_SLABS = 4;
const RUNS_AHEAD = 2;

/**
 * The bands of a slice read by decodeRuns: runs of whole chunk rows along y (cut by the slice's
 * own ends), as many per band as fit in `bandBytes` (at least one); undefined when the latent's
 * chunks or the band size do not allow it.
 */
export function runBands(plan: SlicePlan, bandBytes: number): Range[] | undefined {
  const yd = yDim(plan);
  const latent = plan.item.latent;
  const Out = plan.values === "raw" ? TYPED_ARRAYS[latent.dtype] : Float32Array;
  if (yd < 0 || !latent.decodesInto(Out)) return undefined;
  const [[y0, y1]] = plan.region;
  const rowBytes = plan.dataBytes / plan.shape[0];
  const chunkRows = latent.chunks[yd];
  const per = chunkRows * Math.max(1, Math.floor(bandBytes / Math.max(1, chunkRows * rowBytes)));
  if (Math.min(per, y1 - y0) * rowBytes > RUNS_BAND_SLABS * bandBytes) return undefined;
  const out: Range[] = [];
  for (let y = y0; y < y1; ) {
    const end = Math.min(y1, (Math.floor(y / per) + 1) * per);
    out.push([y, end]);
    y = end;
  }
  return out;
}

/**
 * The data of a planned slice band by band, in order, later bands read while one is sent: by the
 * addon's decodeRuns when the latent allows it (runBands), else as one scan down the rows when
 * its chunks fit (store/scan.ts), else through the chunk cache. The first two hold their buffers
 * against the process-wide `scanBytes` budget.
 */
export async function* sliceBands(
  store: Store,
  plan: SlicePlan,
  bandBytes: number,
  scanBytes: number,
): AsyncGenerator<OutValues> {
  const latent = plan.item.latent;
  await scalesOf(store, plan);
  const runs = runBands(plan, bandBytes);
  if (runs) {
    const rowBytes = plan.dataBytes / plan.shape[0];
    const hold = (RUNS_AHEAD + 1) * Math.max(...runs.map(([a, b]) => (b - a) * rowBytes));
    if (reserveScanBytes(hold, scanBytes)) {
      try {
        yield* readAhead(runs, (rows) => readBand(plan, rows, "runs"), undefined, RUNS_AHEAD);
      } finally {
        releaseScanBytes(hold);
      }
      return;
    }
  }
  const bands = bandRows(plan, bandBytes);
  const yd = yDim(plan);
  const scan = yd < 0 ? undefined : ChunkScan.open(latent, [storedRegion(plan, plan.region[0]).region], yd, scanBytes);
  if (!scan) {
    yield* readAhead(
      bands,
      (rows) => readBand(plan, rows),
      (rows) => latent.warm(storedRegion(plan, rows).region),
    );
    return;
  }
  try {
    yield* readAhead(
      bands,
      async (rows) => {
        const out = await readBand(plan, rows, scan);
        scan.retire(rows[1]);
        return out;
      },
      async (rows) => scan.prefetch(storedRegion(plan, rows).region),
    );
  } finally {
    scan.close();
  }
}

/**
 * The whole .npy body of a planned slice (header and data in one buffer). When the latent allows
 * decodeRuns (runBands), every chunk is decoded straight into its place in the body, all at once;
 * otherwise the bands are read as they are for a response and copied in.
 */
export async function readSlice(
  store: Store,
  plan: SlicePlan,
  bandBytes: number,
  scanBytes: number,
): Promise<Uint8Array> {
  // Not zero-filled (a pass over the whole body for nothing): every byte is written below.
  const size = plan.header.length + plan.dataBytes;
  const body = new Uint8Array(Buffer.allocUnsafeSlow(size).buffer, 0, size);
  body.set(plan.header, 0);
  let at = plan.header.length;
  if (runBands(plan, bandBytes)) {
    await scalesOf(store, plan);
    const raw = plan.values === "raw";
    // The header pads the data to a 64-byte boundary, so a typed view of it is aligned.
    const Out = raw ? TYPED_ARRAYS[plan.item.latent.dtype] : Float32Array;
    const values = new Out(body.buffer, at, plan.dataBytes / Out.BYTES_PER_ELEMENT) as OutValues;
    const { region, strides: st } = storedRegion(plan, plan.region[0]);
    await plan.item.latent.readStoredInto(region, values, { offset: 0, strides: st });
    if (!raw) decodeBand(plan, values as Float32Array, plan.region[0]);
    return body;
  }
  for await (const band of sliceBands(store, plan, bandBytes, scanBytes)) {
    body.set(new Uint8Array(band.buffer, band.byteOffset, band.byteLength), at);
    at += band.byteLength;
  }
  return body;
}
