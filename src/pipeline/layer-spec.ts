// What a build renders, layer by layer. One LayerSpec per map layer carries everything the catalog
// says about it, so `gridcast publish` can write the catalog from shard manifests alone: its
// recipe (which variables, what is drawn), its runs and leads with their fingerprints. Made from
// the store's map layers and the operator's Selection; the orientation layer has a fixed one.

import type { MapLayerRef } from "../forecast/layers.ts";
import { intervalsOf, latestRun } from "../forecast/select.ts";
import { runToken } from "../published/layout.ts";
import type { Manifest } from "../published/manifest.ts";
import type { DerivedKind } from "../registry/derived.ts";
import type { MapStyle, Temporal } from "../registry/registry.ts";
import { LABEL_RANK_VERSION } from "../render/label-rank.ts";
import { ORIENTATION_LAYER_ID, ORIENTATION_VERSION } from "../render/orientation.ts";
import type { Resample } from "../render/resample.ts";
import { type BBox, ORIENTATION_HIDPI_BELOW, overlayHidpiMax } from "../render/tiles.ts";
import { isoNoZone } from "../store/describe.ts";
import type { Grid } from "../store/store.ts";
import { drawingOf, RENDERER_VERSION, sha } from "./fingerprint.ts";

export interface Selection {
  /** Group ids (forecast/global) or names (global); default every group. */
  groups?: string[];
  /** Canonical names or aliases; default every variable with a map style. */
  vars?: string[];
  runs: "latest" | "all";
  /** Lead hours to keep; default every lead. */
  leads?: number[];
  maxZoom: number;
  /** Add the orientation layer (place names, subdivision borders, rivers, lakes). Default false. */
  orientation?: boolean;
  /** Build what can be built when a variable of `vars` has no layer in any group (--allow-missing-vars). */
  allowMissingVars?: boolean;
  /** Build the others when a group of `groups` cannot be read or draws no layer (--allow-missing-groups). */
  allowMissingGroups?: boolean;
  /** Build the others when a lead of `leads` is in no selected layer (--allow-missing-leads). */
  allowMissingLeads?: boolean;
  /** The renderer version the tiles are fingerprinted and filed under (default RENDERER_VERSION). */
  renderer?: string;
}

/** How the tiles of a layer are made from the store: which variables, and what is drawn. */
export interface Recipe {
  /** "field": one stored variable through its colour ramp; "orientation": places and lines; else a derived layer's kind. */
  kind: "field" | DerivedKind | "orientation";
  /** Canonical names of the variables read, in the order the kind expects. */
  sources: string[];
  resample: Resample;
  /** Arrows: lattice spacing in screen pixels. */
  spacing_px?: number;
  /** Contours: interval in canonical units. */
  interval?: number;
  /**
   * Arrows and contours: the big places' names they give way to (label-rank.ts), named by the
   * versions that decide them, so a change re-renders them. Set whether or not the build draws the
   * orientation layer: `gridcast start`'s quick stages (without it) and its full build (with it)
   * then draw the same overlays, and the full build reuses them.
   */
  keep_names?: string;
}

export interface LeadSpec {
  index: number;
  hours: number;
  valid_time: string;
  /** The interval the drawn value covers (non-instantaneous fields whose window is known), else null. */
  interval: { start: string; end: string } | null;
  fingerprint: string;
}

export interface RunSpec {
  index: number;
  iso: string;
  token: string;
  leads: LeadSpec[];
}

export interface LayerSpec {
  id: string;
  group: string;
  /** The group's name as stored, when its URL-safe id spells it otherwise (a wrfout file's colons). */
  group_stored_name?: string;
  variable: string;
  level: number | null;
  levelIndex: number | null;
  level_units: string | null;
  long_name: string;
  units: string;
  temporal: Temporal;
  style: MapStyle;
  /** "registry" for the registry's fixed range, "data" when drawn over the field's own range (unit not convertible). */
  style_range: "registry" | "data";
  /**
   * Ensemble variables: the member drawn and the rule that chose it: "control" only when member 0
   * exists and is the one drawn, "first" when the store has no member 0 (WeatherBench2's IFS ENS
   * holds members 1..50 and no control); null otherwise.
   */
  member: { value: number; choice: "control" | "first" } | null;
  recipe: Recipe;
  /**
   * A base layer fills the map; an overlay (arrows, isobars) is drawn transparent over a base; the
   * orientation layer (places, borders, water) is drawn over whatever is shown.
   */
  role: "base" | "overlay" | "orientation";
  kind: "global" | "regional";
  bounds: BBox;
  /** Tiles one layer-run-lead writes (coverage z0..max zoom). */
  tilesPerLead: number;
  /**
   * The renderer and style the tiles are drawn with (drawingOf), a segment of their paths and
   * pinned URLs (published/layout.ts runPart); absent in manifests of builds made before it was.
   */
  drawing?: string;
  runs: RunSpec[];
}

/** A build's manifest as the pipeline writes and reads it: the plan's full layer specs. */
export type BuildManifest = Manifest<LayerSpec>;

/** TileJSON bounds: -180..180, west > east when the grid crosses the antimeridian. */
function boundsOf(grid: Grid): BBox {
  const [w, s, e, n] = grid.bbox;
  if (grid.global) return [-180, s, 180, n];
  return [w, s, e > 180 ? e - 360 : e, n];
}

function recipeOf(ref: MapLayerRef): Recipe {
  const d = ref.derived?.def;
  if (!d) {
    return { kind: "field", sources: [ref.variable.name], resample: ref.variable.entry.style?.resample ?? "bilinear" };
  }
  const recipe: Recipe = { kind: d.kind, sources: d.sources, resample: d.style.resample ?? "bilinear" };
  if (d.spacing_px !== undefined) recipe.spacing_px = d.spacing_px;
  if (d.interval !== undefined) recipe.interval = d.interval;
  if (d.kind === "arrows" || d.kind === "contours") {
    recipe.keep_names = `orientation ${ORIENTATION_VERSION}, rank ${LABEL_RANK_VERSION}`;
  }
  return recipe;
}

/** One layer's spec from a store map layer: the selected runs and their ingested leads, fingerprinted. */
export function layerSpec(
  ref: MapLayerRef,
  sel: Selection,
  source: string,
  tilesPerLead: number,
  fieldStyle: MapStyle,
): LayerSpec | undefined {
  const { group, variable: v } = ref;
  const def = ref.derived?.def;
  const style = def ? def.style : fieldStyle;
  const recipe = recipeOf(ref);
  const runIndexes = sel.runs === "all" ? group.runs.map((_, i) => i) : [latestRun(group)];
  const leadIndexes = group.leads.map((_, i) => i).filter((i) => !sel.leads || sel.leads.includes(group.leads[i]));
  if (leadIndexes.length === 0 || runIndexes.length === 0) return undefined;
  const allRuns: RunSpec[] = runIndexes
    .sort((a, b) => group.runs[a] - group.runs[b])
    .map((index) => {
      const time = group.runs[index];
      const iso = isoNoZone(time);
      const spans = def ? undefined : intervalsOf(group, v, index);
      // Leads the store has not ingested yet for this run are not maps (they would be empty tiles).
      const ingested = group.ingested?.[index];
      return {
        index,
        iso,
        token: runToken(iso),
        leads: leadIndexes
          .filter((li) => ingested === undefined || group.leads[li] <= ingested)
          .map((li) => {
            const hours = group.leads[li];
            const fingerprint = sha({
              source,
              run: iso,
              lead: hours,
              level: ref.level,
              style,
              recipe,
              renderer: sel.renderer ?? RENDERER_VERSION,
              maxZoom: sel.maxZoom,
            });
            const interval = spans?.[li] ?? null;
            return { index: li, hours, valid_time: isoNoZone(time + hours * 3_600_000), interval, fingerprint };
          }),
      };
    });
  const runs = allRuns.filter((r) => r.leads.length > 0);
  if (runs.length === 0) return undefined;
  return {
    id: ref.id,
    group: group.id,
    ...(group.storedName !== group.name ? { group_stored_name: group.storedName } : {}),
    variable: def ? def.name : v.name,
    level: ref.level,
    levelIndex: ref.levelIndex,
    level_units:
      ref.level === null ? null : ref.levelIndex === null ? (v.scalarLevel?.units ?? null) : (group.levelUnits ?? null),
    long_name: def ? def.long_name : v.entry.long_name,
    units: def ? def.units : v.units,
    temporal: def ? def.temporal : v.temporal,
    style,
    style_range: def || v.canonical ? "registry" : "data",
    member: group.members && v.roles.includes("member") ? memberDrawn(group.members, group.controlMember ?? 0) : null,
    recipe,
    role: def ? def.role : "base",
    kind: v.grid.global ? "global" : "regional",
    bounds: boundsOf(v.grid),
    tilesPerLead,
    drawing: drawingOf(style, recipe, sel.renderer ?? RENDERER_VERSION),
    runs,
  };
}

/** The member an ensemble layer draws, named "control" only when it is member number 0. */
export function memberDrawn(members: number[], index: number): { value: number; choice: "control" | "first" } {
  const value = members[index];
  return { value, choice: value === 0 ? "control" : "first" };
}

/**
 * The day the orientation layer's run falls on. It depends on no forecast, so it has one run (and
 * lead 0): its tile path, archive and tile route then work like any layer's, and its fingerprint
 * (data and drawing version) lets every later build hard-link it.
 */
export const STATIC_RUN = "2000-01-01T00:00:00";

/**
 * The orientation layer's run time: STATIC_RUN plus a number of minutes (under a year) taken from
 * its drawing versions. Its tiles are cached for a year as every run's are (immutable), so a new
 * drawing (an upgrade that changes ORIENTATION_VERSION or RENDERER_VERSION) must come under new
 * URLs, or CDNs and browsers would keep the old labels; the same versions keep the same URLs.
 */
export function staticRunOf(versions: { orientation: string; renderer: string }): string {
  const minutes = Number.parseInt(sha({ drawing: versions }).slice(0, 8), 16) % (365 * 24 * 60);
  return new Date(Date.parse(`${STATIC_RUN}Z`) + minutes * 60_000).toISOString().slice(0, 19);
}

export function orientationLayer(
  maxZoom: number,
  versions = { orientation: ORIENTATION_VERSION, renderer: RENDERER_VERSION },
): LayerSpec {
  const fingerprint = sha({ orientation: versions.orientation, renderer: versions.renderer, maxZoom });
  const run = staticRunOf(versions);
  let tiles = 0;
  for (let z = 0; z <= maxZoom; z++) tiles += 4 ** z;
  const style: MapStyle = { colormap: "overlay", min: 0, max: 1, resample: "nearest" };
  const recipe: Recipe = { kind: "orientation", sources: [], resample: "nearest" };
  return {
    id: ORIENTATION_LAYER_ID,
    group: "",
    variable: ORIENTATION_LAYER_ID,
    level: null,
    levelIndex: null,
    level_units: null,
    long_name: "Places, state and province borders, rivers and lakes",
    units: "1",
    temporal: { kind: "instantaneous" },
    style,
    style_range: "registry",
    member: null,
    recipe,
    role: "orientation",
    kind: "global",
    bounds: [-180, -85.051129, 180, 85.051129],
    tilesPerLead: tiles,
    drawing: drawingOf(style, recipe, versions.renderer),
    runs: [
      {
        index: 0,
        iso: run,
        token: runToken(run),
        leads: [{ index: 0, hours: 0, valid_time: run, interval: null, fingerprint }],
      },
    ],
  };
}

/**
 * The highest zoom a layer of this kind has @2x tiles at, given the build's @2x zoom for base
 * layers (-1: none; buildHidpiMax: the pyramid's top): base fields, the orientation layer
 * (ORIENTATION_HIDPI_BELOW) and the overlays (arrows, isobars, drawn at twice the scale:
 * overlayHidpiMax) all up to it now, any other kind none. The renderer, the plan's file count and the catalog all
 * ask here.
 */
export function layerHidpiMax(kind: Recipe["kind"], baseHidpi: number): number {
  if (baseHidpi < 0) return -1;
  if (kind === "field" || kind === "speed") return baseHidpi;
  if (kind === "orientation") return baseHidpi - ORIENTATION_HIDPI_BELOW;
  if (kind === "arrows" || kind === "contours") return overlayHidpiMax(baseHidpi, kind);
  return -1;
}
