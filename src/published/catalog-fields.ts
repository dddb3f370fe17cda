// What an archive build adds to its catalog.json: tile_format, and per lead the archive that
// holds its tiles, so a viewer reading a CDN copy of the build (no API) knows what to fetch.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { archivePath } from "./format.ts";
import { CATALOG, type Catalog } from "./layout.ts";

export function markArchives(dir: string, catalog: Catalog): void {
  const marked = {
    ...catalog,
    tile_format: "pmtiles",
    // One tile per z/x/y in an archive: no @2x tiles.
    layers: catalog.layers.map(({ hidpi_maxzoom: _, ...l }) => ({
      ...l,
      runs: l.runs.map((r) => ({
        ...r,
        leads: r.leads.map(({ tiles_2x: _t, route_2x: _r, ...ld }) => ({
          ...ld,
          // On public_url like the catalog's other URLs, when it is set.
          archive: `${catalog.public_url ?? ""}/${archivePath(l.id, r.token, ld.hours, l.drawing)}`,
        })),
      })),
    })),
  };
  writeFileSync(join(dir, CATALOG), `${JSON.stringify(marked, null, 1)}\n`);
}
