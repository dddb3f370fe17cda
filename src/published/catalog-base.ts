// A published catalog answered on another base URL than the one the build wrote into it: the
// live catalog route of a server whose public_url (or trusted proxy) differs from the build's.
// Every URL of the catalog is `${catalog.public_url ?? ""}/${path}`; here it becomes `${base}/${path}`.
import type { Catalog, CatalogLead } from "./layout.ts";

type Lead = CatalogLead & { archive?: string };

/** The catalog with every URL on `base` (no trailing slash) and public_url set to it. */
export function catalogOnBase(catalog: Catalog, base: string): Catalog {
  const from = catalog.public_url ?? "";
  const move = (url: string): string => (url.startsWith(`${from}/`) ? `${base}${url.slice(from.length)}` : url);
  const { public_url_missing: _, ...rest } = catalog;
  return {
    ...rest,
    public_url: base,
    tile_url_template: move(catalog.tile_url_template),
    layers: catalog.layers.map((l) => ({
      ...l,
      legend: l.legend ? { png: move(l.legend.png), json: move(l.legend.json) } : null,
      runs: l.runs.map((r) => ({
        ...r,
        leads: r.leads.map((ld: Lead) => ({
          ...ld,
          tiles: move(ld.tiles),
          route: move(ld.route),
          tilejson: move(ld.tilejson),
          ...(ld.tiles_2x !== undefined ? { tiles_2x: move(ld.tiles_2x) } : {}),
          ...(ld.route_2x !== undefined ? { route_2x: move(ld.route_2x) } : {}),
          ...(ld.archive !== undefined ? { archive: move(ld.archive) } : {}),
          ...(ld.wind !== undefined ? { wind: move(ld.wind) } : {}),
        })),
      })),
    })),
  };
}
