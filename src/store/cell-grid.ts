// The geometry of an unstructured or reduced grid: every cell's centre (degrees), how far apart
// the cells lie, whether they cover the globe, their bounds, and the spatial index that finds the
// nearest cell (built once per grid, on first use). Made from the axes cell-layouts.ts found.
import { CorruptDataError } from "../errors.ts";
import { CellIndex } from "./cell-index.ts";
import type { CellAxes, CellLayout } from "./cell-layouts.ts";
import { smallestArc, wrap180 } from "./grid.ts";
import { healpixCentres, healpixNearest } from "./healpix.ts";

/** Cells sampled for the grid's spacing (the largest distance from a cell to its nearest neighbour). */
export const SPACING_SAMPLES = 2048;
/** Points spread over the sphere that must all lie within a spacing of a cell for the grid to count as global. */
export const GLOBAL_PROBES = 4096;

export interface CellGrid {
  layout: CellLayout;
  /** Stored name of the cell dimension. */
  dim: string;
  /** Number of cells. */
  n: number;
  /** Cell centres in degrees, longitudes in -180..180. */
  lat: Float64Array;
  lon: Float64Array;
  /** Largest distance from a (sampled) cell to its nearest neighbour, radians: a point farther than this from every cell is outside. */
  spacing: number;
  axes: CellAxes;
  /** A HEALPix grid's pixel ids when the store names them (a regional subset); undefined: the cells are 0..n-1. */
  ids?: Float64Array;
  /** The nearest-cell index (made on first use). */
  index(): CellIndex;
  /** Whether the index has been made (a whole HEALPix grid answers without it until tiles are drawn). */
  readonly indexed: boolean;
  /**
   * The cell nearest to a point and its distance in radians, `exclude` left out: a whole HEALPix
   * grid answers by its own indexing (healpix.ts, no index built), every other grid through the
   * index. Longitudes in -180..180.
   */
  nearest(lat: number, lon: number, exclude?: number): { cell: number; angle: number };
}

const RAD = Math.PI / 180;
const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

async function degrees(c: {
  name: string;
  array: { readRaw(): Promise<number[]>; packing: { scale: number; offset: number } };
  toDegrees: number;
}) {
  const { scale, offset } = c.array.packing;
  const raw = await c.array.readRaw();
  // A plain loop: a typed array's from() with a mapping function costs several times as much on
  // a million coordinates.
  const out = new Float64Array(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const v = (raw[i] * scale + offset) * c.toDegrees;
    if (!Number.isFinite(v)) throw new CorruptDataError(`the cell coordinate ${c.name} has a missing value at ${i}`);
    out[i] = v;
  }
  return out;
}

/** Centres of the cells: read (and converted from radians where stored so) or, for HEALPix, computed. */
async function centres(axes: CellAxes): Promise<{ lat: Float64Array; lon: Float64Array; ids?: Float64Array }> {
  if (axes.healpix) {
    const h = axes.healpix;
    const total = 12 * h.nside * h.nside;
    if (!h.ids) return healpixCentres(h.nside, h.order);
    const ids = await h.ids.array.readRaw();
    for (const [k, id] of ids.entries()) {
      if (!(Number.isInteger(id) && id >= 0 && id < total)) {
        throw new CorruptDataError(
          `HEALPix cell id ${id} at ${h.ids.name}[${k}] is outside 0..${total - 1} for nside ${h.nside}`,
        );
      }
    }
    return { ...healpixCentres(h.nside, h.order, ids), ids: Float64Array.from(ids) };
  }
  const [lat, lon] = await Promise.all([degrees(axes.lat!), degrees(axes.lon!)]);
  if (lat.length !== lon.length) throw new CorruptDataError(`${axes.lat!.name} and ${axes.lon!.name} differ in length`);
  for (let i = 0; i < lat.length; i++) {
    if (lat[i] < -90.000001 || lat[i] > 90.000001) {
      throw new CorruptDataError(`${axes.lat!.name}[${i}] = ${lat[i]}° lies outside -90..90`);
    }
    lon[i] = wrap180(lon[i]);
  }
  return { lat, lon };
}

/** Points spread evenly over the sphere (a Fibonacci lattice). */
function* spread(n: number): Generator<[number, number]> {
  const golden = Math.PI * (3 - Math.sqrt(5));
  for (let k = 0; k < n; k++) {
    const z = 1 - (2 * k + 1) / n;
    yield [Math.asin(z) / RAD, wrap180((k * golden) / RAD)];
  }
}

export interface CellGridGeometry {
  cells: CellGrid;
  /** West, south, east, north of the cells, reach included (-180..180 wide for a global grid). */
  bbox: [number, number, number, number];
  global: boolean;
  /** Nominal spacing in degrees: the largest round step (1, 2 or 5 × 10^k) not above the cells' spacing. */
  spacingDeg: number;
}

export async function cellGridOf(axes: CellAxes): Promise<CellGridGeometry> {
  const { lat, lon, ids } = await centres(axes);
  const n = lat.length;
  if (n < 2) throw new CorruptDataError(`the cell axis ${axes.dim} has ${n} cell(s): gridcast needs at least two`);
  let index: CellIndex | undefined;
  const cells: CellGrid = {
    layout: axes.layout,
    dim: axes.dim,
    n,
    lat,
    lon,
    spacing: 0,
    axes,
    ...(ids ? { ids } : {}),
    index: () => {
      index ??= new CellIndex(lat, lon);
      return index;
    },
    nearest: (a, b, exclude = -1) => cells.index().nearest(a, b, exclude),
    get indexed() {
      return index !== undefined;
    },
  };
  // A whole HEALPix grid (no cell ids: cell k is pixel k) is its own index.
  const h = axes.healpix;
  if (h && !ids) cells.nearest = (a, b, exclude = -1) => healpixNearest(h.nside, h.order, a, b, exclude);
  const step = Math.max(1, Math.floor(n / SPACING_SAMPLES));
  let spacing = 0;
  for (let i = 0; i < n; i += step) spacing = Math.max(spacing, cells.nearest(lat[i], lon[i], i).angle);
  cells.spacing = spacing;
  let global = true;
  for (const [plat, plon] of spread(GLOBAL_PROBES)) {
    if (cells.nearest(plat, plon).angle > spacing) {
      global = false;
      break;
    }
  }
  if (index) index.examined = 0;
  const spacingDeg = roundStep(spacing / RAD);
  return { cells, bbox: global ? [-180, -90, 180, 90] : boundsOf(lat, lon, spacingDeg), global, spacingDeg };
}

/** The largest of 1, 2 and 5 × 10^k not above `deg`: export nodes on round multiples of it. */
export function roundStep(deg: number): number {
  const p = 10 ** Math.floor(Math.log10(deg));
  const m = deg / p;
  return round9((m >= 5 ? 5 : m >= 2 ? 2 : 1) * p);
}

/** Latitude extent and the smallest longitude arc holding every cell, widened by the spacing. */
function boundsOf(lat: Float64Array, lon: Float64Array, pad: number): [number, number, number, number] {
  let south = 90;
  let north = -90;
  for (const f of lat) {
    south = Math.min(south, f);
    north = Math.max(north, f);
  }
  const arc = smallestArc(lon);
  const west = arc.west;
  const span = Math.min(360, arc.span + 2 * pad);
  const w = span >= 360 ? -180 : wrap180(west - pad);
  return [
    round9(w),
    round9(Math.max(-90, south - pad)),
    round9(span >= 360 ? 180 : w + span),
    round9(Math.min(90, north + pad)),
  ];
}
