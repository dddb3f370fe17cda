// Planning a build: the forecast groups and variables a Selection names (unreadable groups skipped
// with their reason, unconvertible units warned about and drawn over the data's own range) become
// layer specs (layer-spec.ts), and those become jobs (jobs.ts). The Plan holds both and the hash
// every shard of the build must agree on. Fingerprints are made in fingerprint.ts; the jobs are
// divided among shards and threads in job-split.ts.
import { ConfigError, StoreUnavailableError } from "../errors.ts";
import { groupLayers, type MapLayerRef } from "../forecast/layers.ts";
import { readValues, regionOf } from "../forecast/read.ts";
import { latestRun } from "../forecast/select.ts";
import { DERIVED_LAYERS } from "../registry/derived.ts";
import { didYouMean, MAX_SUGGESTIONS, type Suggestible, suggestAmong } from "../registry/suggest.ts";
import { ORIENTATION_LAYER_ID, ORIENTATION_VERSION } from "../render/orientation.ts";
import type { ForecastGroup, Store } from "../store/store.ts";
import { type CoverageCache, coverageKey } from "./coverage.ts";
import { sourceRevision } from "./fingerprint.ts";
import { type Job, jobsOf, planHash } from "./jobs.ts";
import { type LayerSpec, layerHidpiMax, layerSpec, orientationLayer, type Selection } from "./layer-spec.ts";

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
  /** 512 px @2x tiles one lead of a layer writes with @2x tiles up to zoom `hidpiMax` (-1: none). */
  hidpiPerLead: (layerId: string, hidpiMax: number) => number;
  /**
   * The tiles one lead of a layer writes at zoom z, as x * 2^z + y in the order they are drawn;
   * a number when every tile of the zoom is (the orientation layer).
   */
  tileLevel: (layerId: string, z: number) => Uint32Array | number;
}

/**
 * Files the plan's jobs write: 256 px tiles, and the @2x tiles of base layers and the orientation
 * layer up to `hidpiMax` (the orientation layer's and overlays' lower: layerHidpiMax) (a build's: buildHidpiMax(max zoom), -1 for none). What `start`
 * estimates disk use from and what the README's figures are checked against, without rendering.
 */
/** What --vars could name in these groups: every variable and derived layer drawn as a map layer. */
function drawable(groups: readonly ForecastGroup[]): Suggestible[] {
  const out = new Map<string, Suggestible>();
  for (const g of groups) {
    for (const l of groupLayers(g)) {
      if (l.derived) out.set(l.derived.def.name, { name: l.derived.def.name, long_name: l.derived.def.long_name });
      else out.set(l.variable.name, { ...l.variable.entry, stored: l.variable.stored });
    }
  }
  return [...out.values()];
}

export function planFiles(plan: Plan, hidpiMax: number): { tiles: number; hidpi: number } {
  let tiles = 0;
  let hidpi = 0;
  for (const j of plan.jobs) {
    tiles += j.leads.length * j.tilesPerLead;
    hidpi += j.leads.length * plan.hidpiPerLead(j.layer, hidpiMax);
  }
  return { tiles, hidpi };
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

/** Whether lead `i` (`hours`) of the group is written for the latest run, or for any run. */
function leadIngested(g: ForecastGroup, runs: "latest" | "all", i: number, hours: number): boolean {
  if (i >= g.leads.length || !g.ingested) return true;
  const upTo = (r: number) => g.ingested?.[r] === undefined || hours <= g.ingested[r];
  return runs === "all" ? g.runs.some((_, r) => upTo(r)) : upTo(latestRun(g));
}

const idOf = (name: string) => (name.startsWith("forecast/") ? name : `forecast/${name}`);

export async function planBuild(store: Store, sel: Selection, coverage: CoverageCache): Promise<Plan> {
  const { groups, skipped } = await selectGroups(store, sel.groups);
  // A group named in --groups that cannot be read fails the build by name: publishing the others
  // (exit 3) would leave what was asked for off the map.
  const unreadable = skipped.filter((g) => sel.groups?.some((n) => idOf(n) === g.id));
  if (unreadable.length > 0 && !sel.allowMissingGroups) {
    throw new ConfigError(
      `--groups ${unreadable.map((g) => `${g.id} cannot be read (${g.reason})`).join("; ")}; ` +
        "nothing was built; pass --allow-missing-groups to build the others",
    );
  }
  // Data the store holds outside any served group is named in the build output too.
  const warnings: string[] = (await store.notServed()).map((n) => `${n.path || "(store)"}: ${n.reason}`);
  const wanted = sel.vars?.map((name) => {
    const derived = DERIVED_LAYERS.find((d) => d.name === name.trim().toLowerCase());
    if (derived) return derived.name;
    const entry = store.registry.lookup(name);
    if (!entry) {
      const near = suggestAmong(name, drawable(groups));
      throw new ConfigError(`--vars: "${name}" is not a variable of this store's map layers${didYouMean(near)}`);
    }
    if (!entry.style) {
      const near = suggestAmong(entry.long_name, drawable(groups));
      throw new ConfigError(`${entry.name} has no map style, so it has no map layer${didYouMean(near)}`);
    }
    return entry.name;
  });
  const layers: LayerSpec[] = [];
  // How to count a base layer's @2x tiles (render-job.ts draws one per covered tile up to the zoom).
  const hidpiCount = new Map<string, (hidpiMax: number) => number>();
  const levels = new Map<string, (z: number) => Uint32Array>();
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
      if (u.contested && (!wanted || wanted.includes(u.contested))) {
        warnings.push(`${group.id}/${u.stored}: not drawn as ${u.contested}: ${u.reason}`);
      }
      // Any other array left out is named too, with why and what would serve it.
      if (!u.refused && !u.contested) warnings.push(`${group.id}/${u.stored}: not served: ${u.reason}`);
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
      if (spec) {
        // render-job.ts draws a base field over its variable's grid, an overlay over its first source's.
        const over = spec.recipe.kind === "field" || spec.recipe.kind === "speed" ? v : sources[0];
        const key = coverageKey(group, over);
        levels.set(spec.id, (z) => coverage.level(key, over.grid, z).tiles);
        hidpiCount.set(spec.id, (h) => {
          const top = layerHidpiMax(spec.recipe.kind, Math.min(h, sel.maxZoom));
          return top < 0 ? 0 : coverage.pyramidCount(key, over.grid, top);
        });
      }
    }
  }
  if (layers.length === 0 && skipped.length > 0) {
    throw new StoreUnavailableError(
      `no forecast group could be read, so nothing would be published: ${skipped.map((g) => `${g.id}: ${g.reason}`).join("; ")}`,
    );
  }
  // A lead of --leads that no selected group has (not stored, or not ingested yet for the runs
  // built) fails the build by name, like a variable below.
  const leadsStored = new Set(groups.flatMap((g) => g.leads.filter((h, i) => leadIngested(g, sel.runs, i, h))));
  const missingLeads = [...new Set(sel.leads ?? [])].filter((h) => !leadsStored.has(h));
  if (missingLeads.length > 0 && !sel.allowMissingLeads) {
    throw new ConfigError(
      `--leads ${missingLeads.join(", ")}: no selected group has ${missingLeads.length > 1 ? "these lead times" : "this lead time"} ` +
        `(hours) for ${sel.runs === "all" ? "any run" : "its latest run"}; nothing was built; pass --allow-missing-leads to build the others`,
    );
  }
  // A variable asked for by name and drawn nowhere fails the build by name: publishing the others
  // with exit 0 would tell the operator that what they asked for is on the map.
  const missing = (wanted ?? []).filter((w) => !layers.some((l) => l.variable === w));
  if (missing.length > 0 && !sel.allowMissingVars) {
    const near = missing.flatMap((m) => suggestAmong(m, drawable(groups)).filter((n) => !missing.includes(n)));
    throw new ConfigError(
      `--vars ${missing.join(", ")}: no selected group has a map layer of ${missing.length > 1 ? "them" : "it"}; ` +
        `nothing was built; pass --allow-missing-vars to build the others${didYouMean([...new Set(near)].slice(0, MAX_SUGGESTIONS))}`,
    );
  }
  // Likewise a group named in --groups that draws no layer of the selection.
  const drawn = new Set(layers.map((l) => l.group));
  const empty = [...new Set((sel.groups ?? []).map(idOf))].filter(
    (id) => !drawn.has(id) && !unreadable.some((g) => g.id === id),
  );
  if (empty.length > 0 && !sel.allowMissingGroups) {
    throw new ConfigError(
      `--groups ${empty.join(", ")}: no map layer of the selection (--vars, --leads) in ${empty.length > 1 ? "them" : "it"}; ` +
        "nothing was built; pass --allow-missing-groups to build the others",
    );
  }
  if (layers.length === 0 && (sel.groups || sel.vars || sel.leads)) {
    throw new ConfigError("the selection (--groups, --vars, --leads) names no map layer of this store");
  }
  // Global layers first, then the patches drawn over them.
  layers.sort((a, b) => (a.kind === b.kind ? (a.id < b.id ? -1 : 1) : a.kind === "global" ? -1 : 1));
  // Only with forecast layers to orient on.
  if (sel.orientation && layers.length > 0)
    layers.push(
      orientationLayer(
        sel.maxZoom,
        sel.renderer === undefined ? undefined : { orientation: ORIENTATION_VERSION, renderer: sel.renderer },
      ),
    );
  const jobs = jobsOf(layers);
  const hidpiPerLead = (id: string, hidpiMax: number): number => {
    const top = Math.min(hidpiMax, sel.maxZoom);
    if (id === ORIENTATION_LAYER_ID) {
      let n = 0;
      for (let z = 0; z <= layerHidpiMax("orientation", top); z++) n += 4 ** z;
      return n;
    }
    return top < 0 ? 0 : (hidpiCount.get(id)?.(top) ?? 0);
  };
  const tileLevel = (id: string, z: number): Uint32Array | number => levels.get(id)?.(z) ?? 4 ** z;
  return { maxZoom: sel.maxZoom, layers, skipped, warnings, jobs, hash: planHash(jobs), hidpiPerLead, tileLevel };
}
