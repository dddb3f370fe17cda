// The geometry of an unstructured or reduced grid: every cell's centre (degrees), how far apart
// the cells lie, whether they cover the globe, their bounds, and the spatial index that finds the
// nearest cell (made once per grid at discovery, in slices between turns of the event loop, and
// taken again by a new cycle whose centres are the same). Made from the axes cell-layouts.ts found.
//
// Tables per cell (centres, the index, the neighbour lists tiles walk) are bounded by a budget per
// grid (the cell_grid_mb setting): a grid whose declared cell count would pass it is refused by
// name before anything is read or allocated, except a whole HEALPix grid, which needs no table:
// its centres and nearest pixels are computed (healpix.ts), at any nside up to MAX_HEALPIX_NSIDE.
import { BoundedMap } from "../bounded-map.ts";
import { CorruptDataError, TooLargeError } from "../errors.ts";
import { inSlices, pace } from "../loop-turns.ts";
import { CellIndex } from "./cell-index.ts";
import type { CellAxes, CellLayout } from "./cell-layouts.ts";
import { wrap180 } from "./grid.ts";
import { centresInto, healpixCentre, healpixCentres, healpixNearest } from "./healpix.ts";

/** Cells sampled for the grid's spacing (the largest distance from a cell to its nearest neighbour). */
export const SPACING_SAMPLES = 2048;
/** Points spread over the sphere that must all lie within a spacing of a cell for the grid to count as global. */
export const GLOBAL_PROBES = 4096;
/**
 * Bytes a grid's tables take per cell, at most: the coordinates as read (2 × 8) and in degrees
 * (2 × 8), the index's unit vectors (3 × 8), bucket numbers and cell lists (2 × 4, about 8 more
 * for the buckets), and the twelve neighbours tiles walk through (12 × (4 + 4) + 8).
 */
export const TABLE_BYTES_PER_CELL = 16 + 16 + 24 + 16 + 104;
/** Default budget of one grid's tables (MiB): the cell_grid_mb setting. */
export const CELL_GRID_MB = 1024;
const MIB = 1024 * 1024;

/** The bytes the tables of `n` cells take. */
export function tableBytes(n: number): number {
  return n * TABLE_BYTES_PER_CELL;
}

/** The budget refusal of a grid whose tables would not fit (a 413 where a request asked for them). */
export function tablesTooLarge(what: string, n: number, budgetMb: number): TooLargeError {
  const bytes = tableBytes(n);
  return new TooLargeError(
    `${what} declares ${n} cells: their tables would take ${(bytes / MIB).toFixed(0)} MiB, above the ` +
      `${budgetMb} MiB a cell grid may hold (cell_grid_mb)`,
    bytes,
    budgetMb,
    "raise cell_grid_mb if the machine has the memory, or serve a coarser grid",
  );
}

export interface CellGrid {
  layout: CellLayout;
  /** Stored name of the cell dimension. */
  dim: string;
  /** Number of cells. */
  n: number;
  /**
   * Cell centres in degrees, longitudes in -180..180: every cell's, made on first use for a whole
   * HEALPix grid (a TooLargeError beyond the grid's budget: `centre` answers for one cell).
   */
  readonly lat: Float64Array;
  readonly lon: Float64Array;
  /**
   * Every centre made ready without holding the event loop: a whole HEALPix grid's computed once in
   * paced slices (what lat/lon otherwise compute in one go); nothing to do for centres read at
   * discovery, nor for a grid past its budget (lat/lon then refuse it by name).
   */
  centresReady(): Promise<void>;
  /** Whether per-cell tables (centres, the index) fit the grid's budget, and that budget (MiB). */
  readonly tablesFit: boolean;
  readonly budgetMb: number;
  /** Latitude and longitude (degrees, -180..180) of one cell's centre. */
  centre(cell: number): [number, number];
  /** Largest distance from a (sampled) cell to its nearest neighbour, radians: a point farther than this from every cell is outside. */
  spacing: number;
  axes: CellAxes;
  /** A HEALPix grid's pixel ids when the store names them (a regional subset); undefined: the cells are 0..n-1. */
  ids?: Float64Array;
  /** The nearest-cell index (made on first use; a TooLargeError beyond the grid's budget). */
  index(): CellIndex;
  /** Whether the index has been made (at discovery for a grid with read centres; a whole HEALPix grid answers without it until tiles are drawn). */
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
// Work over millions of cells goes in slices paced by the event loop's turns (loop-turns.ts), each
// counted as bytes of bulk work: a coordinate converted or compared, a centre computed (two
// trigonometric calls), a nearest-cell search.
export const VALUE_BYTES = 16;
export const CENTRE_BYTES = 64;
export const QUERY_BYTES = 16 * 1024;

/** A coordinate's values read (paced, store/array.ts readValues) and turned into degrees in place. */
async function degrees(c: {
  name: string;
  array: { readValues(): Promise<Float64Array>; packing: { scale: number; offset: number } };
  toDegrees: number;
}): Promise<Float64Array> {
  const { scale, offset } = c.array.packing;
  const v = await c.array.readValues();
  await inSlices(v.length, VALUE_BYTES, (from, to) => {
    for (let i = from; i < to; i++) {
      const d = (v[i] * scale + offset) * c.toDegrees;
      if (!Number.isFinite(d)) throw new CorruptDataError(`the cell coordinate ${c.name} has a missing value at ${i}`);
      v[i] = d;
    }
  });
  return v;
}

/**
 * The number of cells the axes declare, checked before anything is read: the coordinates (or
 * HEALPix cell ids) agree in length, and their tables fit the budget, or the grid is refused
 * naming the array. A whole HEALPix grid has no tables: its 12·nside² cells pass at any nside.
 */
export function declaredCells(axes: CellAxes, budgetMb: number): { n: number; tables: boolean } {
  const h = axes.healpix;
  if (h && !h.ids) return { n: 12 * h.nside * h.nside, tables: false };
  const named = h?.ids ? [h.ids] : [axes.lat!, axes.lon!];
  const n = named[0].array.shape[0];
  for (const c of named) {
    if (c.array.shape.length !== 1 || c.array.shape[0] !== n) {
      throw new CorruptDataError(`${named[0].name} and ${c.name} differ in length (${n} and ${c.array.shape[0]})`);
    }
  }
  if (h && n > 12 * h.nside * h.nside) {
    throw new CorruptDataError(
      `${named[0].name} names ${n} cells, more than the ${12 * h.nside * h.nside} of nside ${h.nside}`,
    );
  }
  if (tableBytes(n) > budgetMb * MIB) throw tablesTooLarge(`the cell coordinate ${named[0].name}`, n, budgetMb);
  return { n, tables: true };
}

/** Centres of the cells a grid with tables has: read (and converted from radians where stored so), or computed for a HEALPix subset. */
async function centres(axes: CellAxes): Promise<{ lat: Float64Array; lon: Float64Array; ids?: Float64Array }> {
  if (axes.healpix) {
    const h = axes.healpix;
    const total = 12 * h.nside * h.nside;
    const ids = await h.ids!.array.readValues();
    await inSlices(ids.length, VALUE_BYTES, (from, to) => {
      for (let k = from; k < to; k++) {
        const id = ids[k];
        if (!(Number.isInteger(id) && id >= 0 && id < total)) {
          throw new CorruptDataError(
            `HEALPix cell id ${id} at ${h.ids!.name}[${k}] is outside 0..${total - 1} for nside ${h.nside}`,
          );
        }
      }
    });
    const out = { lat: new Float64Array(ids.length), lon: new Float64Array(ids.length) };
    await inSlices(ids.length, CENTRE_BYTES, (from, to) => centresInto(h.nside, h.order, ids, out, from, to));
    return { ...out, ids };
  }
  const [lat, lon] = await Promise.all([degrees(axes.lat!), degrees(axes.lon!)]);
  if (lat.length !== lon.length) throw new CorruptDataError(`${axes.lat!.name} and ${axes.lon!.name} differ in length`);
  await inSlices(lat.length, VALUE_BYTES, (from, to) => {
    for (let i = from; i < to; i++) {
      if (lat[i] < -90.000001 || lat[i] > 90.000001) {
        throw new CorruptDataError(`${axes.lat!.name}[${i}] = ${lat[i]}° lies outside -90..90`);
      }
      lon[i] = wrap180(lon[i]);
    }
  });
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

/**
 * The geometry of the cells `axes` describe, their tables within `budgetMb` (declaredCells: a grid
 * that would pass it is refused before anything is read).
 */
export async function cellGridOf(axes: CellAxes, budgetMb = CELL_GRID_MB): Promise<CellGridGeometry> {
  const declared = declaredCells(axes, budgetMb);
  const n = declared.n;
  if (n < 2) throw new CorruptDataError(`the cell axis ${axes.dim} has ${n} cell(s): gridcast needs at least two`);
  const h = axes.healpix;
  // A whole HEALPix grid (no cell ids: cell k is pixel k) is its own index: its centres are
  // computed one at a time, and all of them only where a caller asks for every one.
  const whole = h && !h.ids ? h : undefined;
  const read = whole ? undefined : await centres(axes);
  // A new cycle of a group rebuilds it, but its cells rarely change: the geometry made for the
  // same centres (compared value by value, a few ms for millions of cells) is taken as it is.
  const memoKey = `${axes.layout}\0${axes.dim}\0${n}\0${budgetMb}`;
  if (read) {
    const known = madeFor.get(memoKey);
    if (known && (await sameCentres(known.cells, read))) return known;
  }
  const ids = read?.ids;
  let all: { lat: Float64Array; lon: Float64Array } | undefined = read;
  const fit = tableBytes(n) <= budgetMb * MIB;
  const table = () => {
    if (!all) {
      if (!fit) throw tablesTooLarge(`the nside ${whole!.nside} HEALPix grid`, n, budgetMb);
      all = healpixCentres(whole!.nside, whole!.order);
    }
    return all;
  };
  let making: Promise<void> | undefined;
  const centresReady = (): Promise<void> => {
    if (all || !fit || !whole) return Promise.resolve();
    making ??= (async () => {
      const made = { lat: new Float64Array(n), lon: new Float64Array(n) };
      await inSlices(n, CENTRE_BYTES, (from, to) => centresInto(whole.nside, whole.order, undefined, made, from, to));
      all ??= made;
    })();
    return making;
  };
  // A grid with tables has its index made now, in slices between turns of the event loop (a whole
  // HEALPix grid's, for tiles only, when they ask).
  let index = read ? await CellIndex.build(read.lat, read.lon) : undefined;
  const cells: CellGrid = {
    layout: axes.layout,
    dim: axes.dim,
    n,
    get lat() {
      return table().lat;
    },
    get lon() {
      return table().lon;
    },
    centresReady,
    tablesFit: fit,
    budgetMb,
    centre: whole ? (k) => healpixCentre(whole.nside, whole.order, k) : (k) => [read!.lat[k], read!.lon[k]],
    spacing: 0,
    axes,
    ...(ids ? { ids } : {}),
    index: () => {
      index ??= new CellIndex(table().lat, table().lon);
      return index;
    },
    nearest: whole
      ? (a, b, exclude = -1) => healpixNearest(whole.nside, whole.order, a, b, exclude)
      : (a, b, exclude = -1) => cells.index().nearest(a, b, exclude),
    get indexed() {
      return index !== undefined;
    },
  };
  const step = Math.max(1, Math.floor(n / SPACING_SAMPLES));
  let spacing = 0;
  for (let i = 0; i < n; i += step) {
    const wait = pace(QUERY_BYTES);
    if (wait) await wait;
    const [lat, lon] = cells.centre(i);
    spacing = Math.max(spacing, cells.nearest(lat, lon, i).angle);
  }
  cells.spacing = spacing;
  // A whole HEALPix grid tiles the sphere.
  let global = true;
  if (!whole) {
    for (const [plat, plon] of spread(GLOBAL_PROBES)) {
      const wait = pace(QUERY_BYTES);
      if (wait) await wait;
      if (cells.nearest(plat, plon).angle > spacing) {
        global = false;
        break;
      }
    }
  }
  if (index) index.examined = 0;
  const spacingDeg = roundStep(spacing / RAD);
  const geo: CellGridGeometry = {
    cells,
    bbox: global ? [-180, -90, 180, 90] : await boundsOf(read!.lat, read!.lon, spacingDeg),
    global,
    spacingDeg,
  };
  if (read) madeFor.set(memoKey, geo);
  return geo;
}

/**
 * The geometry last made for cells of each layout, axis and count, for MEMO_GRIDS grids: the very
 * objects the groups on them use, so nothing is held twice while they are served (a weak reference
 * would not do: the old group goes while its new cycle's coordinates are read, and a collection
 * then would take the geometry with it). At most MEMO_GRIDS × cell_grid_mb stays after its groups went.
 */
export const MEMO_GRIDS = 4;
const madeFor = new BoundedMap<string, CellGridGeometry>(MEMO_GRIDS);

/** Whether a grid with tables has exactly these centres (and cell ids), compared in paced slices. */
async function sameCentres(
  cells: CellGrid,
  read: { lat: Float64Array; lon: Float64Array; ids?: Float64Array },
): Promise<boolean> {
  if (!cells.tablesFit || cells.n !== read.lat.length) return false;
  const same = async (a: Float64Array | undefined, b: Float64Array | undefined) => {
    if (!a || !b) return a === b;
    if (a.length !== b.length) return false;
    let differ = false;
    await inSlices(a.length, VALUE_BYTES, (from, to) => {
      for (let i = from; i < to && !differ; i++) differ = a[i] !== b[i];
    });
    return !differ;
  };
  return (await same(cells.lat, read.lat)) && (await same(cells.lon, read.lon)) && (await same(cells.ids, read.ids));
}

/** The largest of 1, 2 and 5 × 10^k not above `deg`: export nodes on round multiples of it. */
export function roundStep(deg: number): number {
  // Cells at one point have no spacing: no step either (an export of them is refused by its count).
  if (!(deg > 0)) return 0;
  const p = 10 ** Math.floor(Math.log10(deg));
  const m = deg / p;
  return round9((m >= 5 ? 5 : m >= 2 ? 2 : 1) * p);
}

/** Latitude extent and the smallest longitude arc holding every cell, widened by the spacing. */
async function boundsOf(lat: Float64Array, lon: Float64Array, pad: number): Promise<[number, number, number, number]> {
  let south = 90;
  let north = -90;
  await inSlices(lat.length, VALUE_BYTES, (from, to) => {
    for (let i = from; i < to; i++) {
      south = Math.min(south, lat[i]);
      north = Math.max(north, lat[i]);
    }
  });
  const arc = await arcOf(lon);
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

/** Longitude bins arcOf sorts the cells into (1 MiB of bounds): 0.0055° each. */
export const ARC_BINS = 65_536;

/**
 * The smallest arc of longitude (-180..180) holding every one of `lons`, its west end and span:
 * the complement of the largest gap between neighbouring longitudes around the circle. Found
 * without sorting (millions of cells, in paced slices): each bin of ARC_BINS keeps its least and
 * greatest longitude, and the largest gap is between one occupied bin's greatest and the next
 * one's least. A gap inside a bin is narrower than a bin: when no gap between bins is wider, the
 * arc is found within a bin's width of the whole circle.
 */
export async function arcOf(lons: Float64Array): Promise<{ west: number; span: number }> {
  const least = new Float64Array(ARC_BINS).fill(Number.POSITIVE_INFINITY);
  const most = new Float64Array(ARC_BINS).fill(Number.NEGATIVE_INFINITY);
  await inSlices(lons.length, VALUE_BYTES, (from, to) => {
    for (let i = from; i < to; i++) {
      const l = wrap180(lons[i]);
      const b = Math.min(ARC_BINS - 1, Math.max(0, Math.floor(((l + 180) / 360) * ARC_BINS)));
      if (l < least[b]) least[b] = l;
      if (l > most[b]) most[b] = l;
    }
  });
  let first = -1;
  let last = -1;
  for (let b = 0; b < ARC_BINS; b++) {
    if (most[b] === Number.NEGATIVE_INFINITY) continue;
    if (first < 0) first = b;
    last = b;
  }
  if (first < 0) return { west: -180, span: 0 };
  // As around a sorted list: the gap from the last longitude round to the first, then each
  // gap in turn, the first largest kept.
  let gap = 360 - (most[last] - least[first]);
  let west = least[first];
  let prev = first;
  for (let b = first + 1; b <= last; b++) {
    if (most[b] === Number.NEGATIVE_INFINITY) continue;
    if (least[b] - most[prev] > gap) {
      gap = least[b] - most[prev];
      west = least[b];
    }
    prev = b;
  }
  return { west, span: 360 - gap };
}
