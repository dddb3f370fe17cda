// Unstructured and reduced grids as producers write them: one cell axis instead of latitude and
// longitude axes. Four layouts are recognised by their coordinates and attributes:
//  - ICON (DWD, CDI): clat/clon per cell, in radians, CDI_grid_type "unstructured";
//  - reduced Gaussian (cfgrib, earthkit): latitude(values)/longitude(values) in degrees, with
//    GRIB_gridType reduced_gg (octahedral or not) on the variables;
//  - anemoi-datasets: one data(dates, variables, ensemble, cells) array, latitudes(cells) and
//    longitudes(cells), the variable names listed in the root's `variables` attribute;
//  - HEALPix: a grid mapping with healpix_nside and healpix_order (nested or ring); the centres are
//    computed, optionally of the pixels a cell-id coordinate names (a regional subset).
// Any other array with a cell axis is refused by name, never mistaken for something else.
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import { roleOf } from "./dims.ts";
import { type HealpixOrder, MAX_HEALPIX_NSIDE } from "./healpix.ts";
import type { Json } from "./metadata.ts";

export type CellLayout = "icon" | "reduced_gaussian" | "anemoi" | "healpix";

/** What the cell axis of a group is, as found in its metadata (nothing read yet). */
export interface CellAxes {
  layout: CellLayout;
  /** The cell dimension's stored name. */
  dim: string;
  /** Stored latitude/longitude of the cells (none for HEALPix) and the factor to degrees. */
  lat?: { name: string; array: StoredArray; toDegrees: number };
  lon?: { name: string; array: StoredArray; toDegrees: number };
  healpix?: {
    nside: number;
    order: HealpixOrder;
    variable: string;
    attrs: Json;
    ids?: { name: string; array: StoredArray };
  };
  /** anemoi-datasets: the time coordinate (dates), the variables axis with its names, and the ensemble axis. */
  anemoi?: { dates: string; variablesDim: string; names: string[]; ensembleDim: string };
  /** Stored names that describe the grid rather than hold variables (cell bounds, grid mapping). */
  auxiliary: string[];
}

/** Dimension names producers give a cell axis: seen on a variable without a recognised layout, the group is refused by name. */
const CELL_DIMS = new Set([
  "values",
  "cell",
  "cells",
  "ncells",
  "ncell",
  "ncol",
  "ncells2",
  "nod2",
  "node",
  "nodes",
  "npoints",
  "points",
  "rgrid",
]);

const str = (a: Json, k: string): string | undefined => (typeof a[k] === "string" ? (a[k] as string) : undefined);

function degreesFactor(name: string, arr: StoredArray): number {
  const u = (str(arr.meta.attrs, "units") ?? "degrees").trim().toLowerCase();
  if (u === "radian" || u === "radians" || u === "rad") return 180 / Math.PI;
  if (/^deg(ree)?s?(_?(north|east|n|e))?$/.test(u)) return 1;
  throw new CorruptDataError(`the cell coordinate ${name} is in "${u}", a unit gridcast does not read`);
}

/** A 1-D latitude-like or longitude-like array over `dim` by name, standard_name or units. */
function cellCoord(arrays: Map<string, StoredArray>, names: string[], kind: "latitude" | "longitude") {
  for (const [name, arr] of arrays) {
    if (arr.shape.length !== 1 || arr.dims[0] === name) continue;
    const sn = str(arr.meta.attrs, "standard_name");
    if (names.includes(name.toLowerCase()) || sn === kind) return { name, arr };
  }
  return undefined;
}

function healpixMapping(arrays: Map<string, StoredArray>): { name: string; attrs: Json } | undefined {
  for (const [name, arr] of arrays) {
    const a = arr.meta.attrs;
    if (a.healpix_nside !== undefined || str(a, "grid_mapping_name")?.toLowerCase() === "healpix")
      return { name, attrs: a };
  }
  return undefined;
}

function healpixAxes(arrays: Map<string, StoredArray>, mapping: { name: string; attrs: Json }): CellAxes {
  const a = mapping.attrs;
  const nside = Number(a.healpix_nside ?? a.nside);
  if (!(Number.isInteger(nside) && nside >= 1 && nside <= MAX_HEALPIX_NSIDE && (nside & (nside - 1)) === 0)) {
    throw new CorruptDataError(
      `HEALPix grid mapping ${mapping.name}: healpix_nside must be a power of two within 1..${MAX_HEALPIX_NSIDE}, got ${JSON.stringify(a.healpix_nside)}`,
    );
  }
  const order = (str(a, "healpix_order") ?? str(a, "order") ?? "").toLowerCase();
  if (order !== "nested" && order !== "nest" && order !== "ring") {
    throw new CorruptDataError(
      `HEALPix grid mapping ${mapping.name}: healpix_order must be "nested" or "ring", got ${JSON.stringify(a.healpix_order)}`,
    );
  }
  // The cell axis: the last dimension of the variables that name this mapping.
  let dim: string | undefined;
  for (const arr of arrays.values()) {
    const gm = str(arr.meta.attrs, "grid_mapping")
      ?.trim()
      .split(/[:\s]+/)[0];
    if (gm === mapping.name && arr.shape.length >= 1) dim = arr.dims[arr.dims.length - 1];
  }
  if (!dim) throw new CorruptDataError(`HEALPix grid mapping ${mapping.name} is named by no variable (grid_mapping)`);
  const idArr = arrays.get(dim);
  const ids = idArr && idArr.shape.length === 1 ? { name: dim, array: idArr } : undefined;
  return {
    layout: "healpix",
    dim,
    healpix: {
      nside,
      order: order === "ring" ? "ring" : "nested",
      variable: mapping.name,
      attrs: a,
      ...(ids ? { ids } : {}),
    },
    auxiliary: [mapping.name, ...(ids ? [ids.name] : [])],
  };
}

/** The layout a pair of per-cell coordinates belongs to, from the names and the producers' attributes. */
function layoutOf(
  arrays: Map<string, StoredArray>,
  groupAttrs: Json,
  latName: string,
  dim: string,
): CellLayout | undefined {
  if (latName === "clat") return "icon";
  if (latName === "latitudes" && Array.isArray(groupAttrs.variables)) return "anemoi";
  for (const arr of arrays.values()) {
    if (!arr.dims.includes(dim)) continue;
    const a = arr.meta.attrs;
    if (str(a, "CDI_grid_type") === "unstructured") return "icon";
    const t = str(a, "GRIB_gridType")?.toLowerCase();
    if (t === "reduced_gg" || t === "octahedral") return "reduced_gaussian";
  }
  return undefined;
}

/**
 * The cell axis of a group without latitude/longitude axes: undefined when nothing in it has one
 * (the caller goes on to projected grids); throws, naming the axis, for a cell axis in a layout
 * gridcast does not know.
 */
export function findCellAxes(arrays: Map<string, StoredArray>, groupAttrs: Json): CellAxes | undefined {
  const mapping = healpixMapping(arrays);
  if (mapping) return healpixAxes(arrays, mapping);
  const lat = cellCoord(arrays, ["clat", "latitude", "latitudes", "lat"], "latitude");
  const lon = cellCoord(arrays, ["clon", "longitude", "longitudes", "lon"], "longitude");
  if (lat && lon && lat.arr.dims[0] === lon.arr.dims[0]) {
    const dim = lat.arr.dims[0];
    if (roleOf(dim) === undefined) {
      const layout = layoutOf(arrays, groupAttrs, lat.name, dim);
      if (!layout) {
        throw new CorruptDataError(
          `cell axis ${dim} with ${lat.name}/${lon.name} per cell, but nothing says which grid it is ` +
            "(gridcast serves ICON clat/clon, reduced Gaussian GRIB_gridType reduced_gg, anemoi-datasets and HEALPix)",
        );
      }
      const aux = [...arrays.keys()].filter(
        (n) => /_bnds$|_bounds$|_vertices$/.test(n) && arrays.get(n)!.dims[0] === dim,
      );
      const axes: CellAxes = {
        layout,
        dim,
        lat: { name: lat.name, array: lat.arr, toDegrees: degreesFactor(lat.name, lat.arr) },
        lon: { name: lon.name, array: lon.arr, toDegrees: degreesFactor(lon.name, lon.arr) },
        auxiliary: [lat.name, lon.name, ...aux],
      };
      if (layout === "anemoi") axes.anemoi = anemoiAxes(arrays, groupAttrs, dim);
      return axes;
    }
  }
  for (const [name, arr] of arrays) {
    const cell = arr.shape.length >= 2 ? arr.dims.find((d) => CELL_DIMS.has(d.toLowerCase())) : undefined;
    if (cell) {
      throw new CorruptDataError(
        `${name} lies on cell axis ${cell}, an unstructured grid gridcast does not recognise: it needs ICON clat/clon, ` +
          "reduced Gaussian latitude/longitude per cell, anemoi-datasets latitudes/longitudes or a HEALPix grid mapping",
      );
    }
  }
  return undefined;
}

function anemoiAxes(arrays: Map<string, StoredArray>, attrs: Json, dim: string): NonNullable<CellAxes["anemoi"]> {
  const data = arrays.get("data");
  const dates = arrays.get("dates");
  if (!data || !dates || data.shape.length !== 4 || data.dims[3] !== dim) {
    throw new CorruptDataError(
      "an anemoi-datasets store needs data(dates, variables, ensemble, cells) and dates beside latitudes/longitudes",
    );
  }
  if (data.shape[2] !== 1) {
    throw new CorruptDataError(
      `anemoi-datasets data has ${data.shape[2]} ensemble members: gridcast serves single-member anemoi datasets`,
    );
  }
  const names = (attrs.variables as unknown[]).map(String);
  if (names.length !== data.shape[1]) {
    throw new CorruptDataError(
      `the anemoi-datasets attribute variables lists ${names.length} names for ${data.shape[1]} entries of data's variables axis`,
    );
  }
  return { dates: "dates", variablesDim: data.dims[1], names, ensembleDim: data.dims[2] };
}
