// A synthetic STAC index of any size, written by the build's own writer (stacIndexes) from
// made-up survey entries on real MGRS tiles, and served from memory as a build's documents: for
// the search tests and bench/stac-search.ts (20 items or 20,000, no store needed).
import type { SurveyEntry } from "../../src/embeddings/index-files.ts";
import { squareGeometry } from "../../src/embeddings/item-geometry.ts";
import { tileNameAt } from "../../src/embeddings/mgrs.ts";
import { itemName, parseItemName } from "../../src/embeddings/names.ts";
import type { BuildDocuments } from "../../src/embeddings/published-catalogue.ts";
import { stacIndexes } from "../../src/embeddings/stac/index-writer.ts";

/** Distinct MGRS tiles met on a lattice of points over a lon/lat box, at most `max`. */
export function tilesIn(w: number, s: number, e: number, n: number, step: number, max = Infinity): string[] {
  const out = new Set<string>();
  for (let lat = s; lat <= n && out.size < max; lat += step)
    for (let lon = w; lon <= e && out.size < max; lon += step) out.add(tileNameAt(lon, lat));
  return [...out];
}

/** `n` consecutive monthly periods from January 2020 (2020_01_01_2020_01_31, ...). */
export function monthlyPeriods(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const y = 2020 + Math.floor(i / 12);
    const m = (i % 12) + 1;
    const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const mm = String(m).padStart(2, "0");
    out.push(`${y}_${mm}_01_${y}_${mm}_${last}`);
  }
  return out;
}

export interface Spec {
  family?: string;
  product?: string;
  version?: string;
  tiles: readonly string[];
  periods: readonly string[];
}

export function surveyEntries(specs: readonly Spec[]): SurveyEntry[] {
  const entries: SurveyEntry[] = [];
  for (const { family = "geofm", product = "map", version = "v1.2", tiles, periods } of specs)
    for (const period of periods)
      for (const tile of tiles) {
        const g = squareGeometry(tile);
        const ref = parseItemName(itemName(family, version, product, period, tile));
        const [x0, , , y1] = g.bbox_utm;
        entries.push({
          ref,
          entry: {
            item: ref.name,
            crs: g.crs,
            epsg: g.epsg,
            proj: g.proj,
            bbox: g.bbox,
            bbox_utm: g.bbox_utm,
            transform: [3125, 0, x0, 0, -3125, y1],
            shape: [32, 32, 16],
          },
          latent: { dims: ["y", "x", "feature"], dtype: "float32", quantization: "raw" },
        });
      }
  return entries.sort((a, b) => (a.ref.name < b.ref.name ? -1 : a.ref.name > b.ref.name ? 1 : 0));
}

/** The build documents of a STAC index made from these specs; `reads` counts the files opened. */
export function syntheticBuild(
  specs: readonly Spec[],
): BuildDocuments & { reads: string[]; items: string[]; bbox: Map<string, number[]> } {
  const entries = surveyEntries(specs);
  const docs = stacIndexes(entries);
  const reads: string[] = [];
  return {
    reads,
    items: entries.map((e) => e.ref.name),
    bbox: new Map(entries.map((e) => [e.ref.name, e.entry.bbox])),
    json: async <T>(rel: string) => {
      reads.push(rel);
      return docs.get(rel) as T | undefined;
    },
  };
}
