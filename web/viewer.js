// The forecast map viewer: pre-rendered tiles from the tile route, a base layer with overlays
// (wind arrows, isobars), run and lead pickers, a legend with labelled ticks in display units,
// click-for-value popups that follow the shown lead, and world-atlas outlines (no outside base
// map is reachable). Plain ES module, no bundler; everything is same-origin. The view is kept in
// the URL hash so it can be shared:
//   #layer=<id>&over=<overlay,…>&run=<token>&lead=<hours>&units=<label>&map=<z>/<lat>/<lon>
import { drawMeteogram, loadMeteogram, meteogramPanel, meteogramSources } from "./meteogram.js";
import { placeSearch } from "./place-search.js";
import {
  fetchCatalog,
  forecastTileLayer,
  pageRelative,
  placeTileLayer,
  source,
  tileBytes,
  weatherMarks,
} from "./tile-source.js";
import {
  Control,
  canvas,
  map as createMap,
  DomUtil,
  geoJSON,
  latLng,
  latLngBounds,
  layerGroup,
  popup,
} from "./vendor/leaflet/leaflet-src.esm.js";
import { windAnimation } from "./wind.js";

const API = "api/forecast/";
/** Tiles are published up to z7 (spec); two more levels are drawn by scaling z7 tiles up. */
const NATIVE_MAX_ZOOM = 7;
const MAX_ZOOM = NATIVE_MAX_ZOOM + 2;
const PLAY_STEP_MS = 1000;
/** How often the catalog is checked for leads and runs a running build has published since. */
const REFRESH_MS = 1000 * (Number(new URLSearchParams(location.search).get("refresh")) || 30);
/** How often while nothing is published yet, or the catalog says more is rendering. */
const RENDERING_REFRESH_MS = Math.min(REFRESH_MS, 5000);
/** From this zoom on, the coarse 1:110m outlines give way to 1:50m ones. */
const DETAIL_ZOOM = 3;
/** Web Mercator's edge: the world's tiles end here, north and south. */
const MERCATOR_MAX_LAT = 85.05112878;
/** How far east and west the view may pan: the world copies either side wrap back (worldCopyJump). */
const WRAP_LON = 540;
/** The phone layout's breakpoint (viewer.css has the same). */
const NARROW_PX = 560;
/** Ramps with partly transparent colours: their tiles must meet edge to edge, not overlap. */
const TRANSLUCENT_COLORMAPS = new Set(["clouds"]);
const FORECAST_ATTRIBUTION = "gridcast synthetic forecast";
const OUTLINE_ATTRIBUTION = "Natural Earth via world-atlas";
const ORIENTATION_ATTRIBUTION = "Places: GeoNames; rivers, lakes, states: Natural Earth";

const $ = (id) => document.getElementById(id);
const ui = {
  controls: $("controls"),
  layer: $("layer"),
  overlays: $("overlays"),
  run: $("run"),
  lead: $("lead"),
  leadText: $("lead-text"),
  play: $("play"),
  status: $("status"),
  rendering: $("rendering"),
  advanced: $("advanced"),
  advancedBox: $("advanced-box"),
  runAge: $("run-age"),
  leadDays: $("lead-days"),
};

const state = {
  layers: [],
  /** The base layer shown, its run and lead. */
  layer: null,
  run: null,
  lead: null,
  /** Variable names of the overlays switched on (wind_arrows, isobars), kept across groups. */
  overlays: new Set(),
  /** Chosen unit label per default display unit ("m/s" → "km/h"), so all wind layers agree. */
  units: new Map(),
  timer: 0,
  /** False once the user picks (or the URL names) a run other than the newest: a new cycle leaves it be. */
  followNewest: true,
  /** Where the open value popup points, or null. */
  popupAt: null,
};
/** Shown and loading tile layers per slot: "base" or an overlay variable name. */
const shown = new Map();
const pending = new Map();
const legends = new Map();
let clickSeq = 0;
let valuePopup = null;

// No fade: a new lead time replaces the old one in one step (see showTiles), which reads better
// in playback than a cross-fade through the land colour.
const map = createMap("map", {
  minZoom: 1,
  maxZoom: MAX_ZOOM,
  worldCopyJump: true,
  fadeAnimation: false,
  // Nothing beyond the poles: the view stops at the Mercator world's top and bottom edges.
  maxBounds: [
    [-MERCATOR_MAX_LAT, -WRAP_LON],
    [MERCATOR_MAX_LAT, WRAP_LON],
  ],
  maxBoundsViscosity: 1,
});
// On a phone the attribution would cover the legend's ticks (both sit at the bottom): top right there.
const narrow = matchMedia(`(max-width: ${NARROW_PX}px)`);
const placeAttribution = () => map.attributionControl.setPosition(narrow.matches ? "topright" : "bottomright");
narrow.addEventListener("change", placeAttribution);
placeAttribution();
// The control bar can wrap when the catalog fills it, which resizes the map; keep Leaflet's size (and
// so the place under each pixel) in step, with the centre kept.
new ResizeObserver(() => {
  snapToDevicePixels(map.getContainer());
  map.invalidateSize();
  fitWorldHeight();
}).observe(map.getContainer());
map.createPane("land").style.zIndex = "150"; // under the forecast tiles (tilePane is 200)
map.createPane("outlines").style.zIndex = "450"; // over the tiles, under popups
map.getPane("outlines").style.pointerEvents = "none";
map.createPane("overlays").style.zIndex = "460"; // arrows and isobars over the outlines
map.getPane("overlays").style.pointerEvents = "none";
map.createPane("orientation").style.zIndex = "470"; // place names, state borders and water over everything
map.getPane("orientation").style.pointerEvents = "none";
// One canvas per pane, shared by every outline layer.
const landRenderer = canvas({ pane: "land" });
const lineRenderer = canvas({ pane: "outlines" });

const view = new URLSearchParams(location.hash.slice(1));
const [z, lat, lon] = (view.get("map") ?? "").split("/").map(Number);
if (Number.isFinite(z) && Number.isFinite(lat) && Number.isFinite(lon)) map.setView([lat, lon], z);
else map.setView([30, 0], 2);
if (view.has("over")) state.overlays = new Set(view.get("over").split(",").filter(Boolean));

const legend = new Control({ position: "bottomleft" });
legend.onAdd = () => DomUtil.create("div", "legend");
legend.addTo(map);

// Tiles first: the outlines' JSON parsing would otherwise hold up the first tile requests.
loadCatalog().finally(drawOutlines);
map.on("click", (e) => {
  showValue(e.latlng);
  showMeteogram(e.latlng);
});
map.on("moveend", saveView);
map.on("popupclose", (e) => {
  if (e.popup === valuePopup) state.popupAt = null;
});
ui.layer.addEventListener("change", () => selectLayer(ui.layer.value, undefined, undefined, true));
ui.advanced.addEventListener("change", () => {
  fillLayerSelect();
  ui.layer.value = state.layer.id;
});
ui.run.addEventListener("change", () => {
  state.followNewest = ui.run.value === newestRun(state.layer).token;
  selectRun(ui.run.value);
});
ui.lead.addEventListener("input", () => selectLead(Number(ui.lead.value)));
ui.play.addEventListener("click", () => togglePlay());

async function catalogNow() {
  // no-cache: revalidate (ETag) instead of taking the minute-long cached copy.
  const res = await fetchCatalog({ cache: "no-cache" });
  if (!res.ok) return { status: res.status };
  const catalog = await res.json();
  source.base = typeof catalog.public_url === "string" ? catalog.public_url : "";
  return { status: res.status, catalog };
}

const usable = (catalog) =>
  (catalog.layers ?? []).filter((l) => l.role !== "orientation" && l.runs?.some((r) => r.leads?.length));

/** The orientation layer's one tile layer, kept while its URL stays the same. */
let orientation = null;

/** Places, state borders, rivers and lakes from the build, over whatever layer is shown (when the build has them). */
function showOrientation(catalog) {
  const layer = (catalog.layers ?? []).find((l) => l.role === "orientation");
  const lead = layer?.runs?.[0]?.leads?.[0];
  const url = lead?.route;
  if (orientation && orientation.gridcastUrl === url) return;
  if (orientation) map.removeLayer(orientation);
  orientation = null;
  if (!lead) return;
  orientation = placeTileLayer(lead, {
    minNativeZoom: layer.minzoom ?? 0,
    maxNativeZoom: Math.min(layer.maxzoom ?? NATIVE_MAX_ZOOM, NATIVE_MAX_ZOOM),
    maxZoom: MAX_ZOOM,
    pane: "orientation",
    className: "orientation-tiles",
    attribution: ORIENTATION_ATTRIBUTION,
    // Its @2x tiles are drawn at twice the scale: sharp lines and labels on dense screens.
    hidpiMaxZoom: layer.hidpi_maxzoom ?? -1,
  });
  orientation.gridcastUrl = url;
  orientation.setWeather(placeWeather);
  orientation.addTo(map);
}

/** What the place names yield to: the marks (line labels, H/L) of the overlays shown. */
let placeWeather = null;
let placeWeatherKey = "";

function yieldPlaceNames(wanted) {
  const overlays = [...wanted].filter(([slot]) => slot !== "base" && slot !== "under" && !slot.startsWith("patch:"));
  const key = overlays.map(([, w]) => tileUrl(w.layer, w.run, w.lead)).join(" ");
  if (key === placeWeatherKey) return;
  placeWeatherKey = key;
  placeWeather = overlays.length
    ? weatherMarks(
        overlays.map(([, { layer, run, lead, holes = [] }]) => ({
          // The tiles the overlay shows (its @2x ones on a dense screen): their marks are where drawn.
          fetch: tileBytes({ ...lead, route: tileUrl(layer, run, lead) }, { hidpiMaxZoom: layer.hidpi_maxzoom ?? -1 }),
          minZoom: layer.minzoom ?? 0,
          maxZoom: Math.min(layer.maxzoom ?? NATIVE_MAX_ZOOM, NATIVE_MAX_ZOOM),
          // Where a patch's overlay replaces this one its marks are cut out: no name yields to them.
          holes: (z) =>
            holes.map((b) => {
              const nw = map.project(b.getNorthWest(), z);
              const se = map.project(b.getSouthEast(), z);
              return [nw.x, nw.y, se.x, se.y];
            }),
        })),
      )
    : null;
  orientation?.setWeather(placeWeather);
}
const isOverlay = (l) => l.role === "overlay";

async function loadCatalog() {
  let got;
  try {
    got = await catalogNow();
  } catch {
    return showStatus("The forecast catalog could not be reached. Check the connection and reload.");
  }
  scheduleRefresh(!got.catalog || Boolean(got.catalog.rendering));
  if (got.status === 404 || got.status === 503) return showStatus(NOTHING_PUBLISHED);
  if (!got.catalog) return showStatus(`The forecast catalog is unavailable (HTTP ${got.status}). Try again later.`);
  start(got.catalog);
}

/** The next catalog check: sooner while a build is still publishing in steps. */
function scheduleRefresh(soon) {
  setTimeout(refreshCatalog, soon ? RENDERING_REFRESH_MS : REFRESH_MS);
}

/** The catalog's note on what a running build will still add, or nothing. */
function showRendering(catalog) {
  ui.rendering.hidden = !catalog?.rendering;
  ui.rendering.textContent = catalog?.rendering
    ? `Still rendering: ${catalog.rendering}. They appear here as they are published.`
    : "";
}

function start(catalog) {
  showRendering(catalog);
  showOrientation(catalog);
  state.layers = usable(catalog);
  if (!state.layers.some((l) => !isOverlay(l))) return showStatus(NOTHING_PUBLISHED);
  ui.status.hidden = true;
  fillLayerSelect();
  ui.controls.hidden = false;
  if (view.has("units")) for (const u of view.getAll("units")) rememberUnit(u);
  const bases = state.layers.filter((l) => !isOverlay(l));
  const wanted = bases.find((l) => l.id === view.get("layer"));
  const fallback = bases.find((l) => l.kind === "global" && l.variable === "t2m") ?? bases[0];
  const lead = view.has("lead") ? Number(view.get("lead")) : undefined;
  selectLayer((wanted ?? fallback).id, view.get("run") ?? undefined, lead, !view.has("over"));
  state.followNewest = state.run.token === newestRun(state.layer).token;
  if (!view.has("map")) fitLayer(state.layer);
}

/**
 * A build publishes leads (and runs) while the viewer is open: take the new catalog, keep the
 * layer, run and lead shown, and let the slider and menus grow.
 */
async function refreshCatalog() {
  let got;
  try {
    got = await catalogNow();
  } catch {
    return scheduleRefresh(false); // the next tick tries again
  }
  scheduleRefresh(!got.catalog || Boolean(got.catalog.rendering));
  if (!got.catalog) return;
  showRendering(got.catalog);
  if (!state.layer) return start(got.catalog);
  showOrientation(got.catalog);
  const layers = usable(got.catalog);
  const same = JSON.stringify(layers) === JSON.stringify(state.layers);
  if (same || !layers.some((l) => l.id === state.layer.id)) return;
  state.layers = layers;
  const keep = ui.layer.value;
  ui.layer.replaceChildren();
  fillLayerSelect();
  ui.layer.value = keep;
  state.layer = layers.find((l) => l.id === state.layer.id);
  fillRuns();
  // After a cycle switch the run shown may be gone, or a newer one there: a viewer that showed the
  // newest run follows to the new newest; one the user pinned to an older run stays while it exists.
  const kept = !state.followNewest && state.layer.runs.find((r) => r.token === state.run.token);
  const run = kept || newestRun(state.layer);
  const i = run.leads.findIndex((l) => l.hours === state.lead.hours);
  if (run.token === state.run.token && i >= 0 && run.leads[i].valid_time === state.lead.valid_time) {
    // Same run and lead, only the slider's range changed: no tile reload.
    state.run = run;
    state.lead = run.leads[i];
    ui.run.value = run.token;
    ui.lead.max = String(run.leads.length - 1);
    fillDayTicks(run);
    showRunAge();
    ui.lead.value = String(i);
    fillOverlays();
    showTiles(false);
  } else {
    // Another run or valid time: menu, slider, label and tiles all move through the one path.
    fillOverlays();
    selectRun(run.token);
  }
}

const NOTHING_PUBLISHED =
  "No forecast published yet. A running “gridcast start” publishes the first map in moments (this page shows it when it does); otherwise run “gridcast build”.";

function showStatus(text) {
  ui.status.textContent = text;
  ui.status.hidden = false;
}

/** Wind components: listed only under the advanced fold (the menu offers wind speed and arrows). */
const COMPONENT = /^(u|v)(10|100)?m?$|^10u$|^10v$|^100u$|^100v$/;
const isComponent = (l) => COMPONENT.test(l.variable);

/** One parameter (variable and level) across groups: its global layer and the patches drawn over it. */
const paramKey = (l) => `${l.variable}|${l.level ?? ""}`;

/** The layer a parameter is chosen by: its global layer, else (patches only) the widest patch. */
function representative(l) {
  const same = state.layers.filter((x) => !isOverlay(x) && paramKey(x) === paramKey(l));
  return same.find((x) => x.kind === "global") ?? same.toSorted((a, b) => area(b) - area(a))[0] ?? l;
}

function area(l) {
  const b = boundsOf(l);
  return (b.getEast() - b.getWest()) * (b.getNorth() - b.getSouth());
}

/**
 * One entry per parameter (temperature, precipitation, wind, pressure, clouds…), each drawn as one
 * seamless layer: the global field with every patch of it over it. Wind components only when the
 * advanced box is ticked.
 */
function fillLayerSelect() {
  const bases = state.layers.filter((l) => !isOverlay(l));
  const seen = new Set();
  const main = [];
  const advanced = [];
  for (const l of bases) {
    const r = representative(l);
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    (isComponent(r) ? advanced : main).push(new Option(describe(r), r.id));
  }
  ui.layer.replaceChildren(...main);
  ui.advancedBox.hidden = advanced.length === 0;
  if (advanced.length && (ui.advanced.checked || isComponent(state.layer ?? {}))) {
    ui.advanced.checked = true;
    const optgroup = document.createElement("optgroup");
    optgroup.label = "Advanced: wind components";
    optgroup.append(...advanced);
    ui.layer.append(optgroup);
  }
}

/** Overlays drawn from the base layer's own fields: arrows over wind speed, isobars over pressure. */
function companions(base) {
  const sources = base.derived_from ?? [base.variable];
  return overlaysOf(base).filter((o) => o.derived_from?.every((v) => sources.includes(v)) ?? false);
}

function overlaysOf(base) {
  return state.layers.filter((l) => isOverlay(l) && l.group === base.group);
}

/** Switch the base layer, keeping the run and lead time when it has them. */
function selectLayer(id, runToken = state.run?.token, leadHours = state.lead?.hours, pickOverlays = false) {
  // A patch's own id (an older link) shows its parameter: the global field with the patches over it.
  state.layer = representative(state.layers.find((l) => l.id === id));
  if (isComponent(state.layer) && !ui.advanced.checked) fillLayerSelect();
  ui.layer.value = state.layer.id;
  if (pickOverlays) state.overlays = new Set(companions(state.layer).map((o) => o.variable));
  fillRuns();
  fillOverlays();
  if (!map.getBounds().intersects(boundsOf(state.layer))) fitLayer(state.layer);
  const runs = state.layer.runs;
  const run = runs.find((r) => r.token === runToken) ?? newestRun(state.layer);
  selectRun(run.token, leadHours);
  drawLegend();
}

function newestRun(layer) {
  return layer.runs.toSorted((a, b) => b.run.localeCompare(a.run))[0];
}

function fillRuns() {
  const runs = state.layer.runs.toSorted((a, b) => b.run.localeCompare(a.run));
  ui.run.replaceChildren(...runs.map((r) => new Option(formatUtc(r.run), r.token)));
}

function fillOverlays() {
  const boxes = overlaysOf(state.layer).map((o) => {
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = o.variable;
    box.checked = state.overlays.has(o.variable);
    box.addEventListener("change", () => {
      if (box.checked) state.overlays.add(o.variable);
      else state.overlays.delete(o.variable);
      showTiles(false);
      saveView();
    });
    const label = document.createElement("label");
    label.append(box, ` ${overlayName(o)}`);
    return label;
  });
  ui.overlays.replaceChildren(el("legend", "", "Overlays"), ...boxes);
  ui.overlays.hidden = boxes.length === 0;
}

function overlayName(o) {
  return { wind_arrows: "Wind arrows", isobars: "Isobars" }[o.variable] ?? o.long_name;
}

/** A run older than this is marked stale beside the run menu. */
const STALE_HOURS = 24;
const DAY_MS = 86_400_000;
const utcMs = (iso) => Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(iso) ? iso : `${iso}Z`);

/** "latest run is N hours old" (days past two), marked stale past STALE_HOURS. */
function showRunAge() {
  if (!state.layer) return;
  const newest = newestRun(state.layer);
  const hours = Math.max(0, Math.floor((Date.now() - utcMs(newest.run)) / 3_600_000));
  const age = hours < 48 ? `${hours} hour${hours === 1 ? "" : "s"}` : `${Math.floor(hours / 24)} days`;
  ui.runAge.textContent = `latest run is ${age} old`;
  ui.runAge.classList.toggle("stale", hours > STALE_HOURS);
  ui.runAge.dataset.hours = String(hours);
}
setInterval(showRunAge, 60_000);

/** Tick marks on the lead slider at the first lead of each UTC day, labelled with the day. */
function fillDayTicks(run) {
  const day = new Intl.DateTimeFormat("en-GB", { weekday: "short", day: "numeric", timeZone: "UTC" });
  let last = Number.NaN;
  const marks = [];
  run.leads.forEach((l, i) => {
    const d = Math.floor(utcMs(l.valid_time) / DAY_MS);
    if (d !== last) marks.push(new Option(day.format(new Date(d * DAY_MS)), String(i)));
    last = d;
  });
  ui.leadDays.replaceChildren(...marks);
}

function selectRun(token, leadHours = state.lead?.hours) {
  state.run = state.layer.runs.find((r) => r.token === token);
  ui.run.value = token;
  ui.lead.max = String(state.run.leads.length - 1);
  fillDayTicks(state.run);
  showRunAge();
  let i = state.run.leads.findIndex((l) => l.hours === leadHours);
  // An accumulated amount at +0 h covers no time at all: open on the first lead that has one.
  if (state.layer.temporal?.kind === "accumulated" && (i < 0 || state.run.leads[i].hours === 0)) {
    i = state.run.leads.findIndex((l) => l.hours > 0);
  }
  selectLead(Math.max(0, i));
}

function selectLead(index) {
  state.lead = state.run.leads[index];
  ui.lead.value = String(index);
  ui.leadText.textContent = `+${state.lead.hours} h · ${formatTime(state.lead.valid_time)}`;
  ui.leadText.title = `valid ${formatTime(state.lead.valid_time)}`;
  showTiles(true);
  saveView();
  // An open popup follows what the map shows.
  if (state.popupAt) showValue(state.popupAt);
}

/** The one place a tile URL is made: the catalog's tile route of a layer, run and lead. */
function tileUrl(layer, run, lead) {
  if (lead.route) return rootRelative(lead.route);
  const q = new URLSearchParams({ layer: layer.id, run: run.token, lead: String(lead.hours) });
  return `${API}tile/{z}/{x}/{y}?${q}`;
}

/** The same run and lead in another layer of the group (overlays are built alongside the base). */
function matching(layer) {
  const run = layer.runs.find((r) => r.token === state.run.token);
  const lead = run?.leads.find((l) => l.hours === state.lead.hours);
  return run && lead ? { run, lead } : null;
}

/**
 * Puts the base layer and the chosen overlays on the map. A new tile layer replaces the shown one
 * only once it has loaded, so playback does not flicker; an unchanged one stays.
 */
function showTiles(leadChanged) {
  const wanted = new Map([["base", { layer: state.layer, run: state.run, lead: state.lead }]]);
  const shownPatches = patches();
  shownPatches.forEach((p, i) => {
    wanted.set(`patch:${p.layer.id}`, { ...p, order: i + 1, holes: holesFor(p.layer, shownPatches) });
  });
  for (const o of overlaysOf(state.layer)) {
    if (!state.overlays.has(o.variable)) continue;
    const m = matching(o);
    if (m) wanted.set(o.variable, { layer: o, ...m, holes: holesFor(state.layer, shownPatches) });
    // Each patch's own overlay inside it, the global one cut out there: one field of lines.
    shownPatches.forEach((p) => {
      const po = state.layers.find((x) => isOverlay(x) && x.group === p.layer.group && x.variable === o.variable);
      const pm = po && atValidTime(po);
      if (pm) wanted.set(`${o.variable}@${p.layer.id}`, { layer: po, ...pm, holes: holesFor(p.layer, shownPatches) });
    });
  }
  for (const slot of new Set([...shown.keys(), ...pending.keys()])) {
    if (wanted.has(slot)) continue;
    for (const m of [shown, pending]) {
      if (m.has(slot)) map.removeLayer(m.get(slot));
      m.delete(slot);
    }
  }
  for (const [slot, { layer, run, lead, order, holes }] of wanted) {
    const url = tileUrl(layer, run, lead);
    if (!leadChanged && (pending.get(slot) ?? shown.get(slot))?.gridcastUrl === url) continue;
    addTiles(slot, layer, lead, url, order, holes);
  }
  yieldPlaceNames(wanted);
}

/**
 * A regional patch is drawn on the global field of the same variable and level, at the same valid
 * time (the newest run that has it), so the map has no empty land around the patch.
 */
function globalOf(l) {
  if (l.kind !== "regional") return null;
  return (
    state.layers.find(
      (g) =>
        g.kind === "global" && !isOverlay(g) && g.variable === l.variable && (g.level ?? null) === (l.level ?? null),
    ) ?? null
  );
}

function underlay() {
  const g = globalOf(state.layer);
  const at = g && atValidTime(g);
  return at ? { layer: g, ...at } : null;
}

/** The newest run of a layer with the valid time shown, and that lead; null when it has none. */
function atValidTime(l) {
  for (const run of l.runs.toSorted((a, b) => b.run.localeCompare(a.run))) {
    const lead = run.leads.find((x) => x.valid_time === state.lead.valid_time);
    if (lead) return { run, lead };
  }
  return null;
}

/**
 * The patches of the shown parameter drawn over its global field, at the valid time shown: widest
 * first, so the most local one lies on top (the choice /point makes at a place it covers).
 */
function patches() {
  if (state.layer.kind !== "global") return [];
  return state.layers
    .filter((l) => l.kind === "regional" && !isOverlay(l) && paramKey(l) === paramKey(state.layer))
    .toSorted((a, b) => area(b) - area(a))
    .map((l) => ({ layer: l, ...atValidTime(l) }))
    .filter((p) => p.run);
}

/** The areas of more local patches inside (or over) `l`: its overlay is cut out there. */
function holesFor(l, shownPatches) {
  const own = area(l);
  const inner = shownPatches.filter((p) => p.layer !== l && area(p.layer) < own).map((p) => boundsOf(p.layer));
  // Only the outermost: a hole inside another hole would show the cut-out overlay again.
  return inner.filter((b, i) => !inner.some((o, j) => j !== i && o.contains(b) && !(b.contains(o) && j > i)));
}

/** The most local shown patch whose area holds the point (wrapped longitude), else null. */
function patchAt(where) {
  const hit = patches().filter((p) =>
    [0, 360, -360].some((dx) => boundsOf(p.layer).contains([where.lat, where.lng + dx])),
  );
  return hit.at(-1) ?? null;
}

function addTiles(slot, l, lead, url, order = 0, holes = []) {
  const patch = slot.startsWith("patch:");
  const overlay = slot !== "base" && slot !== "under" && !patch;
  // The tile route when the API serves the page; from a CDN copy of the build, the lead's archive or files.
  const next = forecastTileLayer(
    { ...lead, route: url },
    {
      bounds: boundsOf(l),
      minNativeZoom: l.minzoom ?? 0,
      maxNativeZoom: Math.min(l.maxzoom ?? NATIVE_MAX_ZOOM, NATIVE_MAX_ZOOM),
      maxZoom: MAX_ZOOM,
      noWrap: l.kind !== "global",
      attribution: FORECAST_ATTRIBUTION,
      className: overlay
        ? `forecast-overlay overlay-${l.variable}${l.kind === "regional" ? " overlay-patch" : ""}`
        : slot === "under"
          ? "forecast-under"
          : patch
            ? "forecast-patch"
            : "forecast-tiles",
      ...(overlay ? { pane: "overlays" } : {}),
      // The global field under the patches, each patch over it with its edge faded in, the most local on top.
      zIndex: slot === "under" ? 0 : patch ? 1 + order : 1,
      hidpiMaxZoom: l.hidpi_maxzoom ?? -1,
      translucent: overlay || TRANSLUCENT_COLORMAPS.has(l.style?.colormap),
      ...((slot === "base" || patch) && l.kind === "regional" ? { feather: boundsOf(l) } : {}),
      ...(overlay && holes.length ? { holes } : {}),
    },
  );
  next.gridcastUrl = url;
  if (slot === "base") next.once("tileload", () => mark("gridcast:first-tile"));
  next.once("load", () => {
    if (slot === "base") mark("gridcast:tiles-loaded");
    if (pending.get(slot) !== next) return;
    if (shown.has(slot)) map.removeLayer(shown.get(slot));
    shown.set(slot, next);
    pending.delete(slot);
  });
  if (pending.has(slot)) map.removeLayer(pending.get(slot));
  pending.set(slot, next);
  next.addTo(map);
}

/**
 * The lowest zoom is the one whose world is at least as tall as the map, so zoomed out the map is
 * one world from pole to pole, with no band beyond the poles and not two and a half worlds across.
 */
function fitWorldHeight() {
  const height = map.getSize().y;
  const min = Math.max(1, Math.ceil(Math.log2(height / 256) - 1e-9));
  if (map.getMinZoom() !== min) map.setMinZoom(min);
}

/**
 * Moves the map by less than a device pixel so its corner sits on a whole device pixel: a control
 * bar 86.7 CSS px tall at DPR 3 would otherwise put every tile edge across a device pixel, and the
 * translucent layers' tiles, which meet edge to edge, would leave a half-covered (lighter) row.
 */
function snapToDevicePixels(el) {
  const dpr = globalThis.devicePixelRatio || 1;
  el.style.top = "";
  el.style.left = "";
  const r = el.getBoundingClientRect();
  const shift = (v) => (Math.ceil(v * dpr - 1e-6) - v * dpr) / dpr;
  // Layout, not a transform: a sub-pixel transform would move each tile's composited layer
  // between device pixels instead of the map.
  const cs = getComputedStyle(el);
  const dy = shift(r.top);
  const dx = shift(r.left);
  if (dy) el.style.top = `${Number.parseFloat(cs.top) + dy}px`;
  if (dx) el.style.left = `${Number.parseFloat(cs.left) + dx}px`;
}

/** Performance marks let anyone (and the browser test) time the first paint of forecast data. */
function mark(name) {
  if (!performance.getEntriesByName(name).length) performance.mark(name);
}

function togglePlay() {
  const playing = !state.timer;
  if (playing) {
    state.timer = setInterval(() => {
      const n = state.run.leads.length;
      selectLead((Number(ui.lead.value) + 1) % n);
    }, PLAY_STEP_MS);
  } else {
    clearInterval(state.timer);
    state.timer = 0;
  }
  ui.play.setAttribute("aria-pressed", String(playing));
  ui.play.setAttribute("aria-label", playing ? "Pause lead times" : "Play lead times");
}

/** The unit the viewer shows a layer in: the user's choice among its options, else its default. */
function unitOf(l) {
  const options = l.units_options?.length ? l.units_options : [l.display ?? { units: l.units, scale: 1, offset: 0 }];
  const chosen = state.units.get(options[0].units);
  return options.find((u) => u.units === chosen) ?? options[0];
}

function rememberUnit(label) {
  for (const l of state.layers) {
    const options = l.units_options ?? [];
    if (options.some((u) => u.units === label)) state.units.set(options[0].units, label);
  }
}

// Animated wind (wind.js), off by default: the global wind-arrow layer's wind file at the valid
// time shown, from the run shown when it has one, else the newest.
windAnimation(map, () => {
  const t = state.lead?.valid_time;
  const arrows = state.layers.find((l) => l.kind === "global" && l.runs.some((r) => r.leads.some((d) => d.wind)));
  if (!t || !arrows) return null;
  const shownFirst = (r) => (r.token === state.run?.token ? 1 : 0);
  const runs = arrows.runs.toSorted((a, b) => shownFirst(b) - shownFirst(a) || b.run.localeCompare(a.run));
  for (const r of runs) {
    const lead = r.leads.find((d) => d.valid_time === t && d.wind);
    if (lead) return rootRelative(lead.wind);
  }
  return null;
});

async function legendOf(l) {
  if (!legends.has(l.id)) {
    legends.set(
      l.id,
      fetch(rootRelative(l.legend.json)).then((r) => (r.ok ? r.json() : null)),
    );
  }
  return legends.get(l.id).catch(() => null);
}

async function drawLegend() {
  const l = state.layer;
  const unit = unitOf(l);
  const box = legend.getContainer();
  const ramp = document.createElement("img");
  ramp.src = rootRelative(l.legend.png);
  const lo = l.style.min * unit.scale + unit.offset;
  const hi = l.style.max * unit.scale + unit.offset;
  ramp.alt = `Colour scale from ${formatNumber(lo)} to ${formatNumber(hi)} ${unit.units}`;
  const head = el("div", "legend-units");
  head.append(el("span", "legend-title", `${describe(l)} (${unit.units})`));
  const options = l.units_options ?? [];
  if (options.length > 1) {
    const pick = document.createElement("select");
    pick.id = "units";
    pick.setAttribute("aria-label", "Units");
    pick.append(...options.map((u) => new Option(u.units, u.units)));
    pick.value = unit.units;
    pick.addEventListener("change", () => {
      state.units.set(options[0].units, pick.value);
      drawLegend();
      saveView();
      if (state.popupAt) showValue(state.popupAt);
    });
    head.append(pick);
  }
  const ticks = el("div", "legend-ticks");
  box.replaceChildren(head, ramp, ticks);
  const interval = intervalText(l.temporal);
  if (interval) box.append(el("div", "legend-interval", interval));
  // Ticks come from the legend document, in the chosen unit.
  const doc = await legendOf(l);
  if (state.layer !== l) return;
  const option = doc?.units_options?.find((u) => u.units === unit.units);
  const list = option?.ticks ?? [
    { position: 0, label: formatNumber(lo) },
    { position: 1, label: formatNumber(hi) },
  ];
  ticks.replaceChildren(
    ...list.map((t) => {
      const s = el("span", "", t.label);
      s.dataset.position = String(t.position);
      return s;
    }),
  );
  fitTicks(ticks);
  // Nodes without a value are hatched on the map (base layers); the key says what the stripes mean.
  if (doc?.no_data) {
    const key = el("div", "legend-no-data", doc.no_data.label);
    key.style.setProperty("--hatch", doc.no_data.color);
    box.append(key);
  }
}

/**
 * Each label centred under its tick, but moved inwards where it would stick out of the ramp's
 * ends (a centred "−40" at position 0 would be clipped); its tick mark stays where the value is.
 */
function fitTicks(ticks) {
  const width = ticks.clientWidth;
  if (!width) return;
  for (const s of ticks.children) {
    const x = Number(s.dataset.position) * width;
    const w = s.offsetWidth;
    const left = Math.max(0, Math.min(width - w, x - w / 2));
    s.style.left = `${left}px`;
    s.style.transform = "none";
    s.style.setProperty("--mark", `${x - left}px`);
  }
}
new ResizeObserver(() => {
  const ticks = legend.getContainer().querySelector(".legend-ticks");
  if (ticks) fitTicks(ticks);
}).observe(legend.getContainer());

/** The layer, run and lead drawn at a place: the most local patch there, else the shown layer or the global field under it. */
function drawnAt(where) {
  const inside = (l) => [0, 360].some((dx) => boundsOf(l).contains([where.lat, where.lng + dx]));
  const local = patchAt(where);
  if (local) return local;
  if (inside(state.layer)) return { layer: state.layer, run: state.run, lead: state.lead };
  const under = underlay();
  return under && inside(under.layer) ? under : null;
}

/** Pause of the pointer before the value under it is read (one request in flight at most). */
const HOVER_MS = 250;
const hover = new Control({ position: "topright" });
hover.onAdd = () => {
  const box = DomUtil.create("div", "hover-readout");
  box.setAttribute("aria-live", "off");
  box.hidden = true;
  return box;
};
let hoverTimer = 0;
let hoverSeq = 0;
let hoverBusy = false;
// Only where a pointer can hover (not on touch screens, where a tap opens the popup).
if (matchMedia("(hover: hover)").matches) {
  hover.addTo(map);
  map.on("mousemove", (e) => {
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(() => readHover(e.latlng), HOVER_MS);
  });
  // The container's own event: Leaflet's mouseout is not sent for every way out of the map.
  map.getContainer().addEventListener("mouseleave", () => {
    clearTimeout(hoverTimer);
    hoverSeq++;
    hover.getContainer().hidden = true;
  });
}

/** The value under the pointer, in the legend's unit, in the readout box. */
async function readHover(latlng) {
  if (!state.layer || hoverBusy) return;
  const seq = ++hoverSeq;
  const where = latlng.wrap();
  const box = hover.getContainer();
  const at = drawnAt(where);
  if (!at) {
    box.hidden = true;
    return;
  }
  const q = new URLSearchParams({
    layer: at.layer.id,
    run: at.run.token,
    lead: String(at.lead.hours),
    lat: where.lat.toFixed(4),
    lon: where.lng.toFixed(4),
  });
  hoverBusy = true;
  try {
    const res = await fetch(`${API}value?${q}`);
    if (!res.ok || seq !== hoverSeq) return;
    const v = await res.json();
    if (seq !== hoverSeq) return;
    const has = v.value !== null && v.value !== undefined;
    box.textContent = `${has ? shownValue(at.layer, v) : "no data"} · ${formatLatLon(where.lat, where.lng)}`;
    box.dataset.layer = at.layer.id;
    box.dataset.value = has ? String(v.value) : "";
    box.hidden = false;
  } catch {
    // A failed read leaves the last readout; the popup on click says what went wrong.
  } finally {
    hoverBusy = false;
  }
}

async function showValue(clicked) {
  const seq = ++clickSeq;
  const where = clicked.wrap();
  let { layer, run, lead } = state;
  state.popupAt = clicked;
  const box = el("div", "value-popup");
  if (!valuePopup) valuePopup = popup();
  const pop = valuePopup.setLatLng(clicked).setContent(box);
  if (!map.hasLayer(pop)) pop.openOn(map);
  const show = (...nodes) => {
    box.replaceChildren(...nodes);
    pop.update();
  };
  if (!state.layer) return show(el("div", "", "No forecast layer is shown."));
  const inside = (l) => [0, 360].some((dx) => boundsOf(l).contains([where.lat, where.lng + dx]));
  // Where a patch is drawn the popup reads it: the most local one holding the point.
  const local = patchAt(where);
  if (local) ({ layer, run, lead } = local);
  if (!inside(layer)) {
    // Around a patch the map shows the global field: so does the popup.
    const under = underlay();
    if (under && inside(under.layer)) ({ layer, run, lead } = under);
    else return show(el("div", "", `Outside the area of ${groupName(layer)} (${formatLatLon(where.lat, where.lng)}).`));
  }
  show(el("div", "", "Loading…"));
  const q = new URLSearchParams({
    layer: layer.id,
    run: run.token,
    lead: String(lead.hours),
    lat: where.lat.toFixed(4),
    lon: where.lng.toFixed(4),
  });
  let v;
  try {
    const res = await fetch(`${API}value?${q}`);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    v = await res.json();
  } catch (e) {
    if (seq === clickSeq) show(el("div", "", `The value could not be read (${e.message}).`));
    return;
  }
  if (seq !== clickSeq) return; // a later click or lead owns the popup now
  const hasValue = v.value !== null && v.value !== undefined;
  const interval = intervalText(v.temporal);
  // The value route names the accumulation window; its times are UTC ISO strings without a zone.
  const span = v.interval ? ` (${v.interval.start.slice(11, 16)}–${v.interval.end.slice(11, 16)} UTC)` : "";
  const extra = [];
  if (hasValue && typeof v.direction_deg === "number") {
    extra.push(el("div", "value-direction", `from ${v.direction_deg}° (${compass(v.direction_deg)})`));
  }
  // At the run's start an accumulation covers no time: say so instead of a bare zero.
  const empty = v.interval && v.interval.start === v.interval.end;
  show(
    el("div", "value-title", describe(layer)),
    el("div", "value", empty ? "nothing accumulated yet" : hasValue ? shownValue(layer, v) : "no data here"),
    ...extra,
    ...(interval && hasValue && !empty ? [el("div", "value-interval", interval + span)] : []),
    el("div", "value-valid", `valid ${formatTime(v.valid_time)} (+${v.lead_hours} h)`),
    ...(typeof v.grid_lat === "number"
      ? [el("div", "value-node", `grid node ${formatLatLon(v.grid_lat, v.grid_lon)}`)]
      : []),
  );
}

/** Zoom a found place is shown at: its own name and the towns round it. */
const SEARCH_ZOOM = 8;
$("search").addEventListener("submit", (e) => e.preventDefault());
placeSearch($("place-search"), $("place-list"), (p) => map.setView([p.lat, p.lon], SEARCH_ZOOM));

const meteogram = meteogramPanel(document.querySelector("main"), () => {
  meteogramSeq++;
});
let meteogramSeq = 0;

/** The clicked place's forecast across every lead: the meteogram panel (public series route). */
async function showMeteogram(clicked) {
  const seq = ++meteogramSeq;
  const where = clicked.wrap();
  const { panel } = meteogram;
  const sources = meteogramSources(state.layers);
  panel.hidden = false;
  panel.dataset.state = "loading";
  panel.querySelector(".meteogram-place").textContent = formatLatLon(where.lat, where.lng);
  panel.querySelector(".meteogram-meta").textContent = sources.length ? "Loading…" : "No forecast layers to read.";
  panel.querySelector(".meteogram-rows").replaceChildren();
  if (!sources.length) return;
  // In the units the legends show: a unit the user picked (km/h, °F) applies to the meteogram too.
  const units = (l) => {
    const u = unitOf(l).units;
    return l.units_options?.length > 1 && u !== l.units_options[0].units ? u : "display";
  };
  const rows = await loadMeteogram(sources, where.lat, where.lng, state.run?.run, units);
  if (seq !== meteogramSeq) return; // another click, or closed
  drawMeteogram(panel, { lat: where.lat, lon: where.lng, rows, place: formatLatLon(where.lat, where.lng) });
}

/** The value in the chosen unit; a store in other units than the catalog's is shown as the server says. */
function shownValue(layer, v) {
  if (v.display && v.display.units !== (layer.display?.units ?? v.units)) {
    return formatValue(v.display.value, v.display.units);
  }
  const unit = unitOf(layer);
  return formatValue(v.value * unit.scale + unit.offset, unit.units);
}

/** Decimals a reader wants per unit: 5.1 °C, 1013 hPa, 0.4 mm, 62 %, 14.4 m/s, 52 km/h. */
const DECIMALS = { "°C": 1, "°F": 0, K: 1, hPa: 0, Pa: 0, "%": 0, "m/s": 1, "km/h": 0, kn: 0, mph: 0 };

/** A value rounded for its unit; amounts of rain keep two decimals below 1 mm so drizzle is not 0. */
function formatValue(v, units) {
  let d = DECIMALS[units];
  if (units === "mm" || units === "mm/h") d = Math.abs(v) < 1 ? 2 : 1;
  if (d === undefined) return `${Number(v.toPrecision(3))} ${units}`;
  const text = v.toFixed(d);
  // "-0.0 °C" reads as a sign error.
  return `${/^-0(\.0+)?$/.test(text) ? text.slice(1) : text} ${units}`;
}

function compass(deg) {
  return ["N", "NE", "E", "SE", "S", "SW", "W", "NW"][Math.round(deg / 45) % 8];
}

function saveView() {
  const c = map.getCenter().wrap();
  const h = new URLSearchParams();
  if (state.layer) {
    h.set("layer", state.layer.id);
    h.set("over", [...state.overlays].join(","));
    const unit = unitOf(state.layer);
    if (unit.units !== state.layer.units_options?.[0]?.units) h.set("units", unit.units);
  }
  if (state.run) h.set("run", state.run.token);
  if (state.lead) h.set("lead", String(state.lead.hours));
  h.set("map", `${map.getZoom()}/${c.lat.toFixed(3)}/${c.lng.toFixed(3)}`);
  history.replaceState(null, "", `#${String(h).replaceAll("%2F", "/").replaceAll("%2C", ",")}`);
}

/**
 * Coastlines, borders and a faint land fill: 1:110m, replaced by 1:50m from DETAIL_ZOOM on. A
 * neighbouring world copy (which the wrapping forecast tiles fill too) is drawn only while the view
 * reaches into it: three copies of the 1:50m set all the time would triple the work after load.
 */
async function drawOutlines() {
  let scale;
  let data;
  const copies = new Map(); // longitude offset → layer
  const sync = () => {
    if (!data) return;
    const view = map.getBounds(); // unwrapped: may reach past ±180°
    for (const dx of [-720, -360, 0, 360, 720]) {
      const needed = view.getWest() < dx + 180 && view.getEast() > dx - 180;
      if (needed && !copies.has(dx)) copies.set(dx, outlineLayer(data, dx).addTo(map));
      if (!needed && copies.has(dx)) {
        map.removeLayer(copies.get(dx));
        copies.delete(dx);
      }
    }
  };
  const update = async () => {
    const wanted = map.getZoom() >= DETAIL_ZOOM ? "50m" : "110m";
    if (wanted === scale || scale === "50m") return; // never back to the coarse one
    scale = wanted;
    const next = await outlineData(wanted);
    if (scale !== wanted) return; // the detailed set was asked for meanwhile
    data = next;
    for (const layer of copies.values()) map.removeLayer(layer);
    copies.clear();
    sync();
    // The canvas renderer paints on the next frame; a test or a screenshot that looks at the land
    // waits for this mark (and that frame) instead of guessing how long the fetch takes.
    requestAnimationFrame(() => mark(`gridcast:outlines-${wanted}`));
  };
  map.on("moveend", sync);
  map.on("zoomend", update);
  await update();
}

async function outlineData(scale) {
  const topo = await (await fetch(`vendor/world-atlas/countries-${scale}.json`)).json();
  const { mesh, feature } = window.topojson;
  const countries = topo.objects.countries;
  return {
    land: planar(feature(topo, topo.objects.land).features[0].geometry),
    lines: [
      { type: "Feature", properties: { coast: true }, geometry: planar(mesh(topo, countries, (a, b) => a === b)) },
      { type: "Feature", properties: { coast: false }, geometry: planar(mesh(topo, countries, (a, b) => a !== b)) },
    ],
  };
}

function outlineLayer({ land, lines }, dx) {
  const coordsToLatLng = ([lon, lat]) => latLng(lat, lon + dx);
  const common = { interactive: false, coordsToLatLng };
  return layerGroup([
    geoJSON(land, {
      ...common,
      pane: "land",
      renderer: landRenderer,
      style: { stroke: false, fillColor: "#d9d4c7", fillOpacity: 1 },
    }),
    geoJSON(lines, {
      ...common,
      pane: "outlines",
      renderer: lineRenderer,
      attribution: OUTLINE_ATTRIBUTION,
      style: (f) =>
        f.properties.coast
          ? { color: "#1f2a33", weight: 1.1, opacity: 0.9 }
          : { color: "#1f2a33", weight: 0.6, opacity: 0.6, dashArray: "3 3" },
    }),
  ]);
}

/**
 * world-atlas is made for spherical drawing (d3-geo), so some rings cross the antimeridian; on
 * Leaflet's plane each crossing would draw a line round the world. Make every ring continuous
 * (parts may run past ±180°) and close a ring that goes round a pole through that pole.
 */
function planar(geometry) {
  const { type, coordinates } = geometry;
  if (type === "MultiLineString") return { type, coordinates: coordinates.map((line) => unwrap(line, false)) };
  if (type === "MultiPolygon")
    return { type, coordinates: coordinates.map((rings) => rings.map((r) => unwrap(r, true))) };
  throw new Error(`unexpected outline geometry ${type}`);
}

function unwrap(points, ring) {
  let shift = 0;
  let lonSum = 0;
  let latSum = 0;
  const out = points.map(([lon, lat], i) => {
    const step = i ? lon - points[i - 1][0] : 0;
    shift += step > 180 ? -360 : step < -180 ? 360 : 0;
    lonSum += lon + shift;
    latSum += lat;
    return [lon + shift, lat];
  });
  const recentre = -360 * Math.round(lonSum / out.length / 360);
  for (const p of out) p[0] += recentre;
  if (ring && shift !== 0) {
    const pole = latSum < 0 ? -90 : 90;
    out.push([out.at(-1)[0], pole], [out[0][0], pole]);
  }
  return out;
}

/** Store groups are "forecast/<name>"; the name alone reads better in a menu. */
function groupName(l) {
  return l.group.replace(/^forecast\//, "");
}

function describe(l) {
  const level = l.level === null || l.level === undefined ? "" : ` ${l.level} ${l.level_units ?? ""}`.trimEnd();
  return `${l.long_name ?? l.variable}${level}`;
}

function intervalText(temporal) {
  return temporal?.kind === "accumulated" ? `amount over the previous ${temporal.interval_hours} h` : "";
}

/** [west, south, east, north]; a box across the antimeridian has east < west. */
function boundsOf(l) {
  const [w, s, e, n] = l.bounds ?? [-180, -90, 180, 90];
  return latLngBounds([s, w], [n, e < w ? e + 360 : e]);
}

/** Fits the layer, but only the inhabited latitudes: a whole Mercator world would leave a global layer small. */
function fitLayer(l) {
  const b = boundsOf(l);
  map.fitBounds(latLngBounds([Math.max(b.getSouth(), -60), b.getWest()], [Math.min(b.getNorth(), 75), b.getEast()]));
}

/** Catalog URLs relative to this page (see pageRelative). */
function rootRelative(path) {
  return pageRelative(path);
}

/** Five significant digits in plain notation: no exponent, no thousands separators. */
function formatNumber(v) {
  if (v === 0) return "0";
  const magnitude = Math.floor(Math.log10(Math.abs(v)));
  return v.toFixed(Math.min(12, Math.max(0, 4 - magnitude)));
}

const TIME = new Intl.DateTimeFormat("en-GB", {
  weekday: "short",
  day: "numeric",
  month: "short",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZone: "UTC",
});

/** The same instant in the reader's own time zone, with its short name ("13:00 CET"). */
const LOCAL = new Intl.DateTimeFormat("en-GB", {
  weekday: "short",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZoneName: "short",
});
const LOCAL_IS_UTC =
  new Date().getTimezoneOffset() === 0 &&
  new Date(2026, 0, 1).getTimezoneOffset() === 0 &&
  new Date(2026, 6, 1).getTimezoneOffset() === 0;

/** Catalog times are UTC without a zone suffix: shown in UTC, and in local time beside it. */
function formatTime(iso) {
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/i.test(iso);
  const t = new Date(hasZone ? iso : `${iso}Z`);
  const utc = `${TIME.format(t)} UTC`;
  return LOCAL_IS_UTC ? utc : `${utc} (${LOCAL.format(t)})`;
}

/** UTC only, for the run menu (a run is an analysis time, named in UTC everywhere). */
function formatUtc(iso) {
  const hasZone = /(Z|[+-]\d\d:?\d\d)$/i.test(iso);
  return `${TIME.format(new Date(hasZone ? iso : `${iso}Z`))} UTC`;
}

function formatLatLon(lat, lon) {
  const ns = lat >= 0 ? "N" : "S";
  const ew = lon >= 0 ? "E" : "W";
  return `${Math.abs(lat).toFixed(2)}°${ns} ${Math.abs(lon).toFixed(2)}°${ew}`;
}

function el(tag, className, text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  node.textContent = text;
  return node;
}
