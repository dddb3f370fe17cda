// An operator's first look at a store: groups, variables, shapes, chunking, codecs, grids, runs.
import type { ForecastGroup } from "./forecast-group.ts";
import type { Store } from "./store.ts";

export const isoNoZone = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

export function describeGroup(g: ForecastGroup) {
  return {
    id: g.id,
    stored_name: g.storedName,
    path: g.path,
    zarr_format: g.format,
    analysis: g.analysis,
    kind: g.grid.global ? "global" : "regional",
    bbox: g.grid.bbox,
    resolution: { lat: g.grid.dlat, lon: g.grid.dlon },
    shape: g.grid.cells ? { cells: g.grid.cells.n } : { lat: g.grid.lat.length, lon: g.grid.lon.length },
    ...(g.grid.cells
      ? { cells: { layout: g.grid.cells.layout, dimension: g.grid.cells.dim, count: g.grid.cells.n } }
      : {}),
    latitude_order: g.grid.latAscending ? "ascending" : "descending",
    longitude_convention: g.grid.lon360 ? "0..360" : "-180..180",
    runs: g.runs.map(isoNoZone),
    lead_hours: g.leads,
    time_axes: g.timeAxes,
    levels: g.levels ?? null,
    members: g.members ?? null,
    // A group holding variables on several grids: each grid, keyed by its stored coordinates.
    ...(g.grids.length > 1
      ? {
          grids: g.grids.map((x) => ({
            coordinates: { lat: x.lat, lon: x.lon },
            kind: x.grid.global ? "global" : "regional",
            bbox: x.grid.bbox,
            resolution: { lat: x.grid.dlat, lon: x.grid.dlon },
            shape: { lat: x.grid.lat.length, lon: x.grid.lon.length },
            latitude_order: x.grid.latAscending ? "ascending" : "descending",
            longitude_convention: x.grid.lon360 ? "0..360" : "-180..180",
          })),
        }
      : {}),
    variables: [...g.variables.values()].map((v) => ({
      name: v.name,
      grid_coordinates: v.gridCoords,
      stored: v.stored,
      units: v.units,
      stored_units: v.storedUnits,
      dims: v.array.dims,
      shape: v.array.shape,
      chunks: v.array.chunks,
      dtype: v.array.dtype,
      codecs: v.array.meta.array?.codecs.map((c) => c.name) ?? [],
      packed: v.array.packing.scale !== 1 || v.array.packing.offset !== 0,
      temporal: v.temporal,
      ...(v.meaning ? { recognised_by: v.meaning } : {}),
      ...(v.squeezed.length ? { squeezed: v.squeezed } : {}),
      ...(v.scalarLevel ? { level: v.scalarLevel } : {}),
      // A grid-relative wind component: answered turned to true north with this partner.
      ...(v.turn ? { turned_with: v.turn.partner.stored } : {}),
      ...(v.plus ? { summed_with: v.plus.stored } : {}),
      ...(v.scalarMember !== undefined ? { member: v.scalarMember } : {}),
    })),
    unregistered: g.unregistered,
  };
}

export async function describeStore(store: Store) {
  const status = await store.groupStatus();
  const groups = await store.forecastGroups();
  const items = await store.embeddingItemPaths();
  return {
    store: store.backend.description,
    forecast_groups: groups.map(describeGroup),
    /** Groups found but not readable, each with the reason; the others are described above. */
    skipped_groups: status.filter((g) => !g.ok).map((g) => ({ id: g.id, path: g.path, reason: g.reason ?? "" })),
    /** Nodes that look like data but are no group gridcast serves, each with the reason and remedy. */
    not_served: await store.notServed(),
    embeddings: { items: items.length, prefixes: [...new Set(items.map((p) => p.split("/").slice(0, 5).join("/")))] },
  };
}
