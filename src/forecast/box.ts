// Box export: plan from metadata (shape, bytes, coordinates) before any chunk is read, then
// produce the float32 field one lead time at a time, lat ascending and lon eastward.
import { MIB } from "../config.ts";
import { InvalidParameterError, TooLargeError } from "../errors.ts";
import { inSlices, pace, TURN_BYTES } from "../loop-turns.ts";
import { npyHeader } from "../npy.ts";
import { pacedSlab, readAhead, slab, slabParts } from "../read-ahead.ts";
import type { Registry } from "../registry/registry.ts";
import { isoNoZone } from "../store/describe.ts";
import type { Placement, Range } from "../store/region.ts";
import { ChunkScan } from "../store/scan.ts";
import type { ForecastGroup, Grid, GroupVariable, Store } from "../store/store.ts";
import { type CellBox, selectCellBox } from "./grid-cells.ts";
import { rotateOne, windowOfGridBox } from "./grid-projected.ts";
import { type BoxSelection, projectedSelection, selectBox } from "./grid-select.ts";
import { copyLayout, type PointCopies } from "./point-copy.ts";
import { regionOf } from "./read.ts";
import {
  entryIn,
  intervalsOf,
  notIngested,
  requireGroup,
  requireVariable,
  resolveLevel,
  resolveMember,
} from "./select.ts";

export interface BoxRequest {
  group: string;
  var: string;
  time_index: number;
  lead_start: number;
  lead_stop: number;
  lat_min?: number;
  lat_max?: number;
  lon_min?: number;
  lon_max?: number;
  /** Projected grids: a box in the CRS's units instead of lat/lon. */
  x_min?: number;
  x_max?: number;
  y_min?: number;
  y_max?: number;
  level?: number;
  /** Ensemble member number; default the control member. */
  member?: string;
}

export interface BoxPlan {
  group: ForecastGroup;
  variable: GroupVariable;
  run: number;
  level: number | undefined;
  member: number | undefined;
  leads: [number, number];
  sel: BoxSelection;
  shape: [number, number, number];
  header: Uint8Array;
  /** Total .npy bytes (header + data). */
  bytes: number;
  /** The X-SVC-Field description of the array. */
  field: Record<string, unknown>;
}

function axis(values: number[]): Record<string, unknown> {
  const n = values.length;
  const step = n > 1 ? (values[n - 1] - values[0]) / (n - 1) : 0;
  const regular = values.every((v, i) => Math.abs(v - (values[0] + i * step)) < 1e-6 * Math.max(1, Math.abs(step)));
  const r = (x: number) => Math.round(x * 1e9) / 1e9;
  return regular ? { first: r(values[0]), step: r(step), count: n } : { values: values.map(r), count: n };
}

export async function planBox(store: Store, registry: Registry, req: BoxRequest, limitMb: number): Promise<BoxPlan> {
  const group = await requireGroup(store, req.group);
  const entry = entryIn(registry, group, req.var);
  const variable = requireVariable(group, entry);
  if (req.time_index < 0 || req.time_index >= group.runs.length) {
    throw new InvalidParameterError("time_index", `time_index must be within 0..${group.runs.length - 1}`);
  }
  const nLead = group.leads.length;
  if (req.lead_start < 0 || req.lead_start >= nLead) {
    throw new InvalidParameterError("lead_start", `lead_start must be within 0..${nLead - 1}`);
  }
  if (req.lead_stop < 0 || req.lead_stop >= nLead) {
    throw new InvalidParameterError(
      "lead_stop",
      `lead_stop must be within 0..${nLead - 1} (the last lead step, included)`,
    );
  }
  if (req.lead_stop < req.lead_start)
    throw new InvalidParameterError("lead_stop", "lead_stop must not be below lead_start");
  const gridBox = (["x_min", "x_max", "y_min", "y_max"] as const).filter((p) => req[p] !== undefined);
  // The variable's own grid (a group may hold variables on several).
  const grid = variable.grid;
  const proj = grid.projection;
  if (gridBox.length > 0) {
    if (!proj) {
      throw new InvalidParameterError(
        gridBox[0],
        `${group.id} is a latitude/longitude grid: give the box as lat_min..lon_max`,
      );
    }
    const missing = (["x_min", "x_max", "y_min", "y_max"] as const).find((p) => req[p] === undefined);
    if (missing)
      throw new InvalidParameterError(missing, "a box in grid units needs all of x_min, x_max, y_min, y_max");
    const given = (["lat_min", "lat_max", "lon_min", "lon_max"] as const).find((p) => req[p] !== undefined);
    if (given) throw new InvalidParameterError(given, "select either by lat_min..lon_max or by x_min..y_max, not both");
  } else {
    for (const p of ["lat_min", "lat_max", "lon_min", "lon_max"] as const) {
      if (req[p] === undefined) throw new InvalidParameterError(p, `${p} is required`);
    }
    for (const p of ["lat_min", "lat_max"] as const) {
      if (!(req[p]! >= -90 && req[p]! <= 90)) throw new InvalidParameterError(p, `${p} must be within -90..90`);
    }
    for (const p of ["lon_min", "lon_max"] as const) {
      if (!(req[p]! >= -180 && req[p]! <= 360)) throw new InvalidParameterError(p, `${p} must be within -180..360`);
    }
  }
  notIngested(group, req.time_index, group.leads[req.lead_stop], "lead_stop");
  const level = resolveLevel(group, variable, req.level);
  const member = resolveMember(group, variable, req.member);
  if (member === "all") {
    throw new InvalidParameterError("member", "an export holds one member; ask for each member in turn");
  }
  const nLeads = req.lead_stop - req.lead_start + 1;
  const cellBox = grid.cells
    ? selectCellBox(
        grid,
        req.lat_min!,
        req.lat_max!,
        req.lon_min!,
        req.lon_max!,
        Math.floor((limitMb * MIB) / 4 / nLeads) + 1,
      )
    : undefined;
  const sel = cellBox
    ? cellSelection(cellBox)
    : proj && gridBox.length > 0
      ? projectedSelection(grid, windowOfGridBox(proj, req.x_min!, req.x_max!, req.y_min!, req.y_max!))
      : selectBox(grid, req.lat_min!, req.lat_max!, req.lon_min!, req.lon_max!);
  // A cell box's size comes from its counts (its nodes are not made past the limit).
  const shape: [number, number, number] = [
    nLeads,
    cellBox ? cellBox.nLat : sel.lats.length,
    cellBox ? cellBox.nLon : sel.lons.length,
  ];
  if (!Number.isFinite(shape[1] * shape[2])) {
    throw new TooLargeError(
      `the cells of ${group.id} lie at one point (no spacing): no box of them can be exported on a regular grid`,
      Number.MAX_SAFE_INTEGER,
      limitMb,
      "ask /point for the cells' values",
    );
  }
  const header = npyHeader("<f4", shape);
  const bytes = header.length + shape[0] * shape[1] * shape[2] * 4;
  if (bytes > limitMb * MIB) {
    throw new TooLargeError(
      `the export would be ${(bytes / MIB).toFixed(1)} MiB, above the ${limitMb} MiB limit`,
      bytes,
      limitMb,
      "narrow the lead range, the box, the level or the variable",
    );
  }
  const runTime = group.runs[req.time_index];
  const leadHours = group.leads.slice(req.lead_start, req.lead_stop + 1);
  const field = {
    name: variable.name,
    stored: variable.stored,
    group: group.id,
    dims: proj ? ["lead_time", "y", "x"] : ["lead_time", "lat", "lon"],
    // Stored dimensions of one entry the values were read at index 0 of (MET Norway's height1).
    ...(variable.squeezed.length ? { squeezed: variable.squeezed } : {}),
    // A component stored along the grid's axes, turned to east/north with its partner.
    ...(variable.turn ? { turned_with: variable.turn.partner.stored } : {}),
    ...(variable.plus ? { summed_with: variable.plus.stored } : {}),
    shape,
    dtype: "float32",
    units: variable.units,
    stored_units: variable.storedUnits,
    temporal: variable.temporal,
    intervals: intervalsOf(group, variable, req.time_index)?.slice(req.lead_start, req.lead_stop + 1) ?? null,
    member: member === undefined ? (variable.scalarMember ?? null) : group.members![member],
    run: isoNoZone(runTime),
    time_index: req.time_index,
    lead_time: { hours: leadHours, valid_times: leadHours.map((h) => isoNoZone(runTime + h * 3_600_000)) },
    level: level === undefined ? null : group.levels![level],
    ...(group.grids.length > 1 ? { grid_coordinates: variable.gridCoords } : {}),
    ...(proj
      ? projectedAxes(variable.grid, sel)
      : {
          lat: axis(sel.lats),
          lon: axis(sel.lons),
        }),
    ...(grid.cells
      ? {
          cells: {
            layout: grid.cells.layout,
            resampled: "nearest cell",
            step_deg: grid.dlat,
            note:
              `the ${grid.cells.layout} grid's cells exported on a regular ${grid.dlat}° latitude/longitude grid ` +
              "(nodes on multiples of the step), each node holding its nearest cell's value by great-circle distance; " +
              "nodes farther than a cell spacing from every cell of a regional grid are NaN",
          },
        }
      : {}),
    missing: "NaN",
  };
  return {
    group,
    variable,
    run: req.time_index,
    level,
    member,
    leads: [req.lead_start, req.lead_stop],
    sel,
    shape,
    header,
    bytes,
    field,
  };
}

/**
 * What the header says of a projected grid's window: the y/x axes in the CRS's units, the storage
 * index window, the CRS, and where the 2-D latitude/longitude of the nodes can be read.
 */
function projectedAxes(grid: Grid, sel: BoxSelection): Record<string, unknown> {
  const p = grid.projection!;
  return {
    y: { ...axis(sel.lats), units: p.units },
    x: { ...axis(sel.lons), units: p.units },
    window: { y: sel.rows, x: sel.cols[0] },
    // A curvilinear grid: y/x are row and column numbers; the nodes place themselves.
    crs: p.nodes
      ? null
      : {
          proj4: p.definition.startsWith("+") ? p.definition : null,
          crs_wkt:
            typeof p.attrs.crs_wkt === "string" ? p.attrs.crs_wkt : p.definition.startsWith("+") ? null : p.definition,
          grid_mapping_name: p.mappingName,
          grid_mapping: p.variable,
        },
    lat_lon:
      "2-D: the nodes' latitude/longitude are the CRS's inverse of (x, y); the Zarr view under /data carries " +
      "them as latitude(y, x) and longitude(y, x)",
  };
}

/** An unstructured grid's box: a regular grid at its nominal step filled from the nearest cells (grid-cells.ts). */
function cellSelection(box: CellBox): BoxSelection {
  return {
    rows: [0, 1],
    cols: box.runs,
    lats: box.lats,
    lons: box.lons,
    flipRows: false,
    gather: box.gather,
    width: box.width,
  };
}

/** The storage region of each column run of the box, leads [l0, l1). */
export function slabRegions(plan: BoxPlan, l0: number, l1: number) {
  const hasLead = plan.variable.roles.includes("lead");
  return plan.sel.cols.map((lon) =>
    regionOf(plan.group, plan.variable, {
      run: plan.run,
      lead: hasLead ? [l0, l1] : undefined,
      level: plan.level,
      member: plan.member,
      lat: plan.sel.rows,
      lon,
    }),
  );
}

/** Each column run's storage region for leads [l0, l1) and where its values go in the slab. */
function slabPlacements(plan: BoxPlan, l0: number, l1: number): { region: Range[]; place: Placement }[] {
  const { variable: v, sel } = plan;
  const [, nLat, nLon] = plan.shape;
  // An unstructured grid's cell runs lie back to back, `width` values a lead (gathered after).
  const plane = sel.gather ? sel.width! : nLat * nLon;
  let colOffset = 0;
  return slabRegions(plan, l0, l1).map((region, k) => {
    const [c0, c1] = sel.cols[k];
    const strides = v.roles.map((role, d) => {
      if (role === "lead") return plane;
      if (role === "lat") return sel.flipRows ? -nLon : nLon;
      if (role === "lon") return 1;
      // Run, level and member are single indices here; anything longer has no place in the box.
      if (region[d][1] - region[d][0] !== 1) throw new Error(`box export: ${role} spans more than one index`);
      return 0;
    });
    const offset = colOffset + (sel.flipRows ? (nLat - 1) * nLon : 0);
    colOffset += c1 - c0;
    return { region, place: { offset, strides } };
  });
}

/**
 * One slab of leads [l0, l1) holding whole chunks along the lead axis, in two parts: the leads
 * every chunk's first Blosc blocks complete, as soon as those blocks are decoded, then
 * the rest once every chunk is (StoredArray.readStoredSplit: each block decoded once). The first
 * part goes on the wire while the second decodes; a box whose chunks do not split comes whole.
 */
async function* slabInParts(plan: BoxPlan, l0: number, l1: number): AsyncGenerator<Float32Array> {
  const v = plan.variable;
  const plane = plan.shape[1] * plan.shape[2];
  const leadDim = v.roles.indexOf("lead");
  const out = slab((l1 - l0) * plane, false);
  const parts = slabPlacements(plan, l0, l1).map(({ region, place }) =>
    v.array.readStoredSplit(region, out, place, leadDim),
  );
  const done = Promise.all(parts.map((p) => p.done));
  done.catch(() => {});
  const ready = Math.min(...(await Promise.all(parts.map((p) => p.head))));
  if (ready > 0 && ready < l1 - l0) {
    const [head, tail] = slabParts(out, ready * plane);
    yield head;
    await done;
    yield tail;
    return;
  }
  await done;
  yield out;
}

/**
 * The float32 values of leads [l0, l1) of a planned box, (lead, lat ascending, lon eastward),
 * each stored column run written straight into its place, rows reversed where the store runs
 * north to south. Through `scan` when given; with `direct`, the stored values are decoded into
 * place by the addon (StoredArray.readStoredInto: for arrays whose stored values are physical).
 */
export async function readBoxSlab(
  plan: BoxPlan,
  l0: number,
  l1: number,
  scan?: ChunkScan,
  direct = false,
): Promise<Float32Array> {
  const { variable: v, sel } = plan;
  const [, nLat, nLon] = plan.shape;
  const hasLead = v.roles.includes("lead");
  // An unstructured grid's cell runs are read back to back (`width` values a lead), then gathered.
  const gather = sel.gather;
  const plane = gather ? sel.width! : nLat * nLon;
  // readStoredInto writes every value of its regions (a chunk not stored as its fill value), so
  // a direct slab of a field with a lead axis needs no NaN first.
  // Every loop over the slab on the main thread goes in paced slices (loop-turns.ts).
  const out = gather ? new Float32Array((l1 - l0) * plane) : await pacedSlab((l1 - l0) * plane, !(direct && hasLead));
  await Promise.all(
    slabPlacements(plan, l0, l1).map(({ region, place }) =>
      direct ? v.array.readStoredInto(region, out, place) : (scan ?? v.array).readInto(region, out, place),
    ),
  );
  // A field without a lead axis is the same at every lead: the first lead copied to the others.
  if (!hasLead) {
    await inSlices((l1 - l0 - 1) * plane, 4, (from, to) => {
      for (let i = from; i < to; ) {
        const src = i % plane;
        const n = Math.min(to - i, plane - src);
        out.copyWithin(plane + i, src, src + n);
        i += n;
      }
    });
  }
  const f = v.convert;
  if (f) {
    await inSlices(out.length, CALL_BYTES, (from, to) => {
      for (let i = from; i < to; i++) out[i] = f(out[i]);
    });
  }
  return gather ? gathered(out, gather, plane, l1 - l0) : out;
}

/**
 * Values of a box (every node, every lead of the copy) above which the store is read, not the copy:
 * one turn's bulk work (loop-turns.ts), as the copy's blocks are decoded in one go.
 */
export const COPY_BOX_MAX_BYTES = TURN_BYTES;

/**
 * Leads [l0, l1) of a small box from the build's point copy, in the units readBoxSlab gives; undefined
 * when the box is not small, is gathered from cells or turned, or the copy does not hold it as the
 * store holds it now. The copy's blocks are decoded in this turn: the size bound keeps that short.
 */
async function copySlab(plan: BoxPlan, copies: PointCopies, l0: number, l1: number): Promise<Float32Array | undefined> {
  const { variable: v, sel } = plan;
  if (!copies.box || sel.gather || v.turn || v.plus) return undefined;
  const [, nLat, nLon] = plan.shape;
  const perNode = copyLayout(v).perNode;
  const bytes = nLat * nLon * perNode * (v.array.dtype === "float64" ? 8 : 4);
  if (bytes > COPY_BOX_MAX_BYTES) return undefined;
  const hasLead = v.roles.includes("lead");
  const plane = nLat * nLon;
  const out = await pacedSlab((l1 - l0) * plane, false);
  const q = { group: plan.group, v, run: plan.run, level: plan.level, member: plan.member };
  const parts = slabPlacements(plan, hasLead ? l0 : 0, hasLead ? l1 : 1);
  const wait = pace(bytes);
  if (wait) await wait;
  if (!(await copies.box({ ...q, parts }, out))) return undefined;
  // A field without a lead axis is the same at every lead.
  if (!hasLead) {
    await inSlices((l1 - l0 - 1) * plane, 4, (from, to) => {
      for (let i = from; i < to; i++) out[plane + i] = out[i % plane];
    });
  }
  const f = v.convert;
  if (f) {
    await inSlices(out.length, CALL_BYTES, (from, to) => {
      for (let i = from; i < to; i++) out[i] = f(out[i]);
    });
  }
  return out;
}

/** What a value costs in a loop that calls a function for it, counted as bytes of bulk work. */
const CALL_BYTES = 16;

/**
 * A slab of a grid-relative wind component (GroupVariable.turn) turned to east/north: the slab of
 * each component read alike, and each node's pair turned by the bearing of grid north there.
 */
async function turnedSlab(plan: BoxPlan, l0: number, l1: number): Promise<Float32Array> {
  const { partner, along } = plan.variable.turn!;
  const [mine, other] = await Promise.all([
    readBoxSlab(plan, l0, l1),
    readBoxSlab({ ...plan, variable: partner }, l0, l1),
  ]);
  const [u, w] = along === "x" ? [mine, other] : [other, mine];
  const p = plan.variable.grid.projection!;
  const { rows, cols, flipRows } = plan.sel;
  const [, nLat, nLon] = plan.shape;
  // Output column → storage column, across the column runs in output order.
  const colAt = cols.flatMap(([c0, c1]) => Array.from({ length: c1 - c0 }, (_, i) => c0 + i));
  // A rotation per node (trigonometry), in paced slices.
  await inSlices(mine.length, 4 * CALL_BYTES, (from, to) => {
    for (let k = from; k < to; k++) {
      const rr = Math.floor(k / nLon) % nLat;
      const iy = flipRows ? rows[0] + (nLat - 1 - rr) : rows[0] + rr;
      const [e, n] = rotateOne(p, colAt[k % nLon], iy, u[k], w[k]);
      mine[k] = along === "x" ? e : n;
    }
  });
  return mine;
}

/** A slab of a variable stored in two parts (GroupVariable.plus): each part's slab read alike, added. */
async function summedSlab(plan: BoxPlan, l0: number, l1: number): Promise<Float32Array> {
  const [total, other] = await Promise.all([
    readBoxSlab(plan, l0, l1),
    readBoxSlab({ ...plan, variable: plan.variable.plus! }, l0, l1),
  ]);
  await inSlices(total.length, 8, (from, to) => {
    for (let k = from; k < to; k++) total[k] += other[k];
  });
  return total;
}

/** Each output node's value from the cells read (`width` a lead), NaN where it has none. */
async function gathered(read: Float32Array, gather: Int32Array, width: number, leads: number): Promise<Float32Array> {
  const nodes = gather.length;
  const out = slab(leads * nodes, false);
  await inSlices(leads * nodes, 8, (from, to) => {
    for (let i = from; i < to; i++) {
      const l = Math.floor(i / nodes);
      const g = gather[i - l * nodes];
      out[i] = g < 0 ? Number.NaN : read[l * width + g];
    }
  });
  return out;
}

/**
 * Every lead of the box in order, in slabs of whole leads of at most `slabBytes`, for streaming
 * (a lead larger than that in bands of whole rows, south first, or north first with `northFirst`). A slab large enough covers every lead a chunk holds, so each chunk is
 * fetched, checked and copied once, and the chunks of a slab decode in parallel; the next slab is
 * read while one is sent.
 */
export async function* boxLeads(
  plan: BoxPlan,
  slabBytes: number,
  scanBytes: number,
  northFirst = false,
  copies?: PointCopies,
): AsyncGenerator<Float32Array> {
  const [first, last] = plan.leads;
  // A small box is read from the build's point copy where it holds the box as the store does now.
  const copied = copies && (await copySlab(plan, copies, first, last + 1));
  if (copied) {
    yield copied;
    return;
  }
  const leadBytes = plan.shape[1] * plan.shape[2] * 4;
  // A lead larger than a slab goes in bands of rows, so no export holds more than two slabs
  // whatever its grid (a gathered box places its nodes from cells read for the whole lead;
  // slabBytes 0 asks for slabs of one lead).
  if (slabBytes > 0 && leadBytes > slabBytes && plan.shape[1] > 1 && !plan.sel.gather) {
    yield* rowBands(plan, slabBytes, northFirst);
    return;
  }
  let per = Math.max(1, Math.floor(slabBytes / leadBytes));
  // Slabs that hold whole chunks along the lead axis start and end on chunk boundaries.
  const leadDim = plan.variable.roles.indexOf("lead");
  const chunkLeads = leadDim >= 0 ? plan.variable.array.chunks[leadDim] : 1;
  if (per >= chunkLeads) per -= per % chunkLeads;
  const slabs: [number, number][] = [];
  for (let l = first; l <= last; ) {
    let end = Math.min(last + 1, l + per);
    const aligned = end - (end % chunkLeads);
    if (chunkLeads > 1 && end <= last && aligned > l) end = aligned;
    slabs.push([l, end]);
    l = end;
  }
  // Read as one scan when its chunks fit (scan.ts): each chunk decoded once into a reused buffer
  // and let go once the slabs have passed it; otherwise through the chunk cache, the part after
  // the next warmed into it.
  const array = plan.variable.array;
  // A wind component stored along a projected grid's axes: both components read, turned to east/north.
  if (plan.variable.turn) {
    yield* readAhead(slabs, ([a, b]) => turnedSlab(plan, a, b));
    return;
  }
  // A variable stored in two parts (WRF's RAINC + RAINNC): both read alike and added.
  if (plan.variable.plus) {
    yield* readAhead(slabs, ([a, b]) => summedSlab(plan, a, b));
    return;
  }
  // Slabs of whole chunk steps along the lead axis need each chunk once, and float32 values
  // stored as they are meant (no scale, offset or missing marker but NaN) need no unpacking: each
  // chunk is then read and decoded straight into its slab on libuv's pool, only the values the
  // box takes unshuffled, with no decoded chunk made, copied or NaN-filled on the main thread.
  if (leadDim >= 0 && per >= chunkLeads && array.readsPhysicalInPlace()) {
    // A box of one slab (every lead in one chunk step) would send nothing until all its chunks are
    // decoded: it goes in two parts instead.
    // (Not a gathered box: its cells are placed node by node once read.)
    if (slabs.length === 1 && !plan.variable.convert && !plan.sel.gather) {
      yield* slabInParts(plan, slabs[0][0], slabs[0][1]);
      return;
    }
    yield* readAhead(slabs, ([a, b]) => readBoxSlab(plan, a, b, undefined, true));
    return;
  }
  const scan = leadDim >= 0 ? ChunkScan.open(array, slabRegions(plan, first, last + 1), leadDim, scanBytes) : undefined;
  if (!scan) {
    yield* readAhead(
      slabs,
      ([a, b]) => readBoxSlab(plan, a, b),
      async ([a, b]) => {
        await Promise.all(slabRegions(plan, a, b).map((r) => array.warm(r)));
      },
    );
    return;
  }
  try {
    yield* readAhead(
      slabs,
      async ([a, b]) => {
        const out = await readBoxSlab(plan, a, b, scan);
        // Leads [a, b) are storage indices along the lead dimension (regionOf passes them through).
        scan.retire(b);
        return out;
      },
      async ([a, b]) => {
        for (const r of slabRegions(plan, a, b)) scan.prefetch(r);
      },
    );
  } finally {
    scan.close();
  }
}

/**
 * The box as bands of whole rows of one lead, each at most `slabBytes` (at least one row): per
 * lead, its rows south to north (north to south with `northFirst`), each band's own rows south to
 * north. Read through the chunk cache (a chunk a band boundary crosses is decoded once while
 * cached), the band after the next warmed into it.
 */
async function* rowBands(plan: BoxPlan, slabBytes: number, northFirst: boolean): AsyncGenerator<Float32Array> {
  const [, nLat, nLon] = plan.shape;
  const { rows, flipRows, lats } = plan.sel;
  const per = Math.max(1, Math.floor(slabBytes / (nLon * 4)));
  const bands: BoxPlan[] = [];
  for (let k0 = 0; k0 < nLat; k0 += per) {
    const k1 = Math.min(nLat, k0 + per);
    // Output rows [k0, k1) are storage rows counted from the first, or from the last when the
    // store runs north to south.
    const sub: [number, number] = flipRows ? [rows[1] - k1, rows[1] - k0] : [rows[0] + k0, rows[0] + k1];
    bands.push({
      ...plan,
      sel: { ...plan.sel, rows: sub, lats: lats.slice(k0, k1) },
      shape: [plan.shape[0], k1 - k0, nLon],
    });
  }
  if (northFirst) bands.reverse();
  const parts: [BoxPlan, number][] = [];
  for (let l = plan.leads[0]; l <= plan.leads[1]; l++) for (const b of bands) parts.push([b, l]);
  const array = plan.variable.array;
  yield* readAhead(
    parts,
    ([b, l]) =>
      plan.variable.turn
        ? turnedSlab(b, l, l + 1)
        : plan.variable.plus
          ? summedSlab(b, l, l + 1)
          : readBoxSlab(b, l, l + 1),
    async ([b, l]) => {
      await Promise.all(slabRegions(b, l, l + 1).map((r) => array.warm(r)));
    },
  );
}
