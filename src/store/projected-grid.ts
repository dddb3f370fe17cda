// Projected and rotated grids (HRRR's Lambert conformal x/y in metres, COSMO/ICON-D2's rotated
// pole rlat/rlon, polar stereographic): 1-D projected coordinates plus a CRS from the CF grid
// mapping. The store's own 2-D latitude/longitude, where present, are checked against the CRS
// when the group is opened: a CRS that puts the nodes somewhere else is refused, never served.
// A grid with 2-D latitude/longitude and no x/y values has its projection recovered where the
// producer stated it (projection-recovery.ts); one with no projection stated (curvilinear) is
// refused by name.
import proj4 from "proj4";
import { CorruptDataError } from "../errors.ts";
import type { StoredArray } from "./array.ts";
import { type CurvilinearNodes, curvilinearBounds, curvilinearNodes, nodeConverter } from "./curvilinear-grid.ts";
import { roleOf } from "./dims.ts";
import { smallestArc } from "./grid.ts";
import { type Crs, crsOf, geographicOf } from "./grid-mapping.ts";
import type { Json } from "./metadata.ts";
import { rebuildAxes, recoverCrs } from "./projection-recovery.ts";

/** How far the stored latitude/longitude may lie from where the CRS puts a node, in cells. */
export const CRS_CHECK_CELLS = 0.25;
/** Metres per degree of latitude, for the nominal resolution in degrees of a grid in metres. */
const METRES_PER_DEGREE = 111_320;

export interface GridProjection {
  /** proj4 definition of the grid's CRS. */
  definition: string;
  /** What the CRS was read from: the CF grid_mapping_name, crs_wkt, spatial_ref or proj4. */
  source: string;
  /** The CF grid_mapping_name, when the mapping has one. */
  mappingName: string | null;
  /** Name of the stored grid mapping variable and its attributes (republished as they are). */
  variable: string;
  attrs: Json;
  /** Stored names of the 1-D coordinates (the row and column axes). */
  xName: string;
  yName: string;
  xAttrs: Json;
  yAttrs: Json;
  /** Regular axes: x[i] = x0 + i * dx, y[j] = y0 + j * dy, in the CRS's units (after `scale`). */
  x0: number;
  dx: number;
  y0: number;
  dy: number;
  nx: number;
  ny: number;
  /** "m" for a map projection, "degrees" for a rotated pole, "index" for a curvilinear grid. */
  units: "m" | "degrees" | "index";
  /** Stored 2-D latitude/longitude names, when the store has them. */
  lat2d: string | null;
  lon2d: string | null;
  lat2dArray: StoredArray | undefined;
  lon2dArray: StoredArray | undefined;
  /** Largest disagreement found between the stored latitude/longitude and the CRS, in cells. */
  checkedCells: number | null;
  /**
   * Set when the store holds no x/y values: where the projection was read from (GRIB_* keys, WRF
   * globals, a CF grid mapping), the axes rebuilt from it and checked against the stored nodes.
   */
  recovered: string | null;
  /**
   * Set for a curvilinear grid (2-D latitude/longitude, no projection stated): x/y are the column
   * and row numbers and `converter` maps them through the stored nodes (curvilinear-grid.ts).
   */
  nodes?: CurvilinearNodes;
  /** Geographic (lon, lat in degrees, on the CRS's own figure) ↔ grid coordinates. */
  converter: proj4.Converter;
  /**
   * The bearing of grid north at each node (degrees, row-major), when the store states it (WRF's
   * COSALPHA/SINALPHA): winds along the grid are turned by it instead of one derived from the
   * projection or the nodes. `rotationFrom` names the arrays.
   */
  gridNorth?: Float32Array;
  rotationFrom?: string;
}

export interface ProjectedAxes {
  /** The stored 1-D x/y coordinates; undefined when the axes are recovered (see `recovered`). */
  x: StoredArray | undefined;
  y: StoredArray | undefined;
  /** Names of the stored x/y coordinates, or of the dimensions when the axes are recovered. */
  xName: string;
  yName: string;
  /** Axes rebuilt from a recovered projection: their values and where the projection came from. */
  recovered?: { x: Float64Array; y: Float64Array; from: string };
  mapping: { name: string; attrs: Json };
  /** Undefined for a curvilinear grid: no projection stated, the nodes place themselves. */
  crs: Crs | undefined;
  lat2d: StoredArray | undefined;
  lon2d: StoredArray | undefined;
  lat2dName: string | undefined;
  lon2dName: string | undefined;
  /** Stored names that are part of the grid, not variables (grid mapping, 2-D lat/lon). */
  auxiliary: string[];
  /** Leading dimensions of the stored latitude/longitude read at index 0 (WRF's XLAT on Time). */
  latLonLead: number;
}

const str = (a: Json, k: string): string | undefined => (typeof a[k] === "string" ? (a[k] as string) : undefined);

const X_NAMES = new Set(["x", "rlon", "xc", "projection_x_coordinate", "grid_longitude"]);
const Y_NAMES = new Set(["y", "rlat", "yc", "projection_y_coordinate", "grid_latitude"]);

function axisKind(name: string, a: Json): "x" | "y" | undefined {
  const sn = str(a, "standard_name");
  if (sn === "projection_x_coordinate" || sn === "grid_longitude") return "x";
  if (sn === "projection_y_coordinate" || sn === "grid_latitude") return "y";
  const axis = str(a, "axis")?.toUpperCase();
  if (axis === "X" && !roleOf(name)) return "x";
  if (axis === "Y" && !roleOf(name)) return "y";
  if (X_NAMES.has(name.toLowerCase())) return "x";
  if (Y_NAMES.has(name.toLowerCase())) return "y";
  return undefined;
}

function geoKind(name: string, a: Json): "lat" | "lon" | undefined {
  const sn = str(a, "standard_name");
  if (sn === "latitude") return "lat";
  if (sn === "longitude") return "lon";
  const units = str(a, "units")?.toLowerCase();
  if (units === "degrees_north" || units === "degree_north") return "lat";
  if (units === "degrees_east" || units === "degree_east") return "lon";
  const r = roleOf(name);
  return r === "lat" || r === "lon" ? r : undefined;
}

/** The grid mapping named by the data variables (CF `grid_mapping`), else one standing alone. */
function findMapping(arrays: Map<string, StoredArray>): { name: string; attrs: Json } | undefined {
  for (const arr of arrays.values()) {
    const gm = str(arr.meta.attrs, "grid_mapping");
    if (!gm || arr.shape.length < 2) continue;
    // The extended form "crs: x y" names the variable first.
    const name = gm.trim().split(/[:\s]+/)[0];
    const m = arrays.get(name);
    if (m) return { name, attrs: m.meta.attrs };
  }
  for (const [name, arr] of arrays) {
    if (arr.shape.length > 1) continue;
    const a = arr.meta.attrs;
    if (typeof a.grid_mapping_name === "string" || typeof a.crs_wkt === "string") return { name, attrs: a };
  }
  return undefined;
}

/** The stored latitude/longitude over a 2-D region of the grid, leading dimensions (WRF's Time) at index 0. */
export async function readLatLonPlane(
  arr: StoredArray,
  lead: number,
  region: [number, number][],
): Promise<Float32Array | Float64Array> {
  const lead0: [number, number][] = Array.from({ length: lead }, () => [0, 1]);
  return await arr.read([...lead0, ...region]);
}

/** A 2-D latitude or longitude: (y, x), or (Time, y, x) as WRF stores XLAT/XLONG, read at the first time. */
function latLonLead(arr: StoredArray): number | undefined {
  if (arr.shape.length === 2) return 0;
  if (arr.shape.length === 3 && roleOf(arr.dims[0]) === "time") return 1;
  return undefined;
}

/**
 * The projected axes of a group without 1-D latitude/longitude: undefined when it has neither
 * projected axes nor 2-D latitude/longitude (the caller then refuses it as before); throws with
 * the reason when it has a grid gridcast cannot serve (curvilinear with no projection stated,
 * unknown mapping). Without stored x/y values, the projection is recovered where the producer
 * states it (projection-recovery.ts) and the axes rebuilt from it.
 */
export async function findProjectedAxes(
  arrays: Map<string, StoredArray>,
  groupAttrs: Json,
): Promise<ProjectedAxes | undefined> {
  let x: [string, StoredArray] | undefined;
  let y: [string, StoredArray] | undefined;
  for (const [name, arr] of arrays) {
    if (arr.shape.length !== 1 || arr.dims[0] !== name) continue;
    const k = axisKind(name, arr.meta.attrs);
    if (k === "x" && !x) x = [name, arr];
    if (k === "y" && !y) y = [name, arr];
  }
  let lat2d: [string, StoredArray] | undefined;
  let lon2d: [string, StoredArray] | undefined;
  for (const [name, arr] of arrays) {
    if (latLonLead(arr) === undefined) continue;
    const k = geoKind(name, arr.meta.attrs);
    if (k === "lat" && !lat2d) lat2d = [name, arr];
    if (k === "lon" && !lon2d) lon2d = [name, arr];
  }
  let mapping = findMapping(arrays);
  if (!x || !y) {
    if (lat2d && lon2d) return recoveredAxes(arrays, groupAttrs, mapping, lat2d, lon2d);
    return undefined;
  }
  if (!mapping) {
    // No CF grid mapping beside stored x/y values (xwrf's output, whose wrf_projection holds a
    // pyproj object no Zarr writer keeps): the projection the producer's own keys state, if any.
    const onGrid = [...arrays.values()].filter((a) => a.dims.includes(y[0]) && a.dims.includes(x[0]));
    const found = recoverCrs(onGrid, undefined, groupAttrs);
    if (typeof found === "string") {
      throw new CorruptDataError(`projected coordinates ${x[0]}/${y[0]} without a CF grid mapping, and ${found}`);
    }
    if (!found) {
      throw new CorruptDataError(
        `projected coordinates ${x[0]}/${y[0]} without a CF grid mapping (grid_mapping attribute, crs_wkt): ` +
          "gridcast cannot tell where the nodes lie",
      );
    }
    mapping = { name: found.from, attrs: found.attrs };
  }
  const crs = crsOf(mapping.attrs);
  if (!crs) {
    const gmn = str(mapping.attrs, "grid_mapping_name");
    throw new CorruptDataError(
      `grid mapping ${mapping.name}${gmn ? ` (${gmn})` : ""} is not one gridcast can project ` +
        "(no known grid_mapping_name, crs_wkt or proj4 string)",
    );
  }
  const grid2d = (a: [string, StoredArray] | undefined) =>
    a && a[1].shape.length === 2 && a[1].dims[0] === y[0] && a[1].dims[1] === x[0] ? a : undefined;
  const lat = grid2d(lat2d);
  const lon = grid2d(lon2d);
  const auxiliary = [mapping.name, ...(lat ? [lat[0]] : []), ...(lon ? [lon[0]] : [])];
  return {
    x: x[1],
    y: y[1],
    xName: x[0],
    yName: y[0],
    mapping,
    crs,
    lat2d: lat && lon ? lat[1] : undefined,
    lon2d: lat && lon ? lon[1] : undefined,
    lat2dName: lat && lon ? lat[0] : undefined,
    lon2dName: lat && lon ? lon[0] : undefined,
    auxiliary,
    latLonLead: 0,
  };
}

/**
 * Axes for a grid stored with 2-D latitude/longitude only: the projection recovered and the x/y
 * values rebuilt through the first node (projectionOf then checks them against the stored nodes);
 * refused by name when no projection is stated or the one stated cannot be read.
 */
async function recoveredAxes(
  arrays: Map<string, StoredArray>,
  groupAttrs: Json,
  mapping: { name: string; attrs: Json } | undefined,
  lat2d: [string, StoredArray],
  lon2d: [string, StoredArray],
): Promise<ProjectedAxes> {
  const lead = latLonLead(lat2d[1])!;
  const [yDim, xDim] = lat2d[1].dims.slice(lead);
  const [ny, nx] = lat2d[1].shape.slice(lead);
  const what = `a curvilinear grid (2-D ${lat2d[0]}/${lon2d[0]} on ${yDim}, ${xDim}, no ${yDim}/${xDim} values)`;
  if (latLonLead(lon2d[1]) !== lead || lon2d[1].dims.slice(lead).join() !== [yDim, xDim].join()) {
    throw new CorruptDataError(`${what}: its latitude and longitude lie on different dimensions`);
  }
  const onGrid = [...arrays.values()].filter((a) => a.dims.includes(yDim) && a.dims.includes(xDim));
  const found = recoverCrs(onGrid, mapping, groupAttrs);
  if (found === undefined) {
    // No projection stated: a curvilinear grid, placed by its nodes (curvilinearProjectionOf).
    return {
      x: undefined,
      y: undefined,
      xName: xDim,
      yName: yDim,
      recovered: {
        x: Float64Array.from({ length: nx }, (_, i) => i),
        y: Float64Array.from({ length: ny }, (_, j) => j),
        from: "the stored nodes (no projection stated)",
      },
      mapping: { name: lat2d[0], attrs: {} },
      crs: undefined,
      lat2d: lat2d[1],
      lon2d: lon2d[1],
      lat2dName: lat2d[0],
      lon2dName: lon2d[0],
      auxiliary: [lat2d[0], lon2d[0]],
      latLonLead: lead,
    };
  }
  if (typeof found === "string") throw new CorruptDataError(`${what}: ${found}`);
  const converter = converterOf(found.crs, mapping?.name ?? found.from);
  const [row0, col0] = await Promise.all([
    Promise.all(
      [lat2d[1], lon2d[1]].map((a) =>
        readLatLonPlane(a, lead, [
          [0, 1],
          [0, nx],
        ]),
      ),
    ),
    Promise.all(
      [lat2d[1], lon2d[1]].map((a) =>
        readLatLonPlane(a, lead, [
          [0, ny],
          [0, 1],
        ]),
      ),
    ),
  ]);
  const axes = rebuildAxes(
    (p) => converter.forward(p),
    { lat: row0[0][0], lon: row0[1][0] },
    { lat: row0[0][nx - 1], lon: row0[1][nx - 1] },
    { lat: col0[0][ny - 1], lon: col0[1][ny - 1] },
    nx,
    ny,
    found.dx,
    found.dy,
  );
  return {
    x: undefined,
    y: undefined,
    xName: xDim,
    yName: yDim,
    recovered: { ...axes, from: found.from },
    mapping: { name: mapping?.name ?? found.from, attrs: found.attrs },
    crs: found.crs,
    lat2d: lat2d[1],
    lon2d: lon2d[1],
    lat2dName: lat2d[0],
    lon2dName: lon2d[0],
    auxiliary: [...(mapping ? [mapping.name] : []), lat2d[0], lon2d[0]],
    latLonLead: lead,
  };
}

/** The step of a regular axis; refuses an axis that is not evenly spaced. */
function regularStep(name: string, c: Float64Array): number {
  if (c.length < 2) throw new CorruptDataError(`the ${name} coordinate has fewer than two nodes`);
  for (const v of c) if (!Number.isFinite(v)) throw new CorruptDataError(`the ${name} coordinate has missing values`);
  const step = (c[c.length - 1] - c[0]) / (c.length - 1);
  if (step === 0) throw new CorruptDataError(`the ${name} coordinate does not advance`);
  for (let i = 1; i < c.length; i++) {
    if (Math.abs(c[i] - (c[0] + i * step)) > 1e-3 * Math.abs(step)) {
      throw new CorruptDataError(`the ${name} coordinate is not evenly spaced (gridcast projects regular grids)`);
    }
  }
  return step;
}

/** Factor from the stored coordinate units to the CRS's own (metres, or degrees for a rotated pole). */
function unitScale(name: string, attrs: Json, degrees: boolean): number {
  const u = (str(attrs, "units") ?? (degrees ? "degrees" : "m")).trim().toLowerCase();
  if (degrees) {
    if (/^deg|^degrees?(_east|_north)?$/.test(u) || u === "1") return 1;
    if (u === "radians" || u === "rad") return 180 / Math.PI;
  } else {
    if (["m", "metre", "metres", "meter", "meters", "1"].includes(u)) return 1;
    if (["km", "kilometre", "kilometres", "kilometer", "kilometers"].includes(u)) return 1000;
  }
  throw new CorruptDataError(`the ${name} coordinate is in "${u}", a unit gridcast does not read`);
}

function converterOf(crs: Crs, mappingName: string): proj4.Converter {
  try {
    return proj4(geographicOf(crs.definition), crs.definition);
  } catch (cause) {
    throw new CorruptDataError(`the CRS of grid mapping ${mappingName} (${crs.source}) cannot be read`, {}, { cause });
  }
}

/** The geographic bounding box of the grid's cells: edges sampled densely, pole and antimeridian handled. */
function boundsOf(p: GridProjection): [number, number, number, number] {
  const lons: number[] = [];
  const lats: number[] = [];
  const steps = 64;
  const edge = (fx: number, fy: number) => {
    const [lon, lat] = p.converter.inverse([p.x0 + fx * p.dx, p.y0 + fy * p.dy]);
    if (Number.isFinite(lon) && Number.isFinite(lat)) {
      lons.push(lon);
      lats.push(lat);
    }
  };
  const xs = [-0.5, p.nx - 0.5];
  const ys = [-0.5, p.ny - 0.5];
  for (let k = 0; k <= steps; k++) {
    const fx = -0.5 + (k / steps) * p.nx;
    const fy = -0.5 + (k / steps) * p.ny;
    for (const y of ys) edge(fx, y);
    for (const x of xs) edge(x, fy);
  }
  if (lons.length === 0) throw new CorruptDataError("the grid's CRS places none of its edges on the earth");
  let south = Math.min(...lats);
  let north = Math.max(...lats);
  // A pole inside the domain: every longitude, up to the pole.
  for (const pole of [90, -90]) {
    const [px, py] = p.converter.forward([0, pole]);
    const fx = (px - p.x0) / p.dx;
    const fy = (py - p.y0) / p.dy;
    if (fx >= -0.5 && fx <= p.nx - 0.5 && fy >= -0.5 && fy <= p.ny - 0.5) {
      if (pole > 0) north = 90;
      else south = -90;
      return [-180, south, 180, north].map(round9) as [number, number, number, number];
    }
  }
  // The smallest arc holding every edge longitude.
  const { west, span } = smallestArc(lons);
  return [round9(west), round9(south), round9(west + span), round9(north)];
}

const round9 = (x: number) => Math.round(x * 1e9) / 1e9;

/**
 * The projection of a grid with its axes read: regular axes in the CRS's units, the CRS checked
 * against the stored 2-D latitude/longitude (a few whole rows and columns: corners, edges and the
 * middle), and the geographic bounding box.
 */
export async function projectionOf(
  axes: ProjectedAxes,
  xValues: Float64Array,
  yValues: Float64Array,
): Promise<{ projection: GridProjection; bbox: [number, number, number, number]; dlat: number; dlon: number }> {
  if (!axes.crs) return curvilinearProjectionOf(axes);
  const crs = axes.crs;
  const degrees = /ob_tran|longlat|latlong/.test(crs.definition);
  // Recovered axes are in the CRS's own units already.
  const sx = axes.x ? unitScale(axes.xName, axes.x.meta.attrs, degrees) : 1;
  const sy = axes.y ? unitScale(axes.yName, axes.y.meta.attrs, degrees) : 1;
  const x = Float64Array.from(xValues, (v) => v * sx);
  const y = Float64Array.from(yValues, (v) => v * sy);
  const dx = regularStep(axes.xName, x);
  const dy = regularStep(axes.yName, y);
  const p: GridProjection = {
    definition: crs.definition,
    source: crs.source,
    mappingName: str(axes.mapping.attrs, "grid_mapping_name") ?? null,
    variable: axes.mapping.name,
    attrs: axes.mapping.attrs,
    xName: axes.xName,
    yName: axes.yName,
    xAttrs: axes.x?.meta.attrs ?? { standard_name: "projection_x_coordinate", units: "m" },
    yAttrs: axes.y?.meta.attrs ?? { standard_name: "projection_y_coordinate", units: "m" },
    x0: x[0],
    dx,
    y0: y[0],
    dy,
    nx: x.length,
    ny: y.length,
    units: degrees ? "degrees" : "m",
    lat2d: axes.lat2dName ?? null,
    lon2d: axes.lon2dName ?? null,
    // Published beside the variables only when they are the grid's own 2-D (not WRF's per-time) arrays.
    lat2dArray: axes.latLonLead === 0 ? axes.lat2d : undefined,
    lon2dArray: axes.latLonLead === 0 ? axes.lon2d : undefined,
    checkedCells: null,
    recovered: axes.recovered?.from ?? null,
    converter: converterOf(crs, axes.mapping.name),
  };
  if (axes.lat2d && axes.lon2d) p.checkedCells = await crossCheck(p, axes.lat2d, axes.lon2d, axes.latLonLead);
  const bbox = boundsOf(p);
  const perDeg = degrees ? 1 : METRES_PER_DEGREE;
  return { projection: p, bbox, dlat: round9(Math.abs(dy) / perDeg), dlon: round9(Math.abs(dx) / perDeg) };
}

/**
 * A curvilinear grid as a projected grid over its own index space: every node read (the grid is
 * its nodes), x/y the column and row numbers, the converter drawn from the nodes.
 */
async function curvilinearProjectionOf(
  axes: ProjectedAxes,
): Promise<{ projection: GridProjection; bbox: [number, number, number, number]; dlat: number; dlon: number }> {
  const lat2d = axes.lat2d!;
  const [ny, nx] = lat2d.shape.slice(axes.latLonLead);
  const whole: [number, number][] = [
    [0, ny],
    [0, nx],
  ];
  const [lat, lon] = await Promise.all([lat2d, axes.lon2d!].map((a) => readLatLonPlane(a, axes.latLonLead, whole)));
  const nodes = curvilinearNodes(lat, lon, ny, nx, { lat: axes.lat2dName!, lon: axes.lon2dName! });
  const p: GridProjection = {
    definition: "curvilinear (the stored nodes, no projection)",
    source: "nodes",
    mappingName: null,
    variable: "",
    attrs: {},
    xName: axes.xName,
    yName: axes.yName,
    xAttrs: { long_name: "column number", units: "1" },
    yAttrs: { long_name: "row number", units: "1" },
    x0: 0,
    dx: 1,
    y0: 0,
    dy: 1,
    nx,
    ny,
    units: "index",
    lat2d: axes.lat2dName ?? null,
    lon2d: axes.lon2dName ?? null,
    lat2dArray: axes.latLonLead === 0 ? axes.lat2d : undefined,
    lon2dArray: axes.latLonLead === 0 ? axes.lon2d : undefined,
    checkedCells: null,
    recovered: null,
    nodes,
    converter: nodeConverter(nodes),
  };
  const deg = round9(nodes.spacing / (Math.PI / 180));
  return { projection: p, bbox: curvilinearBounds(nodes), dlat: deg, dlon: deg };
}

/** Largest distance, in cells, between a stored node position and the CRS's; refuses beyond CRS_CHECK_CELLS. */
async function crossCheck(p: GridProjection, lat2d: StoredArray, lon2d: StoredArray, lead: number): Promise<number> {
  const rows = [...new Set([0, p.ny >> 1, p.ny - 1])];
  const cols = [...new Set([0, p.nx >> 1, p.nx - 1])];
  const regions: [number, number][][] = [
    ...rows.map((r): [number, number][] => [
      [r, r + 1],
      [0, p.nx],
    ]),
    ...cols.map((c): [number, number][] => [
      [0, p.ny],
      [c, c + 1],
    ]),
  ];
  let worst = 0;
  let where = "";
  for (const region of regions) {
    const [lats, lons] = await Promise.all([lat2d, lon2d].map((a) => readLatLonPlane(a, lead, region)));
    const [[r0, r1], [c0, c1]] = region;
    let k = 0;
    for (let j = r0; j < r1; j++) {
      for (let i = c0; i < c1; i++, k++) {
        const lat = lats[k];
        const lon = lons[k];
        if (!Number.isFinite(lat) || !Number.isFinite(lon)) continue;
        const [gx, gy] = p.converter.forward([lon, lat]);
        const d = Math.hypot((gx - (p.x0 + i * p.dx)) / p.dx, (gy - (p.y0 + j * p.dy)) / p.dy);
        if (!(d <= worst)) {
          worst = Number.isFinite(d) ? d : Number.POSITIVE_INFINITY;
          where = `${p.yName}=${j}, ${p.xName}=${i}`;
        }
      }
    }
  }
  if (!(worst <= CRS_CHECK_CELLS)) {
    const crs = p.recovered
      ? `the projection read from ${p.recovered}`
      : `the CRS of grid mapping ${p.variable} (${p.source})`;
    throw new CorruptDataError(
      `${crs} puts node ${where} ` +
        `${Number.isFinite(worst) ? worst.toFixed(2) : "off the earth"} cells from the stored latitude/longitude ` +
        `(at most ${CRS_CHECK_CELLS} allowed): the grid is refused rather than drawn in the wrong place`,
    );
  }
  return Math.round(worst * 1e4) / 1e4;
}

/**
 * True when stored wind components are relative to the grid's axes rather than east/north:
 * cfgrib's GRIB_uvRelativeToGrid, or a CF standard name that says so (x_wind, grid_eastward_wind).
 */
export function gridRelativeAttrs(a: Record<string, unknown>): boolean {
  const flag = a.GRIB_uvRelativeToGrid;
  if (flag === 1 || flag === "1" || flag === true) return true;
  const sn = typeof a.standard_name === "string" ? a.standard_name : "";
  return ["x_wind", "y_wind", "grid_eastward_wind", "grid_northward_wind"].includes(sn);
}

/** WRF's own wind components, along its grid's axes (raw wrfout; MAP_PROJ among the globals). */
const WRF_GRID_WINDS = new Set(["U10", "V10"]);

/** gridRelativeAttrs, or a raw WRF output's U10/V10 (WRF writes every wind along its grid). */
export function gridRelative(stored: string, attrs: Record<string, unknown>, groupAttrs: Json): boolean {
  return gridRelativeAttrs(attrs) || (groupAttrs.MAP_PROJ !== undefined && WRF_GRID_WINDS.has(stored));
}
