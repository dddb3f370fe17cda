// The dimension names a forecast group's variables are known by to clients: the listing's `dims`,
// the /data views and the export header all use these, so one name means one axis everywhere.
import type { GroupGrid } from "../store/forecast-group.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";

/** Canonical dimension name of each role: the names the spec lists (time, lead_time, lat, lon). */
export const DIM_NAMES = {
  time: "time",
  lead: "lead_time",
  level: "level",
  member: "member",
  lat: "lat",
  lon: "lon",
} as const;

/** Dimension names of a group: a projected grid's rows and columns are y and x, as CF names them. */
export function dimNamesOf(g: ForecastGroup): Record<keyof typeof DIM_NAMES, string> {
  // An unstructured grid's one cell axis takes the column role.
  if (g.grid.cells) return { ...DIM_NAMES, lon: "cell" };
  return g.grid.projection ? { ...DIM_NAMES, lat: "y", lon: "x" } : DIM_NAMES;
}

/**
 * The published names of each grid's latitude and longitude dimensions: the group's first grid is
 * lat/lon (y/x when projected); another grid keeps its stored coordinate names (lat_1,
 * latitude_wave), or lat_<k>/lon_<k> where those would clash with a published name.
 */
export function gridDimNames(g: ForecastGroup): Map<GroupGrid, { lat: string; lon: string }> {
  const first = dimNamesOf(g);
  const out = new Map<GroupGrid, { lat: string; lon: string }>();
  // The grid mapping, and a projected grid's 2-D latitude/longitude, are published under these names.
  const aux = g.grid.projection ? ["spatial_ref", "latitude", "longitude"] : ["spatial_ref"];
  const taken = new Set<string>([...Object.values(first), ...aux, ...g.variables.keys()]);
  g.grids.forEach((grid, k) => {
    if (k === 0) {
      out.set(grid, { lat: first.lat, lon: first.lon });
      return;
    }
    let names = { lat: grid.lat, lon: grid.lon };
    if (taken.has(names.lat) || taken.has(names.lon) || names.lat === names.lon) {
      names = { lat: `lat_${k}`, lon: `lon_${k}` };
    }
    taken.add(names.lat);
    taken.add(names.lon);
    out.set(grid, names);
  });
  return out;
}

/** Published dimension names of one variable: the group's, with its own grid's lat/lon. */
export function variableDimNames(g: ForecastGroup, v: GroupVariable): Record<keyof typeof DIM_NAMES, string> {
  const names = dimNamesOf(g);
  if (g.grids.length < 2) return names;
  const grid = g.grids.find((x) => x.grid === v.grid);
  const own = grid && gridDimNames(g).get(grid);
  return own ? { ...names, ...own } : names;
}

/**
 * Published name of each of a variable's dimensions, in storage order: its role's name, or for a
 * dimension of one entry read at index 0 ("single") the stored name, so /data and the listing say
 * which stored dimension was squeezed (suffixed when it would clash with a role's name).
 */
export function publishedDims(g: ForecastGroup, v: GroupVariable): string[] {
  const own = variableDimNames(g, v);
  const taken = new Set<string>(Object.values(own));
  return v.roles.map((r, d) => {
    if (r !== "single" && r !== "fixed") return own[r];
    const stored = v.array.dims[d];
    return taken.has(stored) ? `${stored}_single` : stored;
  });
}
