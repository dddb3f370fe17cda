// A box export as GeoTIFF: the same plan, reads and limit as the .npy export (box.ts), streamed as
// one float32 band per lead, north-up whatever the store's row order, in the grid's own CRS
// (WGS 84 for latitude/longitude grids, the projection for projected ones), NaN as no-data, each
// band described by its valid time and the file by the variable, its units and the run.
// A grid GeoTIFF cannot place exactly (irregular axes, a rotated pole) is refused by name.
import { InvalidParameterError } from "../errors.ts";
import { type GeoTiffHead, geoTiffHead } from "../geotiff.ts";
import { type GeoKey, projectedKeys, wgs84Keys } from "../geotiff-keys.ts";
import { inSlices } from "../loop-turns.ts";
import type { BoxPlan } from "./box.ts";

interface RegularAxis {
  first: number;
  step: number;
  count: number;
}

function regular(axis: unknown, name: string, group: string): RegularAxis {
  const a = axis as Partial<RegularAxis> & { values?: number[] };
  if (a.step === undefined || a.first === undefined || a.count === undefined) {
    throw new InvalidParameterError(
      "id",
      `${group}: the ${name} axis is not evenly spaced, which a GeoTIFF cannot describe; the .npy export lists every coordinate`,
    );
  }
  if (a.count < 2) {
    throw new InvalidParameterError(
      "lat_min",
      `the box holds one ${name} node; a GeoTIFF needs at least two along each axis to know its pixel size`,
    );
  }
  return a as RegularAxis;
}

function geoKeysOf(plan: BoxPlan): GeoKey[] {
  const p = plan.variable.grid.projection;
  if (!p) return wgs84Keys();
  const keys = projectedKeys(p.definition);
  if (typeof keys === "string") {
    throw new InvalidParameterError(
      "id",
      `${plan.group.id} is on ${keys}, which gridcast does not write into GeoTIFF; the .npy export carries its CRS`,
    );
  }
  return keys;
}

/** Checks a plan can be written as GeoTIFF before anything is read. */
export function geoTiffLayout(plan: BoxPlan): { keys: GeoKey[]; x: RegularAxis; y: RegularAxis } {
  const f = plan.field as Record<string, unknown>;
  const projected = plan.variable.grid.projection !== undefined;
  const y = regular(projected ? f.y : f.lat, projected ? "y" : "latitude", plan.group.id);
  const x = regular(projected ? f.x : f.lon, projected ? "x" : "longitude", plan.group.id);
  return { keys: geoKeysOf(plan), x, y };
}

/**
 * The head of a planned box's GeoTIFF (header and directory, every strip's offset) and the size
 * of the whole file, from the plan alone: nothing is read. The values follow as northUp yields them.
 */
export function boxGeoTiffHead(plan: BoxPlan): GeoTiffHead {
  const { keys, x, y } = geoTiffLayout(plan);
  const [leads, ny, nx] = plan.shape;
  const f = plan.field as {
    name: string;
    stored: string;
    units: string;
    run: string;
    group: string;
    level: number | null;
    member: number | null;
    lead_time: { hours: number[]; valid_times: string[] };
  };
  const metadata: Record<string, string> = {
    variable: f.name,
    stored_name: f.stored,
    units: f.units,
    group: f.group,
    forecast_reference_time: f.run,
  };
  if (f.level !== null) metadata.level = String(f.level);
  if (f.member !== null) metadata.member = String(f.member);
  return geoTiffHead({
    width: nx,
    height: ny,
    bands: leads,
    left: x.first - x.step / 2,
    top: y.first + (y.count - 1) * y.step + y.step / 2,
    pixelWidth: x.step,
    pixelHeight: y.step,
    geoKeys: keys,
    metadata,
    bandInfo: f.lead_time.valid_times.map((valid, i) => ({
      description: `${f.name} valid ${valid}`,
      units: f.units,
      items: { valid_time: valid, lead_time_hours: String(f.lead_time.hours[i]) },
    })),
  });
}

/**
 * The box's slabs turned north-up in place, each yielded as it comes: the GeoTIFF's values in file
 * order. A slab is whole leads (rows south to north, as the .npy has them) or, for a lead larger
 * than a slab, a band of rows of one lead, the bands coming north first (boxLeads' `northFirst`).
 * A count of rows other than the plan's is an error (the body is then cut short of its length,
 * never padded).
 */
export async function* northUp(plan: BoxPlan, slabs: AsyncIterable<Float32Array>): AsyncGenerator<Float32Array> {
  const [leads, ny, nx] = plan.shape;
  const plane = ny * nx;
  const row = new Float32Array(nx);
  let rowsSeen = 0;
  for await (const slab of slabs) {
    if (slab.length % nx !== 0) throw new Error("box export: a slab of the GeoTIFF is not whole rows");
    // Whole leads flip each lead; a band (part of one lead) flips its own rows.
    const block = slab.length % plane === 0 ? ny : slab.length / nx;
    const half = block >> 1;
    // Each swap of two rows, in paced slices (loop-turns.ts): a slab is megabytes.
    await inSlices((slab.length / (block * nx)) * half, 2 * nx * 4, (from, to) => {
      for (let p = from; p < to; p++) {
        // Row r (the r-th from the south) of block b swaps with row block-1-r.
        const b = Math.floor(p / half);
        const r = p - b * half;
        const low = b * block * nx + r * nx;
        const high = b * block * nx + (block - 1 - r) * nx;
        row.set(slab.subarray(low, low + nx));
        slab.copyWithin(low, high, high + nx);
        slab.set(row, high);
      }
    });
    rowsSeen += slab.length / nx;
    yield slab;
  }
  if (rowsSeen !== leads * ny) throw new Error(`box export: ${rowsSeen / ny} leads read, ${leads} planned`);
}
