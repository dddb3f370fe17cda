// What the export catalogue and the models listing say about each group and field.
import { createHash } from "node:crypto";
import type { Registry } from "../registry/registry.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, Grid, GroupVariable, Store } from "../store/store.ts";
import { gridDimNames, publishedDims } from "./dim-names.ts";

/** Group id in the URL form: forecast/global → forecast~global. */
export const tildeId = (id: string): string => id.replaceAll("/", "~");
export const slashId = (id: string): string => id.replaceAll("~", "/");

/**
 * A short revision of a field's layout and encoding: it changes whenever shape, chunking, dtype,
 * codecs, packing, dimension order or coordinates change, and stays put otherwise.
 */
export function schemaRevision(group: ForecastGroup, v: GroupVariable): string {
  const a = v.array;
  const basis = JSON.stringify({
    shape: a.shape,
    chunks: a.chunks,
    dtype: a.dtype,
    codecs: a.meta.array?.codecs,
    packing: a.packing,
    dims: a.dims,
    fill: a.meta.array?.fill_value,
    runs: group.runs,
    leads: group.leads,
    levels: group.levels,
    // A cell grid's count is its cells' (a whole HEALPix grid's lat/lon hold only its ends).
    lat: [v.grid.lat[0], v.grid.lat.at(-1), v.grid.cells?.n ?? v.grid.lat.length],
    lon: [v.grid.lon[0], v.grid.lon.at(-1), v.grid.cells?.n ?? v.grid.lon.length],
  });
  return createHash("sha256").update(basis).digest("hex").slice(0, 12);
}

function range(c: Float64Array, count = c.length) {
  return { min: Math.min(c[0], c[c.length - 1]), max: Math.max(c[0], c[c.length - 1]), count };
}

/** How a group's grid is laid out: regular lat/lon, or projected with its CRS and axes. */
export function gridDescription(group: ForecastGroup) {
  const p = group.grid.projection;
  if (!p) return { kind: "latlon" as const };
  const axis = (origin: number, step: number, n: number) => ({
    first: origin,
    step,
    count: n,
    min: Math.min(origin, origin + step * (n - 1)),
    max: Math.max(origin, origin + step * (n - 1)),
    units: p.units,
  });
  if (p.nodes) {
    return {
      kind: "curvilinear" as const,
      latitude: p.nodes.latName,
      longitude: p.nodes.lonName,
      rows: p.ny,
      columns: p.nx,
      node_spacing_deg: Math.round((p.nodes.spacing * 180 * 1e6) / Math.PI) / 1e6,
      winds_turned_by: p.rotationFrom,
    };
  }
  return {
    kind: "projected" as const,
    grid_mapping_name: p.mappingName,
    crs: { source: p.source, proj4: p.definition.startsWith("+") ? p.definition : null },
    x: axis(p.x0, p.dx, p.nx),
    y: axis(p.y0, p.dy, p.ny),
    latlon_check_cells: p.checkedCells,
    // No x/y values stored: the axes were rebuilt from the projection read from here.
    axes_recovered_from: p.recovered,
    // Where the store states its grid's rotation (WRF's COSALPHA/SINALPHA): winds are turned by it.
    winds_turned_by: p.rotationFrom,
  };
}

function latLonAxes(grid: Grid) {
  return {
    lat: {
      ...range(grid.lat, grid.cells?.n),
      step: grid.dlat,
      order: grid.latAscending ? "ascending" : "descending",
    },
    lon: { ...range(grid.lon, grid.cells?.n), step: grid.dlon },
  };
}

/**
 * Each grid of a group that holds variables on several: the stored coordinate names that key it,
 * the names its dimensions have under /data, its extent and spacing, and the variables on it.
 * Undefined for a group on one grid.
 */
export function gridsListing(group: ForecastGroup) {
  if (group.grids.length < 2) return undefined;
  const names = gridDimNames(group);
  return group.grids.map((g) => ({
    coordinates: { lat: g.lat, lon: g.lon },
    data_dims: names.get(g)!,
    kind: g.grid.global ? "global" : "regional",
    resolution_deg: { lat: g.grid.dlat, lon: g.grid.dlon },
    bbox: g.grid.bbox,
    ...latLonAxes(g.grid),
    variables: [...group.variables.values()]
      .filter((v) => v.grid === g.grid)
      .map((v) => v.name)
      .sort(),
  }));
}

export function exportEntry(group: ForecastGroup) {
  const grids = gridsListing(group);
  const p = group.grid.projection;
  return {
    id: tildeId(group.id),
    group: group.id,
    kind: group.grid.global ? "global" : "regional",
    bbox: group.grid.bbox,
    npy: `/api/export/${tildeId(group.id)}/npy`,
    tiff: `/api/export/${tildeId(group.id)}/tiff`,
    coordinates: {
      time: { values: group.runs.map(isoNoZone), count: group.runs.length },
      lead_time: { hours: group.leads, count: group.leads.length },
      ...(p ? { y: gridDescription(group).y, x: gridDescription(group).x } : latLonAxes(group.grid)),
      level: group.levels ? { values: group.levels, units: group.levelUnits ?? null } : null,
    },
    fields: [...group.variables.values()].map((v) => ({
      name: v.name,
      stored: v.stored,
      aliases: v.entry.aliases,
      units: v.units,
      long_name: v.entry.long_name,
      temporal: v.temporal,
      dims: publishedDims(group, v),
      squeezed: v.squeezed,
      // The one level a variable lies on without a level dimension (a scalar level coordinate).
      ...(v.scalarLevel ? { level: v.scalarLevel } : {}),
      // Stored along a projected grid's axes: exported turned to true north with this partner.
      ...(v.turn ? { turned_with: v.turn.partner.stored } : {}),
      ...(v.plus ? { summed_with: v.plus.stored } : {}),
      ...(v.scalarMember !== undefined ? { member: v.scalarMember } : {}),
      ...(grids ? { grid_coordinates: v.gridCoords } : {}),
      stored_units: v.storedUnits,
      members: v.roles.includes("member") ? group.members : undefined,
      stored_dims: v.array.dims,
      shape: v.array.shape,
      chunks: v.array.chunks,
      dtype: v.array.dtype,
      export_dtype: "float32",
      packed: v.array.packing.scale !== 1 || v.array.packing.offset !== 0,
      schema_revision: schemaRevision(group, v),
    })),
    grid: gridDescription(group),
    ...(grids ? { grids } : {}),
  };
}

/** Groups the store has but gridcast cannot read, with the reason: listed, never silently dropped. */
export async function unavailableGroups(store: Store): Promise<{ id: string; reason: string }[]> {
  return (await store.groupStatus()).filter((g) => !g.ok).map((g) => ({ id: g.id, reason: g.reason ?? "" }));
}

export async function exportCatalogue(store: Store) {
  const groups = await store.forecastGroups();
  return { groups: groups.map(exportEntry), unavailable: await unavailableGroups(store) };
}

export async function modelsListing(store: Store) {
  const groups = await store.forecastGroups();
  const forecast = groups.map((g) => ({
    id: g.id,
    name: g.name,
    // The name as stored, when the URL-safe id spells it otherwise (a wrfout file's colons).
    stored_name: g.storedName,
    model: (g.attrs.model as string | undefined) ?? g.name,
    version: (g.attrs.model_version as string | undefined) ?? null,
    kind: g.grid.global ? "global" : "regional",
    resolution_deg: { lat: g.grid.dlat, lon: g.grid.dlon },
    bbox: g.grid.bbox,
    grid: gridDescription(g),
    runs: g.runs.map(isoNoZone),
    lead_hours: g.leads,
    levels: g.levels ?? null,
    members: g.members ?? null,
    analysis: g.analysis,
    variables: [...g.variables.keys()].sort(),
    // Stored arrays left out, each with the reason and what would make it served.
    unregistered: g.unregistered.map((u) => ({ stored: u.stored, reason: u.reason })),
    ...(g.grids.length > 1 ? { grids: gridsListing(g) } : {}),
  }));
  // Nodes that look like data and are no group gridcast serves: each named with the reason.
  return { forecast, unavailable: await unavailableGroups(store), not_served: await store.notServed() };
}

/** The registry, and every stored array of the readable groups that is not registered (with its CF metadata). */
export function registryListing(registry: Registry, groups: ForecastGroup[] = []) {
  return {
    unregistered: groups.flatMap((g) => g.unregistered.map((u) => ({ group: g.id, ...u }))),
    variables: registry.entries.map((e) => ({
      name: e.name,
      aliases: e.aliases,
      units: e.units,
      long_name: e.long_name,
      standard_name: e.standard_name ?? null,
      temporal: e.temporal,
      map_style: e.style ?? null,
    })),
  };
}
