// What a build renders. One LayerSpec per map layer carries everything the catalog says about it,
// so `gridcast publish` can write the catalog from shard manifests alone. One Job per layer × run
// holds that run's leads: one worker renders them all while the chunk cache still holds the run.
import { createHash } from "node:crypto";
import { ConfigError, StoreUnavailableError } from "../errors.ts";
import { groupLayers, type MapLayerRef } from "../forecast/layers.ts";
import { readValues, regionOf } from "../forecast/read.ts";
import { intervalsOf, latestRun } from "../forecast/select.ts";
import { runToken, tileDir } from "../published/layout.ts";
import type { Manifest } from "../published/manifest.ts";
import { DERIVED_LAYERS, type DerivedKind } from "../registry/derived.ts";
import type { MapStyle, Temporal } from "../registry/registry.ts";
import { ORIENTATION_LAYER_ID, ORIENTATION_VERSION } from "../render/orientation.ts";
import type { Resample } from "../render/resample.ts";
import type { BBox } from "../render/tiles.ts";
import { isoNoZone } from "../store/describe.ts";
import type { ForecastGroup, Grid, GroupVariable, Store } from "../store/store.ts";
import type { CoverageCache } from "./coverage.ts";

/** Bump whenever the pixels a given field and style produce change; every tile then re-renders. */
export const RENDERER_VERSION = "4";

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
  /** Ensemble variables: the member drawn (the control) and the rule that chose it; null otherwise. */
  member: { value: number; choice: "control" } | null;
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
  runs: RunSpec[];
}

/** A build's manifest as the pipeline writes and reads it: the plan's full layer specs. */
export type BuildManifest = Manifest<LayerSpec>;

export interface LeadJob {
  /** <layer>/<run token>/<lead hours>: the manifest key and the tile directory below tiles/. */
  key: string;
  index: number;
  hours: number;
  fingerprint: string;
  /** Tile directory relative to the build root. */
  dir: string;
  /** Set when the previous build has this fingerprint: hard-link its tiles instead of rendering. */
  reuse?: { dir: string; uniform: number; bytes: number; hidpi?: number };
}

export interface Job {
  /** <layer>/<run token>; jobs sort by it, which makes sharding deterministic. */
  id: string;
  layer: string;
  group: string;
  variable: string;
  levelIndex: number | null;
  run: number;
  runIso: string;
  style: MapStyle;
  recipe: Recipe;
  tilesPerLead: number;
  leads: LeadJob[];
  /** Set when the job renders only a slice of each lead's pyramid (see splitForThreads). */
  part?: { index: number; count: number };
}

export interface Plan {
  maxZoom: number;
  layers: LayerSpec[];
  /** Groups the store has that could not be read, with the reason; every other group still builds. */
  skipped: { id: string; reason: string }[];
  /** Things the operator should know (a unit gridcast cannot convert, ...). */
  warnings: string[];
  jobs: Job[];
  /** Hash of every job key and fingerprint: shards of one build must agree on it. */
  hash: string;
}

const sha = (value: unknown): string => createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);

/**
 * What the pixels of a variable depend on in the store's metadata (chunk bytes are not read: that
 * would cost as much as rendering on an HTTP store). The lengths of the run and lead axes are left
 * out on purpose: a new cycle appends a run, and the runs already published keep their
 * fingerprints. A run rewritten in place with identical metadata needs `build --no-reuse`.
 */
export function sourceRevision(group: ForecastGroup, v: GroupVariable): string {
  const a = v.array;
  const { grid } = v;
  return sha({
    stored: v.stored,
    dtype: a.dtype,
    codecs: a.meta.array?.codecs,
    chunks: a.chunks,
    dims: a.dims,
    fill: a.meta.array?.fill_value,
    packing: a.packing,
    attrs: a.meta.attrs,
    groupAttrs: group.attrs,
    levels: group.levels ?? null,
    lat: [grid.lat[0], grid.lat.at(-1), grid.lat.length],
    lon: [grid.lon[0], grid.lon.at(-1), grid.lon.length],
  });
}

/** The coverage cache's key of a variable's grid: the group id, and the grid's coordinates when not the first. */
export function coverageKey(group: ForecastGroup, v: GroupVariable): string {
  return v.grid === group.grid ? group.id : `${group.id}|${v.gridCoords.lat},${v.gridCoords.lon}`;
}

/** TileJSON bounds: -180..180, west > east when the grid crosses the antimeridian. */
function boundsOf(grid: Grid): BBox {
  const [w, s, e, n] = grid.bbox;
  if (grid.global) return [-180, s, 180, n];
  return [w, s, e > 180 ? e - 360 : e, n];
}

async function selectGroups(
  store: Store,
  names: string[] | undefined,
): Promise<{ groups: ForecastGroup[]; skipped: { id: string; reason: string }[] }> {
  const status = await store.groupStatus();
  const ids = status.map((g) => g.id);
  const wanted = names?.map((name) => {
    const id = name.startsWith("forecast/") ? name : `forecast/${name}`;
    if (!ids.includes(id)) throw new ConfigError(`no forecast group ${id} in the store (have ${ids.join(", ")})`);
    return id;
  });
  const groups: ForecastGroup[] = [];
  const skipped: { id: string; reason: string }[] = [];
  for (const g of status) {
    if (wanted && !wanted.includes(g.id)) continue;
    if (!g.ok) {
      skipped.push({ id: g.id, reason: g.reason ?? "unreadable" });
      continue;
    }
    try {
      groups.push(await store.forecastGroup(g.id));
    } catch (e) {
      skipped.push({ id: g.id, reason: e instanceof Error ? e.message : String(e) });
    }
  }
  return { groups, skipped };
}

/**
 * The range a variable whose stored unit gridcast cannot convert is drawn over: the finite values
 * of one field (latest run, middle lead), so the map shows the field's structure rather than one
 * flat colour of a scale in other units.
 */
async function dataRange(group: ForecastGroup, ref: MapLayerRef): Promise<{ min: number; max: number }> {
  const v = ref.variable;
  const region = regionOf(group, v, {
    run: latestRun(group),
    lead: Math.floor(group.leads.length / 2),
    level: ref.levelIndex ?? undefined,
  });
  const field = await readValues(v, region);
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const x of field) {
    if (!Number.isFinite(x)) continue;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (!Number.isFinite(min)) return { min: 0, max: 1 };
  if (max === min) return { min, max: min + 1 };
  return { min, max };
}

function recipeOf(ref: MapLayerRef): Recipe {
  const d = ref.derived?.def;
  if (!d) {
    return { kind: "field", sources: [ref.variable.name], resample: ref.variable.entry.style?.resample ?? "bilinear" };
  }
  const recipe: Recipe = { kind: d.kind, sources: d.sources, resample: d.style.resample ?? "bilinear" };
  if (d.spacing_px !== undefined) recipe.spacing_px = d.spacing_px;
  if (d.interval !== undefined) recipe.interval = d.interval;
  return recipe;
}

function layerSpec(
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
              renderer: RENDERER_VERSION,
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
    variable: def ? def.name : v.name,
    level: ref.level,
    levelIndex: ref.levelIndex,
    level_units: ref.level === null ? null : (group.levelUnits ?? null),
    long_name: def ? def.long_name : v.entry.long_name,
    units: def ? def.units : v.units,
    temporal: def ? def.temporal : v.temporal,
    style,
    style_range: def || v.canonical ? "registry" : "data",
    member:
      group.members && v.roles.includes("member")
        ? { value: group.members[group.controlMember ?? 0], choice: "control" }
        : null,
    recipe,
    role: def ? def.role : "base",
    kind: v.grid.global ? "global" : "regional",
    bounds: boundsOf(v.grid),
    tilesPerLead,
    runs,
  };
}

/**
 * The run the orientation layer is filed under. It depends on no forecast, so it has one run at a
 * fixed time (and lead 0): its tile path, archive and tile route then work like any layer's, and
 * its fingerprint (data and drawing version) lets every later build hard-link it.
 */
export const STATIC_RUN = "2000-01-01T00:00:00";

export function orientationLayer(maxZoom: number): LayerSpec {
  const fingerprint = sha({ orientation: ORIENTATION_VERSION, renderer: RENDERER_VERSION, maxZoom });
  let tiles = 0;
  for (let z = 0; z <= maxZoom; z++) tiles += 4 ** z;
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
    style: { colormap: "overlay", min: 0, max: 1, resample: "nearest" },
    style_range: "registry",
    member: null,
    recipe: { kind: "orientation", sources: [], resample: "nearest" },
    role: "orientation",
    kind: "global",
    bounds: [-180, -85.051129, 180, 85.051129],
    tilesPerLead: tiles,
    runs: [
      {
        index: 0,
        iso: STATIC_RUN,
        token: runToken(STATIC_RUN),
        leads: [{ index: 0, hours: 0, valid_time: STATIC_RUN, interval: null, fingerprint }],
      },
    ],
  };
}

export function jobsOf(layers: LayerSpec[]): Job[] {
  const jobs: Job[] = [];
  for (const l of layers) {
    for (const r of l.runs) {
      jobs.push({
        id: `${l.id}/${r.token}`,
        layer: l.id,
        group: l.group,
        variable: l.variable,
        levelIndex: l.levelIndex,
        run: r.index,
        runIso: r.iso,
        style: l.style,
        recipe: l.recipe,
        tilesPerLead: l.tilesPerLead,
        leads: r.leads.map((ld) => ({
          key: `${l.id}/${r.token}/${ld.hours}`,
          index: ld.index,
          hours: ld.hours,
          fingerprint: ld.fingerprint,
          dir: tileDir(l.id, r.token, ld.hours),
        })),
      });
    }
  }
  return jobs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function planHash(jobs: Job[]): string {
  return sha(jobs.map((j) => j.leads.map((l) => [l.key, l.fingerprint])));
}

export async function planBuild(store: Store, sel: Selection, coverage: CoverageCache): Promise<Plan> {
  const { groups, skipped } = await selectGroups(store, sel.groups);
  const warnings: string[] = [];
  const wanted = sel.vars?.map((name) => {
    const derived = DERIVED_LAYERS.find((d) => d.name === name.trim().toLowerCase());
    if (derived) return derived.name;
    const entry = store.registry.lookup(name);
    if (!entry) throw new ConfigError(`"${name}" is not a registered variable name`);
    if (!entry.style) throw new ConfigError(`${entry.name} has no map style, so it has no map layer`);
    return entry.name;
  });
  const layers: LayerSpec[] = [];
  for (const group of groups) {
    // A derived layer comes along when it is named or when every variable it is made of is.
    const picked = (l: MapLayerRef, wanted: string[]) =>
      l.derived
        ? wanted.includes(l.derived.def.name) || l.derived.sources.every((v) => wanted.includes(v.name))
        : wanted.includes(l.variable.name);
    for (const u of group.unregistered) {
      if (u.refused && (!wanted || wanted.includes(u.refused.variable))) {
        warnings.push(`${group.id}/${u.stored}: ${u.refused.variable} is not drawn: ${u.refused.problem}`);
      }
    }
    const refs = groupLayers(group).filter((l) => !wanted || picked(l, wanted));
    if (refs.length === 0) continue;
    for (const ref of refs) {
      const v = ref.variable;
      // Each layer covers the tiles of its own grid (a group may hold variables on several).
      const tiles = coverage.pyramidCount(coverageKey(group, v), v.grid, sel.maxZoom);
      let style = v.entry.style!;
      if (!ref.derived && !v.canonical) {
        style = { ...style, ...(await dataRange(group, ref)) };
        delete style.transparent_below;
        // Values in a unit gridcast cannot convert are shown as stored (as the value route does):
        // no display transform, so no stepped scale made for another unit either.
        delete style.display;
        delete style.display_alternatives;
        warnings.push(
          `${ref.id}: unit "${v.storedUnits}" of ${group.id}/${v.stored} cannot be converted to ${v.entry.units}; ` +
            `drawn over the field's own range ${style.min}..${style.max} ${v.storedUnits}`,
        );
      }
      const sources = ref.derived?.sources ?? [v];
      const revision = sources.map((sv) => sourceRevision(group, sv)).join("+");
      const spec = layerSpec(ref, sel, revision, tiles, style);
      if (spec) layers.push(spec);
    }
  }
  if (layers.length === 0 && skipped.length > 0) {
    throw new StoreUnavailableError(
      `no forecast group could be read, so nothing would be published: ${skipped.map((g) => `${g.id}: ${g.reason}`).join("; ")}`,
    );
  }
  if (layers.length === 0 && (sel.groups || sel.vars || sel.leads)) {
    throw new ConfigError("the selection (--groups, --vars, --leads) names no map layer of this store");
  }
  // Global layers first, then the patches drawn over them.
  layers.sort((a, b) => (a.kind === b.kind ? (a.id < b.id ? -1 : 1) : a.kind === "global" ? -1 : 1));
  // Only with forecast layers to orient on.
  if (sel.orientation && layers.length > 0) layers.push(orientationLayer(sel.maxZoom));
  const jobs = jobsOf(layers);
  return { maxZoom: sel.maxZoom, layers, skipped, warnings, jobs, hash: planHash(jobs) };
}

/**
 * Shard k of n (1-based). Every shard computes the same assignment from the same plan: jobs in
 * order of tiles (then id), each to the shard with the fewest tiles so far (lowest k on a tie).
 * Disjoint, covering, and balanced by work rather than by job count.
 */
export function shardJobs(jobs: Job[], index: number, count: number): Job[] {
  const work = (j: Job): number => j.leads.length * j.tilesPerLead;
  const order = [...jobs].sort((a, b) => work(b) - work(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const load = new Array<number>(count).fill(0);
  const mine: Job[] = [];
  for (const job of order) {
    let k = 0;
    for (let i = 1; i < count; i++) if (load[i] < load[k]) k = i;
    load[k] += work(job);
    if (k === index - 1) mine.push(job);
  }
  return mine;
}

/** Smallest slice of a pyramid worth a job of its own. */
const MIN_PART_TILES = 256;

/**
 * Work units for the pool. Leads to hard-link stay one unit per job; leads to render are cut
 * into pyramid slices when there are too few jobs to keep every thread busy (one layer, one
 * lead would otherwise run on one core). Each slice reads the field itself: one extra read.
 */
export function splitForThreads(jobs: Job[], threads: number): Job[] {
  const rendering = jobs.filter((j) => j.leads.some((l) => !l.reuse)).length;
  const want = rendering >= 4 * threads ? 1 : Math.ceil((4 * threads) / Math.max(1, rendering));
  const out: Job[] = [];
  for (const job of jobs) {
    const reuse = job.leads.filter((l) => l.reuse);
    const render = job.leads.filter((l) => !l.reuse);
    if (reuse.length) out.push({ ...job, leads: reuse });
    if (!render.length) continue;
    const count = Math.max(1, Math.min(want, Math.floor(job.tilesPerLead / MIN_PART_TILES)));
    for (let index = 0; index < count; index++) {
      out.push({ ...job, leads: render, ...(count > 1 ? { part: { index, count } } : {}) });
    }
  }
  return out;
}
