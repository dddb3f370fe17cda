// The documents of a build besides its tiles, all derived from the manifest's layer specs:
// catalog.json, one TileJSON 3.0.0 per layer-run-lead, one legend (PNG + JSON) per layer, and the
// shared transparent tile.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  CATALOG,
  type Catalog,
  type CatalogLayer,
  EMPTY_TILE,
  HIDPI_SUFFIX,
  legendPaths,
  TILE_ROUTE_TEMPLATE,
  tileDir,
  tilejsonPath,
  windPaths,
} from "../published/layout.ts";
import { WMTS_CAPABILITIES, wmtsCapabilities } from "../published/wmts.ts";
import { displayUnit, unitChoices } from "../registry/display.ts";
import { emptyTilePng } from "../render/empty-tile.ts";
import { intervalText, legendJson, renderLegendPng } from "../render/legend.ts";
import { type BuildManifest, type LayerSpec, layerHidpiMax } from "./layer-spec.ts";

const TILE_FILE = "{z}/{x}/{y}.png";
const TILE_FILE_2X = `{z}/{x}/{y}${HIDPI_SUFFIX}.png`;

function routeFor(layer: string, token: string, hours: number, drawing: string | undefined): string {
  const route = TILE_ROUTE_TEMPLATE.slice(1)
    .replace("{layer}", encodeURIComponent(layer))
    .replace("{run}", token)
    .replace("{lead}", String(hours));
  return drawing ? route.replace("{drawing}", drawing) : route.replace("&drawing={drawing}", "");
}

/**
 * Every URL the catalog holds is `${base}/${path}`: absolute on public_url when it is set (what
 * TileJSON 3.0.0 and GIS clients need), else a path from the build root, and the catalog says the
 * setting is missing.
 */
function catalogLayer(l: LayerSpec, maxZoom: number, hidpiMaxZoom: number, base: string): CatalogLayer {
  const legend = legendPaths(l.id);
  // render-job.ts writes @2x tiles for base fields up to this zoom, orientation-job.ts for the
  // orientation layer (archive builds drop the fields).
  // Overlays (arrows, isobars) have theirs drawn at twice the scale, to a lower zoom.
  const hidpi = layerHidpiMax(l.recipe.kind, hidpiMaxZoom);
  return {
    id: l.id,
    ...(l.drawing ? { drawing: l.drawing } : {}),
    group: l.group,
    ...(l.group_stored_name !== undefined ? { group_stored_name: l.group_stored_name } : {}),
    variable: l.variable,
    level: l.level,
    level_units: l.level_units,
    long_name: l.long_name,
    units: l.units,
    display: displayUnit(l.style, l.units),
    units_options: unitChoices(l.style, l.units),
    temporal: l.temporal,
    style: { colormap: l.style.colormap, min: l.style.min, max: l.style.max, resample: l.recipe.resample },
    style_range: l.style_range,
    member: l.member,
    role: l.role,
    derived_from: l.recipe.kind === "field" ? null : l.recipe.sources,
    // The orientation layer has no values, so no legend.
    legend: l.role === "orientation" ? null : { png: `${base}/${legend.png}`, json: `${base}/${legend.json}` },
    kind: l.kind,
    bounds: l.bounds,
    minzoom: 0,
    maxzoom: maxZoom,
    ...(hidpi >= 0 ? { hidpi_maxzoom: hidpi } : {}),
    runs: l.runs.map((r) => ({
      run: r.iso,
      token: r.token,
      leads: r.leads.map((ld) => ({
        hours: ld.hours,
        valid_time: ld.valid_time,
        interval: ld.interval ?? null,
        tiles: `${base}/${tileDir(l.id, r.token, ld.hours, l.drawing)}/${TILE_FILE}`,
        route: `${base}/${routeFor(l.id, r.token, ld.hours, l.drawing)}`,
        ...(hidpi >= 0
          ? {
              tiles_2x: `${base}/${tileDir(l.id, r.token, ld.hours, l.drawing)}/${TILE_FILE_2X}`,
              route_2x: `${base}/${routeFor(l.id, r.token, ld.hours, l.drawing)}&scale=2`,
            }
          : {}),
        tilejson: `${base}/${tilejsonPath(l.id, r.token, ld.hours)}`,
        ...(l.recipe.kind === "arrows"
          ? { wind: `${base}/${windPaths(tileDir(l.id, r.token, ld.hours, l.drawing)).json}` }
          : {}),
      })),
    })),
  };
}

/** What a document says where public_url is not set: its paths are relative to an unknown host. */
export const PUBLIC_URL_MISSING =
  "public_url is not set (setting public_url, flag --public-url): the URLs in this document are paths, not the " +
  "absolute URLs TileJSON 3.0.0 and WMTS clients need";

export function buildCatalog(manifest: BuildManifest, publicUrl = ""): Catalog {
  return {
    build_id: manifest.build_id,
    public_url: publicUrl || null,
    ...(publicUrl ? {} : { public_url_missing: PUBLIC_URL_MISSING }),
    generated_at: manifest.created_at,
    tile_url_template: `${publicUrl}${TILE_ROUTE_TEMPLATE}`,
    layers: manifest.layers.map((l) => catalogLayer(l, manifest.max_zoom, manifest.hidpi_max_zoom ?? -1, publicUrl)),
  };
}

function tileJson(
  layer: CatalogLayer,
  run: string,
  lead: CatalogLayer["runs"][number]["leads"][number],
  publicUrl: string,
) {
  const [w, s, e, n] = layer.bounds;
  const east = e < w ? e + 360 : e;
  const centerLon = (((((w + east) / 2 + 180) % 360) + 360) % 360) - 180;
  return {
    tilejson: "3.0.0",
    name: `${layer.long_name} (${layer.id}), run ${run}, +${lead.hours} h`,
    description: [
      layer.role !== "base"
        ? `${layer.long_name}, a transparent overlay`
        : `${layer.long_name} in ${layer.display.units}`,
      intervalText(layer.temporal),
      lead.interval ? `over ${lead.interval.start}..${lead.interval.end}` : undefined,
      `valid ${lead.valid_time}`,
    ]
      .filter(Boolean)
      .join(", "),
    version: "1.0.0",
    scheme: "xyz",
    // Absolute as TileJSON 3.0.0 requires when the base URL is known; else a path, and said so.
    tiles: [lead.tiles],
    ...(publicUrl ? {} : { public_url_missing: PUBLIC_URL_MISSING }),
    minzoom: layer.minzoom,
    maxzoom: layer.maxzoom,
    bounds: layer.bounds,
    center: [
      Math.round(centerLon * 1000) / 1000,
      Math.round(((s + n) / 2) * 1000) / 1000,
      layer.kind === "global" ? 1 : 4,
    ],
    legend: layer.legend?.json,
    // Beyond TileJSON 3.0.0: what the pixels mean, for clients that label them.
    units: layer.units,
    display: layer.display,
    role: layer.role,
  };
}

function put(root: string, rel: string, data: string | Uint8Array): void {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
}

/** Writes catalog, TileJSON, legends and the empty tile into the build directory `dir`. */
export function writeBuildDocs(dir: string, manifest: BuildManifest, rendering?: string, publicUrl = ""): Catalog {
  const catalog = { ...buildCatalog(manifest, publicUrl), ...(rendering ? { rendering } : {}) };
  put(dir, EMPTY_TILE, emptyTilePng());
  for (const spec of manifest.layers) {
    const layer = catalog.layers.find((l) => l.id === spec.id)!;
    const legend = legendPaths(spec.id);
    if (layer.legend) put(dir, legend.png, renderLegendPng(spec.style));
    const source = { units: spec.units, style: spec.style, temporal: spec.temporal, long_name: spec.long_name };
    if (layer.legend)
      put(dir, legend.json, `${JSON.stringify(legendJson(source, 11, spec.role === "base"), null, 1)}\n`);
    for (const run of layer.runs) {
      for (const lead of run.leads) {
        put(
          dir,
          tilejsonPath(spec.id, run.token, lead.hours),
          `${JSON.stringify(tileJson(layer, run.run, lead, publicUrl))}\n`,
        );
      }
    }
  }
  put(dir, CATALOG, `${JSON.stringify(catalog, null, 1)}\n`);
  put(dir, WMTS_CAPABILITIES, wmtsCapabilities(catalog, publicUrl, PUBLIC_URL_MISSING));
  return catalog;
}
