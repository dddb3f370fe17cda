// The forecast map viewer: pre-rendered tiles from the tile route, a layer/run/lead picker, a
// legend, click-for-value popups and world-atlas outlines (no outside base map is reachable).
// Plain ES module, no bundler; everything is same-origin. The view is kept in the URL hash so it
// can be shared: #layer=<id>&run=<token>&lead=<hours>&map=<z>/<lat>/<lon>.

import { fetchCatalog, forecastTileLayer } from "./tile-source.js";
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

const API = "api/forecast/";
/** Tiles are published up to z7 (spec); two more levels are drawn by scaling z7 tiles up. */
const NATIVE_MAX_ZOOM = 7;
const MAX_ZOOM = NATIVE_MAX_ZOOM + 2;
const PLAY_STEP_MS = 1000;
/** From this zoom on, the coarse 1:110m outlines give way to 1:50m ones. */
const DETAIL_ZOOM = 3;
const FORECAST_ATTRIBUTION = "gridcast synthetic forecast";
const OUTLINE_ATTRIBUTION = "Natural Earth via world-atlas";

const $ = (id) => document.getElementById(id);
const ui = {
  controls: $("controls"),
  layer: $("layer"),
  run: $("run"),
  lead: $("lead"),
  leadText: $("lead-text"),
  play: $("play"),
  status: $("status"),
};

const state = { layers: [], layer: null, run: null, lead: null, timer: 0 };
let shownTiles = null;
let pendingTiles = null;
let clickSeq = 0;

// No fade: a new lead time replaces the old one in one step (see showTiles), which reads better
// in playback than a cross-fade through the land colour.
const map = createMap("map", { minZoom: 1, maxZoom: MAX_ZOOM, worldCopyJump: true, fadeAnimation: false });
// The control bar can wrap when the catalog fills it, which resizes the map; keep Leaflet's size (and
// so the place under each pixel) in step, with the centre kept.
new ResizeObserver(() => map.invalidateSize()).observe(map.getContainer());
map.createPane("land").style.zIndex = "150"; // under the forecast tiles (tilePane is 200)
map.createPane("outlines").style.zIndex = "450"; // over the tiles, under popups
map.getPane("outlines").style.pointerEvents = "none";
// One canvas per pane, shared by every outline layer.
const landRenderer = canvas({ pane: "land" });
const lineRenderer = canvas({ pane: "outlines" });

const view = new URLSearchParams(location.hash.slice(1));
const [z, lat, lon] = (view.get("map") ?? "").split("/").map(Number);
if (Number.isFinite(z) && Number.isFinite(lat) && Number.isFinite(lon)) map.setView([lat, lon], z);
else map.setView([30, 0], 2);

const legend = new Control({ position: "bottomleft" });
legend.onAdd = () => DomUtil.create("div", "legend");
legend.addTo(map);

// Tiles first: the outlines' JSON parsing would otherwise hold up the first tile requests.
loadCatalog().finally(drawOutlines);
map.on("click", (e) => showValue(e.latlng));
map.on("moveend", saveView);
ui.layer.addEventListener("change", () => selectLayer(ui.layer.value));
ui.run.addEventListener("change", () => selectRun(ui.run.value));
ui.lead.addEventListener("input", () => selectLead(Number(ui.lead.value)));
ui.play.addEventListener("click", () => togglePlay());

async function loadCatalog() {
  let catalog;
  try {
    const res = await fetchCatalog();
    if (res.status === 404 || res.status === 503) return showStatus(NOTHING_PUBLISHED);
    if (!res.ok) return showStatus(`The forecast catalog is unavailable (HTTP ${res.status}). Try again later.`);
    catalog = await res.json();
  } catch {
    return showStatus("The forecast catalog could not be reached. Check the connection and reload.");
  }
  state.layers = (catalog.layers ?? []).filter((l) => l.runs?.some((r) => r.leads?.length));
  if (!state.layers.length) return showStatus(NOTHING_PUBLISHED);
  fillLayerSelect();
  ui.controls.hidden = false;
  const wanted = state.layers.find((l) => l.id === view.get("layer"));
  const fallback = state.layers.find((l) => l.kind === "global" && l.variable === "t2m") ?? state.layers[0];
  selectLayer((wanted ?? fallback).id, view.get("run"), Number(view.get("lead") ?? Number.NaN));
  if (!view.has("map")) fitLayer(state.layer);
}

const NOTHING_PUBLISHED = "No forecast published yet. Run “gridcast build”, then reload this page.";

function showStatus(text) {
  ui.status.textContent = text;
  ui.status.hidden = false;
}

function fillLayerSelect() {
  const groups = Map.groupBy(state.layers, (l) => groupName(l));
  for (const [group, layers] of groups) {
    const optgroup = document.createElement("optgroup");
    optgroup.label = group;
    for (const l of layers) optgroup.append(new Option(`${group}: ${describe(l)}`, l.id));
    ui.layer.append(optgroup);
  }
}

/** Switch layer, keeping the run and lead time when the new layer has them. */
function selectLayer(id, runToken = state.run?.token, leadHours = state.lead?.hours) {
  state.layer = state.layers.find((l) => l.id === id);
  ui.layer.value = id;
  const runs = [...state.layer.runs].sort((a, b) => b.run.localeCompare(a.run));
  ui.run.replaceChildren(...runs.map((r) => new Option(`${formatTime(r.run)}`, r.token)));
  if (!map.getBounds().intersects(boundsOf(state.layer))) fitLayer(state.layer);
  selectRun((runs.find((r) => r.token === runToken) ?? runs[0]).token, leadHours);
  drawLegend();
}

function selectRun(token, leadHours = state.lead?.hours) {
  state.run = state.layer.runs.find((r) => r.token === token);
  ui.run.value = token;
  ui.lead.max = String(state.run.leads.length - 1);
  const i = state.run.leads.findIndex((l) => l.hours === leadHours);
  selectLead(Math.max(0, i));
}

function selectLead(index) {
  state.lead = state.run.leads[index];
  ui.lead.value = String(index);
  ui.leadText.textContent = `+${state.lead.hours} h · valid ${formatTime(state.lead.valid_time)}`;
  showTiles();
  saveView();
}

/** A new tile layer replaces the shown one only once it has loaded, so playback does not flicker. */
function showTiles() {
  const l = state.layer;
  const q = new URLSearchParams({ layer: l.id, run: state.run.token, lead: String(state.lead.hours) });
  // The catalog names the tile route of each lead; the fallback spells out the same route.
  const route = state.lead.route ?? `/${API}tile/{z}/{x}/{y}?${q}`;
  const next = forecastTileLayer(
    { ...state.lead, route },
    {
      bounds: boundsOf(l),
      minNativeZoom: l.minzoom ?? 0,
      maxNativeZoom: Math.min(l.maxzoom ?? NATIVE_MAX_ZOOM, NATIVE_MAX_ZOOM),
      maxZoom: MAX_ZOOM,
      noWrap: l.kind !== "global",
      attribution: FORECAST_ATTRIBUTION,
      className: "forecast-tiles",
    },
  );
  next.once("tileload", () => mark("gridcast:first-tile"));
  next.once("load", () => {
    mark("gridcast:tiles-loaded");
    if (shownTiles) map.removeLayer(shownTiles);
    shownTiles = next;
    if (pendingTiles === next) pendingTiles = null;
  });
  if (pendingTiles) map.removeLayer(pendingTiles);
  pendingTiles = next;
  next.addTo(map);
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
  ui.play.textContent = playing ? "⏸" : "▶";
  ui.play.setAttribute("aria-pressed", String(playing));
  ui.play.setAttribute("aria-label", playing ? "Pause lead times" : "Play lead times");
}

function drawLegend() {
  const l = state.layer;
  const box = legend.getContainer();
  const ramp = document.createElement("img");
  ramp.src = rootRelative(l.legend.png);
  ramp.alt = `Colour scale from ${l.style.min} to ${l.style.max} ${l.units}`;
  const scale = el("div", "legend-scale");
  scale.append(el("span", "", String(l.style.min)), el("span", "", l.units), el("span", "", String(l.style.max)));
  box.replaceChildren(el("div", "legend-title", describe(l)), ramp, scale);
  const interval = intervalText(l.temporal);
  if (interval) box.append(el("div", "legend-interval", interval));
}

async function showValue(clicked) {
  const seq = ++clickSeq;
  const where = clicked.wrap();
  const { layer, run, lead } = state;
  const box = el("div", "value-popup");
  const pop = popup().setLatLng(clicked).setContent(box).openOn(map);
  const show = (...nodes) => {
    box.replaceChildren(...nodes);
    pop.update();
  };
  if (!layer) return show(el("div", "", "No forecast layer is shown."));
  const bounds = boundsOf(layer);
  if (![0, 360].some((dx) => bounds.contains([where.lat, where.lng + dx]))) {
    return show(el("div", "", `Outside the area of ${groupName(layer)} (${formatLatLon(where.lat, where.lng)}).`));
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
  if (seq !== clickSeq) return; // a later click owns the popup now
  const hasValue = v.value !== null && v.value !== undefined;
  const interval = intervalText(v.temporal);
  // The value route names the accumulation window; its times are UTC ISO strings without a zone.
  const span = v.interval ? ` (${v.interval.start.slice(11, 16)}–${v.interval.end.slice(11, 16)} UTC)` : "";
  show(
    el("div", "value-title", describe(layer)),
    el("div", "value", hasValue ? `${formatNumber(v.value)} ${v.units}` : "no data here"),
    ...(interval && hasValue ? [el("div", "", interval + span)] : []),
    el("div", "", `valid ${formatTime(v.valid_time)} (+${v.lead_hours} h)`),
    ...(typeof v.grid_lat === "number"
      ? [el("div", "value-node", `grid node ${formatLatLon(v.grid_lat, v.grid_lon)}`)]
      : []),
  );
}

function saveView() {
  const c = map.getCenter().wrap();
  const h = new URLSearchParams();
  if (state.layer) h.set("layer", state.layer.id);
  if (state.run) h.set("run", state.run.token);
  if (state.lead) h.set("lead", String(state.lead.hours));
  h.set("map", `${map.getZoom()}/${c.lat.toFixed(3)}/${c.lng.toFixed(3)}`);
  history.replaceState(null, "", `#${String(h).replaceAll("%2F", "/")}`); // "/" needs no escaping in a hash
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
  if (!temporal || temporal.kind === "instantaneous") return "";
  // The server words every window (fixed, previous step, since the run start); older catalogs did not.
  return temporal.description ?? `amount over the previous ${temporal.interval_hours} h`;
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

/**
 * Catalog paths start at the build root, which is where this page is served from; relative, they
 * keep working behind a path prefix. (No URL(): it would percent-encode a template's braces.)
 */
function rootRelative(path) {
  return path.replace(/^\/+/, "");
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

/** Catalog times are UTC without a zone suffix. */
function formatTime(iso) {
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
