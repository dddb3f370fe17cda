// Coordinate arrays of a published dataset, built from the group as gridcast decoded it, so the
// instants and positions a client decodes are the ones /point and the .npy export report. Each is
// one small chunk with CF attributes xarray decodes by itself: run times as "hours since" the Unix
// epoch on the proleptic Gregorian calendar (stored model calendars are already converted to real
// dates by the store layer), lead times as a duration in hours.
import { DIM_NAMES, gridDimNames } from "../forecast/dim-names.ts";
import { tablesTooLarge } from "../store/cell-grid.ts";
import { type ForecastGroup, type NodeMeta, storedLongitudes } from "../store/store.ts";
import type { Json } from "./zarr-json.ts";

export type CoordValues = Float64Array | Int32Array | BigInt64Array;

export interface CoordArray {
  name: string;
  dtype: "float64" | "int32" | "int64";
  values: CoordValues;
  attrs: Json;
  /** Fixed chunk length (else one chunk of the whole axis): see GROWING_AXIS_CHUNK. */
  chunk?: number;
}

/**
 * Chunk length of the run and lead coordinates, which grow from one forecast cycle to the next.
 * A client that read the metadata of one cycle may fetch these chunks after the next was
 * published; with a chunk length that does not depend on the axis length, every chunk it asks for
 * holds the values it expects (an appended run only fills the tail), where one chunk of the whole
 * axis would be longer than its metadata says and fail to decode ("cannot reshape array of size 6
 * into shape (5,)"). 512 values is 4 KiB of int64: one small request for any real run list.
 */
export const GROWING_AXIS_CHUNK = 512;

const HOUR_MS = 3_600_000;
/** The published name of an unstructured grid's cell dimension (dimNamesOf's). */
const CELL_DIM = "cell";
// Attributes describing a stored encoding that the published array no longer has.
const ENCODING_ATTRS = [
  "_FillValue",
  "missing_value",
  "scale_factor",
  "add_offset",
  "units",
  "calendar",
  "dtype",
  "_ARRAY_DIMENSIONS",
];

/** Descriptive attributes of a stored coordinate, without those about its stored encoding. */
function storedAttrs(
  g: ForecastGroup,
  nodes: Map<string, NodeMeta>,
  role: keyof typeof DIM_NAMES,
  stored?: string,
): Json {
  const name = stored ?? g.coordNames[role];
  const out: Json = { ...(name ? nodes.get(g.path === "" ? name : `${g.path}/${name}`)?.attrs : undefined) };
  for (const k of ENCODING_ATTRS) delete out[k];
  // A lead axis read from valid times (MET Norway's time) or a run axis read from them (GraphCast's
  // datetime) is no longer what its stored description says: that description is left out.
  const meant = ROLE_STANDARD_NAMES[role];
  if (meant && typeof out.standard_name === "string" && out.standard_name !== meant) {
    for (const k of ["standard_name", "long_name", "axis"]) delete out[k];
  }
  return out;
}

/** The CF standard_name each published time axis stands for. */
const ROLE_STANDARD_NAMES: Partial<Record<keyof typeof DIM_NAMES, string>> = {
  time: "forecast_reference_time",
  lead: "forecast_period",
};

function wholeNumbers(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isSafeInteger(values[i])) return false;
  return true;
}

function int32Fits(values: ArrayLike<number>): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) return false;
  }
  return true;
}

function hours(values: number[]): { dtype: "int32" | "float64"; values: Int32Array | Float64Array } {
  return int32Fits(values)
    ? { dtype: "int32", values: Int32Array.from(values) }
    : { dtype: "float64", values: Float64Array.from(values) };
}

export function coordinateArrays(g: ForecastGroup, nodes: Map<string, NodeMeta>): CoordArray[] {
  const out: CoordArray[] = [];
  const runHours = g.runs.map((ms) => ms / HOUR_MS);
  out.push({
    name: DIM_NAMES.time,
    ...(wholeNumbers(runHours)
      ? { dtype: "int64" as const, values: BigInt64Array.from(runHours, (h) => BigInt(h)) }
      : { dtype: "float64" as const, values: Float64Array.from(runHours) }),
    attrs: {
      standard_name: "forecast_reference_time",
      long_name: "initial time of forecast",
      ...storedAttrs(g, nodes, "time"),
      units: "hours since 1970-01-01 00:00:00",
      calendar: "proleptic_gregorian",
    },
    chunk: GROWING_AXIS_CHUNK,
  });
  out.push({
    name: DIM_NAMES.lead,
    ...hours(g.leads),
    attrs: {
      standard_name: "forecast_period",
      long_name: "time since forecast_reference_time",
      ...storedAttrs(g, nodes, "lead"),
      units: "hours",
      // Newer xarray decodes a duration only when told the type; older ones go by the units.
      dtype: "timedelta64[ns]",
    },
    chunk: GROWING_AXIS_CHUNK,
  });
  if (g.levels) {
    const lv = int32Fits(g.levels)
      ? { dtype: "int32" as const, values: Int32Array.from(g.levels) }
      : { dtype: "float64" as const, values: Float64Array.from(g.levels) };
    out.push({
      name: DIM_NAMES.level,
      ...lv,
      attrs: {
        long_name: "level",
        ...storedAttrs(g, nodes, "level"),
        ...(g.levelUnits ? { units: g.levelUnits } : {}),
      },
    });
  }
  if (g.members) {
    out.push({
      name: DIM_NAMES.member,
      ...hours(g.members),
      attrs: { standard_name: "realization", long_name: "ensemble member number", ...storedAttrs(g, nodes, "member") },
    });
  }
  const cells = g.grid.cells;
  if (cells) {
    // Every cell's number and centre are published: a grid whose tables pass its budget (a whole
    // HEALPix grid served without them) has no view, and says so by name.
    if (!cells.tablesFit)
      throw tablesTooLarge(`the ${cells.layout} grid of ${g.id} (/data view)`, cells.n, cells.budgetMb);
    // The cell axis: cell numbers (a HEALPix grid's pixel ids); the centres follow as auxiliary
    // coordinates (cellArrays in dataset.ts).
    out.push({
      name: CELL_DIM,
      dtype: "int32",
      values: cells.ids ? Int32Array.from(cells.ids) : Int32Array.from({ length: cells.n }, (_, i) => i),
      attrs: {
        long_name: cells.axes.healpix ? `HEALPix pixel index (${cells.axes.healpix.order})` : "cell number",
        ...storedAttrs(g, nodes, "lon", cells.axes.healpix?.ids?.name),
      },
    });
    return out;
  }
  const p = g.grid.projection;
  if (p) {
    // The projection's own axes, in the stored units, described as the store describes them.
    for (const [name, values, attrs, role] of [
      ["y", g.grid.lat, p.yAttrs, "lat"],
      ["x", g.grid.lon, p.xAttrs, "lon"],
    ] as const) {
      const own = storedAttrs(g, nodes, role);
      if (p.nodes) {
        // A curvilinear grid's y/x are row and column numbers: no projection coordinate to claim.
        out.push({ name, dtype: "float64", values: Float64Array.from(values), attrs: { ...attrs } });
        continue;
      }
      out.push({
        name,
        dtype: "float64",
        values: Float64Array.from(values),
        attrs: {
          standard_name:
            p.units === "degrees"
              ? `grid_${role === "lat" ? "latitude" : "longitude"}`
              : `projection_${name}_coordinate`,
          axis: name.toUpperCase(),
          ...own,
          units: typeof attrs.units === "string" ? attrs.units : p.units,
        },
      });
    }
    return out;
  }
  // Every grid's own latitudes and longitudes: a variable on another grid is published with its
  // coordinates, never the first grid's.
  for (const [grid, names] of g.grids.length > 1 ? gridDimNames(g) : [[g.grids[0], DIM_NAMES] as const]) {
    out.push({
      name: names.lat,
      dtype: "float64",
      values: Float64Array.from(grid.grid.lat),
      attrs: {
        standard_name: "latitude",
        long_name: "latitude",
        axis: "Y",
        ...storedAttrs(g, nodes, "lat", grid.lat),
        units: "degrees_north",
      },
    });
    out.push({
      name: names.lon,
      dtype: "float64",
      values: storedLongitudes(grid.grid),
      attrs: {
        standard_name: "longitude",
        long_name: "longitude",
        axis: "X",
        ...storedAttrs(g, nodes, "lon", grid.lon),
        units: "degrees_east",
      },
    });
  }
  return out;
}
