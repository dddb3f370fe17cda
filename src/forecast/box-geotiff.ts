// A box export as GeoTIFF: the same plan, reads and limit as the .npy export (box.ts), written as
// one float32 band per lead, north-up whatever the store's row order, in the grid's own CRS
// (WGS 84 for latitude/longitude grids, the projection for projected ones), NaN as no-data, each
// band described by its valid time and the file by the variable, its units and the run.
// A grid GeoTIFF cannot place exactly (irregular axes, a rotated pole) is refused by name.
import { InvalidParameterError } from "../errors.ts";
import { writeGeoTiff } from "../geotiff.ts";
import { type GeoKey, projectedKeys, wgs84Keys } from "../geotiff-keys.ts";
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
 * The GeoTIFF of a planned box from its slabs (whole leads, rows south to north as the .npy has
 * them); each slab is handed to `recycle` once copied.
 */
export async function boxGeoTiff(
  plan: BoxPlan,
  slabs: AsyncIterable<Float32Array>,
  recycle: (slab: Float32Array) => void,
): Promise<Uint8Array> {
  const { keys, x, y } = geoTiffLayout(plan);
  const [, ny, nx] = plan.shape;
  const plane = ny * nx;
  const bands: Float32Array[] = [];
  for await (const slab of slabs) {
    for (let at = 0; at + plane <= slab.length; at += plane) {
      const band = new Float32Array(plane);
      // Row r of the slab is the r-th from the south: it becomes row ny-1-r, counted from the top.
      for (let r = 0; r < ny; r++) band.set(slab.subarray(at + r * nx, at + (r + 1) * nx), (ny - 1 - r) * nx);
      bands.push(band);
    }
    recycle(slab);
  }
  if (bands.length !== plan.shape[0])
    throw new Error(`box export: ${bands.length} leads read, ${plan.shape[0]} planned`);
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
  return writeGeoTiff({
    width: nx,
    height: ny,
    bands,
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
