// .npy slices of a latent: half-open ranges along y, x and feature (Python slice semantics without
// negative indices), planned from metadata so the size limit is enforced before any chunk is read.
import { MIB } from "../config.ts";
import { InvalidParameterError, TooLargeError } from "../errors.ts";
import { npyHeader } from "../npy.ts";
import { readAhead, slab } from "../read-ahead.ts";
import { type Range, strides } from "../store/array.ts";
import { ChunkScan } from "../store/scan.ts";
import type { Store } from "../store/store.ts";
import { type ItemNodes, openItem } from "./item.ts";
import { windowTransform } from "./item-geometry.ts";
import type { ItemRef } from "./names.ts";

export const AXES = ["y", "x", "feature"] as const;
const BYTES_PER_VALUE = 4;

export type SliceRequest = Partial<Record<`${(typeof AXES)[number]}_${"start" | "stop"}`, number>>;

export interface SlicePlan {
  item: ItemNodes;
  region: Range[];
  shape: number[];
  /** Bytes of float32 data, without the .npy header: the figure the size limit applies to. */
  dataBytes: number;
  header: Uint8Array;
  /** The X-SVC-Field description of the slice. */
  field: Record<string, unknown>;
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
  const region = AXES.map((axis, d) =>
    axisRange(axis, item.latent.shape[d], req[`${axis}_start`], req[`${axis}_stop`]),
  );
  const shape = region.map(([s, e]) => e - s);
  const dataBytes = shape.reduce((a, b) => a * b, 1) * BYTES_PER_VALUE;
  if (dataBytes > limitMb * MIB) {
    throw new TooLargeError(
      `the slice would be ${(dataBytes / MIB).toFixed(3)} MiB of float32 data, above the ${limitMb} MiB limit`,
      dataBytes,
      limitMb,
      "narrow the y, x or feature range",
    );
  }
  const g = item.geometry;
  const field = {
    name: ref.name,
    path: `embeddings/${ref.path}/latent`,
    dims: [...AXES],
    shape,
    dtype: "float32",
    offsets: { y: region[0][0], x: region[1][0], feature: region[2][0] },
    source_shape: item.latent.shape,
    crs: g.crs,
    transform: windowTransform(g.transform, region[0][0], region[1][0]),
    missing: "NaN",
  };
  return { item, region, shape, dataBytes, header: npyHeader("<f4", shape), field };
}

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
  const chunkRows = plan.item.latent.chunks[0];
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

/** The float32 values of rows [y0, y1) of a planned slice, (y, x, feature). */
export async function readBand(plan: SlicePlan, [y0, y1]: Range, scan?: ChunkScan): Promise<Float32Array> {
  const [, [x0, x1], [f0, f1]] = plan.region;
  const values = slab((y1 - y0) * (x1 - x0) * (f1 - f0));
  const region: Range[] = [
    [y0, y1],
    [x0, x1],
    [f0, f1],
  ];
  if (scan) await scan.readInto(region, values, { offset: 0, strides: strides(region.map(([a, b]) => b - a)) });
  else await plan.item.latent.read(region, values);
  return values;
}

/**
 * The data of a planned slice band by band, in order, the next band read while one is sent: as
 * one scan down the rows when its chunks fit (store/scan.ts), else through the chunk cache.
 */
export async function* sliceBands(plan: SlicePlan, bandBytes: number, scanBytes: number): AsyncGenerator<Float32Array> {
  const [, xs, fs] = plan.region;
  const latent = plan.item.latent;
  const bands = bandRows(plan, bandBytes);
  const scan = ChunkScan.open(latent, [plan.region], 0, scanBytes);
  if (!scan) {
    yield* readAhead(
      bands,
      (rows) => readBand(plan, rows),
      (rows) => latent.warm([rows, xs, fs]),
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
      async (rows) => scan.prefetch([rows, xs, fs]),
    );
  } finally {
    scan.close();
  }
}

/** The whole .npy body of a planned slice (header and data in one buffer). */
export async function readSlice(plan: SlicePlan, bandBytes: number, scanBytes: number): Promise<Uint8Array> {
  const body = new Uint8Array(plan.header.length + plan.dataBytes);
  body.set(plan.header, 0);
  let at = plan.header.length;
  for await (const band of sliceBands(plan, bandBytes, scanBytes)) {
    body.set(new Uint8Array(band.buffer, band.byteOffset, band.byteLength), at);
    at += band.byteLength;
  }
  return body;
}
