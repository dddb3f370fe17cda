// A forecast group as gridcast reads it: decoded run times, lead times, levels, ensemble members
// and the lat/lon grid, plus each registered variable with the role of every dimension, its
// temporal meaning and its unit conversion. Built from metadata and the small coordinate arrays
// only. Anything gridcast cannot read correctly refuses the whole group with a reason. What each
// stored array is and what its coordinates say is group-coordinates.ts's; the lat/lon grid,
// lat-lon-grid.ts's (a projected one, projected-grid.ts's); an accumulation's window checked
// against its values, accumulation-window.ts's.

import { CorruptDataError, GridcastError, StoreUnavailableError } from "../errors.ts";
import { canonicalByMeaning } from "../registry/cf-meaning.ts";
import type { Registry, VariableEntry } from "../registry/registry.ts";
import { type ResolvedTemporal, resolveTemporal, withDataWindow } from "../registry/temporal.ts";
import { type Converter, converter } from "../registry/units.ts";
import { accumulationWindow, ecmwfAccumulation } from "./accumulation-window.ts";
import type { StoredArray } from "./array.ts";
import { shownAttribute, unitsProblem } from "./attribute-budget.ts";
import { cellGridOf } from "./cell-grid.ts";
import { type CellAxes, findCellAxes } from "./cell-layouts.ts";
import { variableProblem } from "./cf.ts";
import type { DimRole, Role } from "./dims.ts";
import {
  auxiliaryNames,
  entryOf,
  findCoordinates,
  heightOf,
  horizontalAxis,
  ingestedHours,
  levelsIn,
  scalarLevelOf,
  scalarMemberOf,
  strAttr,
} from "./group-coordinates.ts";
import { checkAxis, circularLon, type Grid, gridOf, readAxis } from "./lat-lon-grid.ts";
import type { Json } from "./metadata.ts";
import { findProjectedAxes, gridRelative, type ProjectedAxes, projectionOf } from "./projected-grid.ts";
import { timeAxesOf } from "./time-axes.ts";
import { type Claim, servedClaims } from "./variable-claims.ts";
import { checkFixedNodes, isWrf, WRF_RAIN_PARTS, WRF_ROTATION, wrfGridNorth, wrfPrecipitation } from "./wrf.ts";

export interface GroupVariable {
  /** Canonical registry name. */
  name: string;
  /** Name of the array in the store. */
  stored: string;
  entry: VariableEntry;
  array: StoredArray;
  /**
   * Role of each dimension, in storage order; "single" for a dimension of one entry gridcast has no
   * role for (MET Norway's height1, GraphCast's batch): always read at index 0.
   */
  roles: DimRole[];
  /** Stored names of the dimensions of one entry read at index 0 ("single" roles). */
  squeezed: string[];
  /**
   * The one level a variable without a level dimension lies on, from a scalar level coordinate
   * (a pressure-level file after ds.squeeze(): isobaricInhPa = 850 in its `coordinates`).
   */
  scalarLevel?: { value: number; units: string | undefined };
  /**
   * The one ensemble member a variable without a member dimension holds, from a scalar member
   * coordinate (a scalar realization or number in its `coordinates`): answers name it.
   */
  scalarMember?: number;
  /**
   * How the array was recognised when its name is not a registered one: the CF rule that matched
   * ("standard_name air_temperature at 2 m"). Undefined for arrays known by name.
   */
  meaning?: string;
  /** Units of the values gridcast answers with: canonical when the stored unit converts, else stored. */
  units: string;
  /** Units the store declares (the registry's when it declares none). */
  storedUnits: string;
  /** False when the stored unit cannot be converted to the canonical one: values stay as stored. */
  canonical: boolean;
  /** Stored → canonical; undefined when there is nothing to convert (or it cannot be converted). */
  convert: Converter | undefined;
  /** The variable's temporal meaning in this group. */
  temporal: ResolvedTemporal;
  /**
   * The grid the variable is stored on: the group's `grid` (the same object) unless the group holds
   * variables on several grids and this one sits on another (see ForecastGroup.grids).
   */
  grid: Grid;
  /** Stored names of the variable's latitude and longitude (or y and x) coordinates: its grid's key. */
  gridCoords: { lat: string; lon: string };
  /** Per dimension with the role "fixed", the one index read (anemoi-datasets' variables axis). */
  fixed?: number[];
  /**
   * Set for a wind component stored along a projected grid's axes (CF x_wind/y_wind,
   * grid_eastward_wind, cfgrib's GRIB_uvRelativeToGrid): the other component, read beside it so
   * that every answer turns the pair to east/north (forecast/read.ts). `along` is the grid axis
   * this component lies along: "x" answers as the eastward component, "y" as the northward one.
   */
  turn?: { partner: GroupVariable; along: "x" | "y" };
  /**
   * Set for WRF's total precipitation (wrf.ts): this array is RAINC, the cumulus scheme's part,
   * and `plus` RAINNC, the grid-scale part on the same dimensions, added on every read so that
   * tp is never answered as one of the two alone.
   */
  plus?: GroupVariable;
}

/** One horizontal grid of a group, keyed by the stored names of its latitude and longitude coordinates. */
export interface GroupGrid {
  lat: string;
  lon: string;
  grid: Grid;
}

/** A stored array left out of the group's variables, with the reason and its CF description. */
export interface UnregisteredArray {
  stored: string;
  reason: string;
  dims: string[];
  units: string | null;
  long_name: string | null;
  standard_name: string | null;
  /** Set when the array is a registered variable whose stored encoding gridcast cannot decode. */
  refused?: { variable: string; problem: string };
  /** The variable this array claimed and was not served for (another claims it too: see reason). */
  contested?: string;
}

export interface ForecastGroup {
  /** forecast/<name> */
  id: string;
  name: string;
  /**
   * The group's name as stored (a wrfout file's colons kept), which the URL-safe id may not
   * spell: the last segment of its path, or the store's own name for a dataset at the root.
   */
  storedName: string;
  /** Path of the group inside the store ("" when the dataset sits at the store root). */
  path: string;
  format: 2 | 3;
  attrs: Json;
  /** Run (initialisation) times, UTC milliseconds, in storage order. */
  runs: number[];
  /** Lead times in hours, in storage order. */
  leads: number[];
  /**
   * True for a store without a lead axis (analysis, reanalysis): each stored time is a run with
   * the single lead 0.
   */
  analysis: boolean;
  levels: number[] | undefined;
  levelUnits: string | undefined;
  /** Ensemble member numbers, in storage order; undefined without a member dimension. */
  members: number[] | undefined;
  /**
   * Per run, the last lead hour the store has ingested (dynamical.org's ingested_forecast_length:
   * the latest run is written lead by lead); undefined where the store does not say.
   */
  ingested: (number | undefined)[] | undefined;
  /** Index of the member the maps draw: the control (number 0) when there is one, else the first. */
  controlMember: number | undefined;
  /** The group's first grid: its preferred latitude/longitude coordinates (or projected y/x). */
  grid: Grid;
  /**
   * Every grid a served variable sits on, the group's `grid` first. More than one when the group
   * holds variables on several grids (cfgrib hypercubes merged, atmosphere and wave fields in one
   * dataset): each variable is then read, located and drawn on its own grid (GroupVariable.grid).
   */
  grids: GroupGrid[];
  variables: Map<string, GroupVariable>;
  /** Stored arrays that are neither coordinates nor registered variables. */
  unregistered: UnregisteredArray[];
  /** How the run and lead axes were read from the stored coordinates, in words. */
  timeAxes: string;
  /** Stored coordinate array names by role. */
  coordNames: Partial<Record<Role, string>>;
}

export interface GroupInput {
  id: string;
  /** Path of the group in the store. */
  path: string;
  /** Its name as stored (ForecastGroup.storedName); the id's name when not given. */
  storedName?: string;
  format: 2 | 3;
  attrs: Json;
  arrays: Map<string, StoredArray>;
  /** Budget of a cell grid's tables, MiB (cell_grid_mb; default CELL_GRID_MB). */
  cellGridMb?: number;
}

/**
 * A group whose metadata gridcast cannot use: a fault of the store (503 to clients), not of the
 * request, and not an outage that a retry a moment later would cure.
 */
export class GroupUnreadableError extends StoreUnavailableError {}

export async function buildForecastGroup(input: GroupInput, registry: Registry): Promise<ForecastGroup> {
  try {
    return await build(input, registry);
  } catch (e) {
    // An outage while reading the coordinates stays an outage (retried at once).
    if (e instanceof StoreUnavailableError) throw e;
    const reason = e instanceof GridcastError ? e.message : "its metadata cannot be read";
    throw new GroupUnreadableError(`forecast group ${input.id} cannot be read: ${reason}`, {}, { cause: e });
  }
}

async function build(input: GroupInput, registry: Registry): Promise<ForecastGroup> {
  for (const [name, arr] of input.arrays) {
    const problem = arr.meta.array?.problem;
    if (problem) throw new CorruptDataError(`array ${name}: ${problem}`);
  }
  const { coords: coordNames, scalar } = findCoordinates(input.arrays);
  // Without 1-D latitude/longitude axes, a cell axis (unstructured or reduced grid) or a projected
  // grid: a projected grid's y/x axes take the row and column roles, a cell axis the column role.
  let cellAxes: CellAxes | undefined;
  if (!coordNames.lat || !coordNames.lon) {
    cellAxes = findCellAxes(input.arrays, input.attrs);
    if (cellAxes?.anemoi) coordNames.time = cellAxes.anemoi.dates;
  }
  let projected: ProjectedAxes | undefined;
  if (!cellAxes && (!coordNames.lat || !coordNames.lon)) {
    projected = await findProjectedAxes(input.arrays, input.attrs);
    if (projected) {
      coordNames.lat = projected.yName;
      coordNames.lon = projected.xName;
    }
  }
  if (!cellAxes && (!coordNames.lat || !coordNames.lon)) {
    throw new CorruptDataError("no 1-D latitude and longitude coordinates (lat/latitude, lon/longitude)");
  }
  // WRF's XLAT/XLONG on Time are read at the first time: only where they stay put.
  if (projected?.lat2d && projected.lon2d && projected.latLonLead > 0) {
    await checkFixedNodes(projected.lat2d, projected.lon2d);
  }
  const axes = await timeAxesOf(input.arrays, { time: coordNames.time, lead: coordNames.lead, scalar }, input.attrs);
  const { runs, leads, analysis } = axes;
  coordNames.time = axes.coords.time;
  if (axes.coords.lead) coordNames.lead = axes.coords.lead;
  else delete coordNames.lead;
  const coord = (r: Role) => input.arrays.get(coordNames[r]!)!;
  // The dimension a role's coordinate indexes: a recovered projection's y/x are dimensions without
  // stored values (their names stand in coordNames).
  const dimOf = (name: string) => input.arrays.get(name)?.dims[0] ?? name;
  const recovered = projected?.recovered;
  // Coordinates have no missing values: a v2 fill_value that happens to equal a coordinate (zarr's
  // default 0 at longitude 0) must not turn it into NaN, so only scale and offset apply.
  const readFloat = async (r: Role) => {
    const { scale, offset } = coord(r).packing;
    return Float64Array.from(await coord(r).readRaw(), (x) => x * scale + offset);
  };
  const [latRaw, lonRaw, levelRaw, memberRaw] = await Promise.all([
    cellAxes ? Promise.resolve(undefined) : recovered ? Promise.resolve(recovered.y) : readFloat("lat"),
    cellAxes ? Promise.resolve(undefined) : recovered ? Promise.resolve(recovered.x) : readFloat("lon"),
    coordNames.level ? coord("level").readRaw() : Promise.resolve(undefined),
    coordNames.member ? coord("member").readRaw() : Promise.resolve(undefined),
  ]);
  let grid: Grid;
  if (cellAxes) {
    const geo = await cellGridOf(cellAxes, input.cellGridMb);
    // A whole HEALPix grid's centres are computed, never all at discovery: its first and last
    // stand for them (only a cell grid's ends are read of these: fingerprints; the cells count is n).
    const c = geo.cells;
    const whole = c.axes.healpix && !c.ids;
    const ends = (k: 0 | 1) => Float64Array.of(c.centre(0)[k], c.centre(c.n - 1)[k]);
    grid = {
      lat: whole ? ends(0) : c.lat,
      lon: whole ? ends(1) : c.lon,
      latAscending: true,
      lon360: false,
      dlat: geo.spacingDeg,
      dlon: geo.spacingDeg,
      bbox: geo.bbox,
      global: geo.global,
      cells: geo.cells,
    };
  } else if (projected) {
    const { projection, bbox, dlat, dlon } = await projectionOf(
      projected,
      lonRaw as Float64Array,
      latRaw as Float64Array,
    );
    grid = { ...gridOf(Float64Array.of(0, 1), Float64Array.of(0, 1)), bbox, dlat, dlon, projection };
    grid.lat = latRaw as Float64Array;
    grid.lon = lonRaw as Float64Array;
    grid.latAscending = projection.dy > 0;
    // WRF states its grid's rotation to true north at every node: winds are turned by it.
    const gridNorth = isWrf(input.attrs)
      ? await wrfGridNorth(input.arrays, dimOf(projected.yName), dimOf(projected.xName))
      : undefined;
    if (gridNorth) {
      projection.gridNorth = gridNorth;
      projection.rotationFrom = WRF_ROTATION.join("/");
      for (const n of WRF_ROTATION) projected.auxiliary.push(n);
    }
    grid.global = false;
    grid.lon360 = false;
  } else {
    checkAxis("latitude", latRaw as Float64Array);
    checkAxis("longitude", circularLon(lonRaw as Float64Array));
    grid = gridOf(latRaw as Float64Array, lonRaw as Float64Array);
  }
  const members = memberRaw?.map(Number);
  const controlMember = members ? Math.max(0, members.indexOf(0)) : undefined;
  // The spacing the temporal windows run over: lead steps, or the spacing of an analysis's times.
  const sortedRuns = [...runs].sort((a, b) => a - b);
  const steps = analysis ? sortedRuns.map((t) => (t - sortedRuns[0]) / 3_600_000) : leads;

  const length: Partial<Record<Role, number>> = {
    time: runs.length,
    lead: leads.length,
    level: levelRaw?.length,
    member: members?.length,
    lat: grid.lat.length,
    lon: grid.lon.length,
  };
  if (cellAxes) {
    length.lat = undefined;
    length.lon = grid.cells!.n;
  }
  const dimRole = new Map<string, DimRole>();
  for (const [role, name] of Object.entries(coordNames) as [Role, string][]) {
    if (role !== "time" && role !== "lead" && !scalar.has(role)) dimRole.set(dimOf(name), role);
  }
  for (const role of ["time", "lead"] as const) {
    const name = coordNames[role];
    if (name && !axes.notDims.has(role)) dimRole.set(input.arrays.get(name)!.dims[0], role);
  }
  for (const [dim, role] of axes.dimRoles) dimRole.set(dim, role);
  // Latitude/longitude axes of other grids (regular lat/lon groups only): the dimension names they
  // index, to the coordinate holding their values.
  const cellNames = cellAxes && {
    lat: cellAxes.lat?.name ?? cellAxes.dim,
    lon: cellAxes.lon?.name ?? cellAxes.dim,
  };
  const primary: GroupGrid = cellNames ? { ...cellNames, grid } : { lat: coordNames.lat!, lon: coordNames.lon!, grid };
  const axisCoord = new Map<string, string>(
    cellAxes
      ? [[cellAxes.dim, primary.lon]]
      : [
          [dimOf(coordNames.lat!), coordNames.lat!],
          [dimOf(coordNames.lon!), coordNames.lon!],
        ],
  );
  if (cellAxes) {
    dimRole.set(cellAxes.dim, "lon");
    if (cellAxes.anemoi) {
      dimRole.set(cellAxes.anemoi.variablesDim, "fixed");
      dimRole.set(cellAxes.anemoi.ensembleDim, "single");
    }
  }
  if (!projected && !cellAxes) {
    for (const [name, arr] of input.arrays) {
      const axis = dimRole.has(name) ? undefined : horizontalAxis(name, arr);
      if (!axis) continue;
      dimRole.set(name, axis);
      axisCoord.set(name, name);
    }
  }
  const grids = new Map<string, GroupGrid | string>([[`${primary.lat},${primary.lon}`, primary]]);
  /** The grid of a pair of axes, read on first use; a string says why it cannot be used. */
  const gridFor = async (latName: string, lonName: string): Promise<GroupGrid | string> => {
    const key = `${latName},${lonName}`;
    let g = grids.get(key);
    if (g === undefined) {
      try {
        const [lat, lon] = await Promise.all([latName, lonName].map((n) => readAxis(input.arrays.get(n)!)));
        checkAxis("latitude", lat);
        checkAxis("longitude", circularLon(lon));
        g = { lat: latName, lon: lonName, grid: gridOf(lat, lon) };
      } catch (e) {
        if (e instanceof StoreUnavailableError) throw e;
        g = `its grid (${latName}, ${lonName}) cannot be read: ${e instanceof GridcastError ? e.message : "unreadable coordinates"}`;
      }
      grids.set(key, g);
    }
    return g;
  };

  const variables = new Map<string, GroupVariable>();
  const unregistered: UnregisteredArray[] = [];
  // Variables found by name and by CF meaning, served once the loop has seen every claimant.
  const byName: Claim<GroupVariable>[] = [];
  const byMeaning: Claim<GroupVariable>[] = [];
  // WRF's parts of total precipitation, paired once every array has been seen.
  const rain = new Map<string, Claim<GroupVariable>>();
  const coordSet = new Set(Object.values(coordNames));
  const aux = auxiliaryNames(input.arrays);
  for (const n of projected?.auxiliary ?? cellAxes?.auxiliary ?? []) aux.add(n);
  // Candidate variables: each stored array, or each entry of an anemoi-datasets data array's
  // variables axis (named by the root's `variables` attribute).
  const candidates: [string, StoredArray, number[] | undefined][] = [];
  for (const [stored, arr] of input.arrays) {
    const anemoi = cellAxes?.anemoi;
    if (anemoi && stored === "data") {
      const d = arr.dims.indexOf(anemoi.variablesDim);
      anemoi.names.forEach((name, k) => {
        const fixed = arr.dims.map((_, i) => (i === d ? k : 0));
        candidates.push([name, arr, fixed]);
      });
    } else candidates.push([stored, arr, undefined]);
  }
  for (const [stored, arr, fixed] of candidates) {
    if (coordSet.has(stored) || aux.has(stored)) continue;
    // Scalars and 1-D arrays beside the grid are coordinates too (cfgrib's surface, number, ...).
    if (arr.shape.length < 2) continue;
    const attrs = arr.meta.attrs;
    const skip = (reason: string, refused?: UnregisteredArray["refused"], contested?: string) =>
      unregistered.push({
        stored,
        reason,
        dims: arr.dims,
        units: shownAttribute(strAttr(attrs, "units")) ?? null,
        long_name: shownAttribute(strAttr(attrs, "long_name")) ?? null,
        standard_name: shownAttribute(strAttr(attrs, "standard_name")) ?? null,
        ...(refused ? { refused } : {}),
        ...(contested ? { contested } : {}),
      });
    // A dimension of one entry with no role of its own means nothing to a reader: read at index 0.
    const roles: (DimRole | undefined)[] = arr.dims.map(
      (d, i) => dimRole.get(d) ?? (arr.shape[i] === 1 ? "single" : undefined),
    );
    const stag = arr.dims.find((d) => STAGGERED.test(d));
    if (stag) {
      skip(
        `staggered on ${stag} (WRF's values at the faces of its cells, half a cell off the grid's nodes): ` +
          "not served, as gridcast answers with values at the nodes and does not average them back",
      );
      continue;
    }
    if (!roles.includes("lon") || (!cellAxes && !roles.includes("lat"))) {
      skip(
        "not on the group's latitude/longitude grid (a variable needs the group's latitude and longitude, or " +
          "projected y and x, as two of its dimensions)",
      );
      continue;
    }
    if (roles.indexOf("lat") !== roles.lastIndexOf("lat") || roles.indexOf("lon") !== roles.lastIndexOf("lon")) {
      skip(`two dimensions have the same role (${arr.dims.join(", ")}: give each axis one dimension)`);
      continue;
    }
    const on = cellAxes
      ? primary
      : await gridFor(axisCoord.get(arr.dims[roles.indexOf("lat")])!, axisCoord.get(arr.dims[roles.indexOf("lon")])!);
    if (typeof on === "string") {
      skip(on);
      continue;
    }
    if (!cellAxes) {
      length.lat = on.grid.lat.length;
      length.lon = on.grid.lon.length;
    }
    const unknown = arr.dims.filter((_, i) => roles[i] === undefined);
    if (unknown.length) {
      skip(
        `dimension ${unknown.join(", ")} is not one gridcast knows (it reads run, lead, level, member and ` +
          "latitude/longitude dimensions by their names or their coordinates' CF standard_name, and a dimension " +
          "of one entry at its only index)",
      );
      continue;
    }
    const roled = roles.filter((r) => r !== "single" && r !== "fixed");
    if (new Set(roled).size !== roled.length) {
      skip(`two dimensions have the same role (${arr.dims.join(", ")}: give each axis one dimension)`);
      continue;
    }
    const bad = roles.findIndex((r, i) => r !== "single" && r !== "fixed" && length[r as Role] !== arr.shape[i]);
    if (bad >= 0) {
      skip(
        `dimension ${arr.dims[bad]} has ${arr.shape[bad]} entries, its coordinate ${length[roles[bad] as Role]} ` +
          "(a variable must span its coordinates whole)",
      );
      continue;
    }
    const squeezed = arr.dims.filter((_, i) => roles[i] === "single");
    // WRF's RAINC and RAINNC are each part of tp: served only as their sum (wrfPrecipitation).
    const rainPart = WRF_RAIN_PARTS.has(stored) && isWrf(input.attrs);
    let entry = rainPart ? registry.lookup("tp") : entryOf(registry, stored, attrs);
    let meaning: string | undefined;
    if (!entry) {
      // Not a name the registry knows: what its CF description says it is, else why not.
      const found = canonicalByMeaning({
        standardName: strAttr(attrs, "standard_name"),
        cellMethods: strAttr(attrs, "cell_methods"),
        heightM: await heightOf(input.arrays, arr, squeezed, input.attrs),
        onLevels: roles.includes("level"),
      });
      if ("reason" in found) {
        skip(found.reason);
        continue;
      }
      entry = registry.lookup(found.canonical);
      if (!entry) {
        skip(`its ${found.rule} means ${found.canonical}, which this registry does not hold`);
        continue;
      }
      meaning = found.rule;
    }
    // An encoding gridcast does not understand refuses the variable, loudly, never served raw.
    const problem = variableProblem(attrs, arr.packing) ?? unitsProblem(strAttr(attrs, "units"));
    if (problem) {
      skip(`${entry.name} refused: ${problem}`, { variable: entry.name, problem });
      continue;
    }
    const storedUnits = strAttr(attrs, "units") ?? entry.units;
    const convert = converter(storedUnits, entry.units);
    const identity = convert !== undefined && convert(0) === 0 && convert(1) === 1;
    const scalarLevel = roles.includes("level")
      ? undefined
      : await scalarLevelOf(input.arrays, arr, squeezed, input.attrs);
    const scalarMember = roles.includes("member")
      ? undefined
      : await scalarMemberOf(input.arrays, arr, squeezed, input.attrs);
    const v: GroupVariable = {
      name: entry.name,
      stored,
      entry,
      array: arr,
      roles: roles as DimRole[],
      squeezed,
      ...(scalarLevel ? { scalarLevel } : {}),
      ...(scalarMember !== undefined ? { scalarMember } : {}),
      ...(meaning ? { meaning } : {}),
      units: convert ? entry.units : storedUnits,
      storedUnits,
      canonical: convert !== undefined,
      convert: identity ? undefined : convert,
      temporal: resolveTemporal(entry.temporal, attrs, steps, analysis),
      grid: on.grid,
      gridCoords: { lat: on.lat, lon: on.lon },
      ...(fixed ? { fixed } : {}),
    };
    const claim = { v, skip: (reason: string) => skip(reason, undefined, v.name) };
    if (rainPart) rain.set(stored, claim);
    else (meaning ? byMeaning : byName).push(claim);
  }
  const total = wrfPrecipitation(rain, input.arrays);
  if (total) byName.push(total);
  for (const v of servedClaims(byName, byMeaning)) variables.set(v.name, v);
  pairGridRelative(variables, new Map([...byName, ...byMeaning].map((c) => [c.v, c.skip])), input.attrs);
  for (const v of variables.values()) {
    if (v.temporal.kind === "instantaneous" || v.temporal.window !== "since_start" || analysis || leads.length < 2) {
      continue;
    }
    if (ecmwfAccumulation(v.array.meta.attrs, input.attrs)) continue;
    const latest = runs.indexOf(Math.max(...runs));
    let window = await accumulationWindow(v, latest, controlMember ?? 0, leads);
    // A total in two parts runs from the start only when both parts do.
    if (v.plus && window.window === "since_start") {
      window = await accumulationWindow(v.plus, latest, controlMember ?? 0, leads);
    }
    v.temporal = withDataWindow(v.temporal, window);
  }
  const ingested = await ingestedHours(input.arrays, input.arrays.get(coordNames.time!)!, runs.length);
  const name = input.id.slice(input.id.indexOf("/") + 1);
  return {
    ingested,
    id: input.id,
    name,
    storedName: input.storedName ?? name,
    path: input.path,
    format: input.format,
    attrs: input.attrs,
    runs,
    leads,
    analysis,
    ...levelsIn(levelRaw, coordNames.level ? strAttr(coord("level").meta.attrs, "units") : undefined),
    members,
    controlMember,
    grid,
    grids: [
      primary,
      ...[...grids.values()].filter((g): g is GroupGrid => typeof g !== "string" && g !== primary),
    ].filter((g) => g === primary || [...variables.values()].some((v) => v.grid === g.grid)),
    variables,
    unregistered: unregistered.sort((a, b) => a.stored.localeCompare(b.stored)),
    timeAxes: axes.how,
    coordNames: Object.fromEntries(
      Object.entries(coordNames).filter(([r]) => !scalar.has(r as Role) && !axes.notDims.has(r as Role)),
    ) as Partial<Record<Role, string>>,
  };
}

/** WRF's staggered dimensions (west_east_stag, south_north_stag, bottom_top_stag). */
const STAGGERED = /_stag$/;

/** The other horizontal wind component of each registered one. */
const WIND_PAIRS: Record<string, { partner: string; along: "x" | "y" }> = {
  u10: { partner: "v10", along: "x" },
  v10: { partner: "u10", along: "y" },
  u: { partner: "v", along: "x" },
  v: { partner: "u", along: "y" },
};

/**
 * Wind components stored along a projected grid's axes are answered turned to east/north, which
 * needs both of the pair on the same grid and dimensions: each is given its partner, and one
 * without is left out with what would serve it (never answered as stored under an eastward or
 * northward name). On a latitude/longitude grid the grid's axes are east and north already.
 */
function pairGridRelative(
  variables: Map<string, GroupVariable>,
  skips: Map<GroupVariable, (r: string) => void>,
  groupAttrs: Json,
) {
  const along = (v: GroupVariable) => gridRelative(v.stored, v.array.meta.attrs, groupAttrs);
  const relative = [...variables.values()].filter((v) => along(v) && v.grid.projection);
  for (const v of relative) {
    const pair = WIND_PAIRS[v.name];
    const sn = v.array.meta.attrs.standard_name;
    const flag = v.array.meta.attrs.GRIB_uvRelativeToGrid;
    const what =
      typeof sn === "string" && sn !== "unknown"
        ? `standard_name ${sn}`
        : flag !== undefined
          ? "GRIB_uvRelativeToGrid"
          : "WRF's U10/V10";
    let problem: string | undefined;
    const p = pair ? variables.get(pair.partner) : undefined;
    if (!pair) problem = `${v.name} is no wind component gridcast can turn`;
    else if (!p) problem = `its partner ${pair.partner} is not in the group`;
    else if (!along(p)) problem = `its partner ${p.stored} is not grid-relative`;
    else if (p.grid !== v.grid || p.roles.join() !== v.roles.join() || p.array.shape.join() !== v.array.shape.join()) {
      problem = `its partner ${p.stored} lies on other dimensions`;
    }
    if (problem || !pair || !p) {
      variables.delete(v.name);
      skips.get(v)?.(
        `${v.name} refused: a wind component along the grid's axes (${what}) is answered turned to true north, ` +
          `which needs both components on one grid, and ${problem} (store both components with the same dimensions)`,
      );
      continue;
    }
    v.turn = { partner: p, along: pair.along };
  }
}
