// Where the viewer gets its catalog and tiles. Served by gridcast: the catalog route and the tile
// route. From a plain copy of the build on a CDN (no API): catalog.json, and per lead either its
// PMTiles archive (read with HTTP Range requests by the pmtiles package, loaded on first use) or
// its z/x/y files. The one function the viewer calls for tiles is forecastTileLayer.
import { GridLayer, TileLayer } from "./vendor/leaflet/leaflet-src.esm.js";

const API_CATALOG = "api/forecast/catalog";
const BUILD_CATALOG = "catalog.json";
/** A fully transparent pixel for a tile the archive does not hold (outside a regional layer). */
const EMPTY = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

/**
 * "Served by the API" or "a static copy of the build", decided by where the catalog came from; and
 * the catalog's public_url, which its URLs start with when the build or server knows it.
 */
export const source = { fromBuild: false, base: "" };

/**
 * A catalog URL as a path relative to this page, which is served from the build root: the
 * catalog's own base URL dropped, so the viewer works at whatever address it was opened at
 * (behind a path prefix too). No URL(): it would percent-encode a template's braces.
 */
export function pageRelative(url) {
  const local = source.base && url.startsWith(`${source.base}/`) ? url.slice(source.base.length) : url;
  return local.replace(/^\/+/, "");
}

/**
 * The catalog response: the API's, or the build's catalog.json where no API answers (a CDN
 * returns 404 or fails for the route). Resolves to a Response, or throws like fetch.
 */
export async function fetchCatalog(init = {}) {
  let res;
  try {
    res = await fetch(API_CATALOG, init);
  } catch {
    res = undefined;
  }
  if (res && res.status !== 404) return res;
  const copy = await fetch(BUILD_CATALOG, init).catch(() => undefined);
  if (copy?.ok) {
    source.fromBuild = true;
    return copy;
  }
  if (res) return res;
  throw new Error("no catalog");
}

let pmtilesLoaded;
/** The pmtiles package's browser build defines a global; fetched only when an archive is read. */
function loadPmtiles() {
  pmtilesLoaded ??= new Promise((ok, fail) => {
    const s = document.createElement("script");
    s.src = "vendor/pmtiles/pmtiles.js";
    s.onload = () => ok(globalThis.pmtiles);
    s.onerror = () => fail(new Error("vendor/pmtiles/pmtiles.js could not be loaded"));
    document.head.append(s);
  });
  return pmtilesLoaded;
}

const archives = new Map();
function archive(url) {
  let a = archives.get(url);
  if (!a) {
    a = loadPmtiles().then((pm) => new pm.PMTiles(new URL(url, document.baseURI).href));
    archives.set(url, a);
    if (archives.size > 32) archives.delete(archives.keys().next().value);
  }
  return a;
}

/** A dense screen: two or more device pixels per CSS pixel. */
const dense = () => (globalThis.devicePixelRatio || 1) >= 2;

/**
 * A regional patch fades in over FEATHER_PX inside its bounds, so it sits on the global field
 * under it without a hard rectangle: a CSS mask on each tile the bounds' edge crosses.
 */
const FEATHER_PX = 24;
function feather(layer, tile, coords) {
  const bounds = layer.options.feather;
  const map = layer._map;
  if (!bounds || !map) return;
  const size = layer.getTileSize();
  const nw = map.project(bounds.getNorthWest(), coords.z);
  const se = map.project(bounds.getSouthEast(), coords.z);
  const x0 = coords.x * size.x;
  const y0 = coords.y * size.y;
  const f = FEATHER_PX;
  const masks = [];
  const edge = (at, extent, dir) => {
    // `at`: the bounds' edge in tile pixels from the side the gradient starts at.
    if (at + f > 0 && at < extent) masks.push(`linear-gradient(${dir}, transparent ${at}px, #000 ${at + f}px)`);
  };
  edge(nw.x - x0, size.x, "to right");
  edge(x0 + size.x - se.x, size.x, "to left");
  edge(nw.y - y0, size.y, "to bottom");
  edge(y0 + size.y - se.y, size.y, "to top");
  if (!masks.length) return;
  tile.style.maskImage = masks.join(", ");
  tile.style.maskComposite = "intersect";
  tile.style.maskSize = "100% 100%";
  tile.style.maskRepeat = "no-repeat";
}

/**
 * A global overlay is cut out where a more local patch draws its own (options.holes: bounds), and a
 * patch's where a still more local one does, with a crisp edge: each place shows one patch's lines,
 * the one whose field is shown there. A clip path per tile the holes reach (even-odd: each hole a
 * ring joined to the tile's corner by a segment drawn there and back); a tile inside a hole is hidden.
 */
function cutHoles(layer, tile, coords) {
  const holes = layer.options.holes;
  const map = layer._map;
  if (!holes?.length || !map) return;
  const size = layer.getTileSize();
  const x0 = coords.x * size.x;
  const y0 = coords.y * size.y;
  const world = 256 * 2 ** coords.z;
  const rings = [];
  for (const b of holes) {
    const nw = map.project(b.getNorthWest(), coords.z);
    const se = map.project(b.getSouthEast(), coords.z);
    // The copy of the hole nearest this tile (the world wraps).
    const shift = world * Math.round((x0 + size.x / 2 - (nw.x + se.x) / 2) / world);
    const l = nw.x + shift - x0;
    const r = se.x + shift - x0;
    const t = nw.y - y0;
    const bt = se.y - y0;
    if (r <= 0 || l >= size.x || bt <= 0 || t >= size.y) continue;
    if (l <= 0 && t <= 0 && r >= size.x && bt >= size.y) {
      tile.style.visibility = "hidden";
      return;
    }
    rings.push([l, t, r, bt].map((v) => Math.max(-1, Math.min(size.x + 1, v))));
  }
  if (!rings.length) return;
  const pt = (x, y) => `${x}px ${y}px`;
  const path = [pt(0, 0), pt(size.x, 0), pt(size.x, size.y), pt(0, size.y), pt(0, 0)];
  for (const [l, t, r, b] of rings) path.push(pt(l, t), pt(r, t), pt(r, b), pt(l, b), pt(l, t), pt(0, 0));
  tile.style.clipPath = `polygon(evenodd, ${path.join(", ")})`;
}

/**
 * No seams at any device pixel ratio. Where the map sits at a fractional device pixel (a control
 * bar 86.7 CSS px tall at DPR 3), a tile edge half-covers a row of device pixels; Leaflet blends
 * tiles with plus-lighter so the two halves add up, but the sum came out lighter than either tile:
 * a bright line every 256 px. Instead each tile is drawn one device pixel larger than its step,
 * with plain blending: the next tile covers the overlap with the same colours.
 */
function overlap(tile, size, layer) {
  // A translucent layer would show the overlap as a line of doubled veil: its tiles abut exactly,
  // and the viewer keeps the map on whole device pixels (snapToDevicePixels) so they meet cleanly.
  const extra = layer.options.translucent ? 0 : 1 / (globalThis.devicePixelRatio || 1);
  tile.style.width = `${size.x + extra}px`;
  tile.style.height = `${size.y + extra}px`;
  tile.style.mixBlendMode = "normal";
}

/**
 * Forecast tiles: the 512 px @2x tiles on dense screens up to the layer's hidpi_maxzoom (a 256 px
 * tile scaled up beyond), tiles that overlap by a device pixel, a regional patch feathered.
 */
const ForecastTiles = TileLayer.extend({
  getTileUrl(coords) {
    const { url2x, hidpiMaxZoom } = this.options;
    if (!(url2x && dense() && this._getZoomForUrl() <= hidpiMaxZoom)) {
      return TileLayer.prototype.getTileUrl.call(this, coords);
    }
    const url = this._url;
    this._url = url2x;
    try {
      return TileLayer.prototype.getTileUrl.call(this, coords);
    } finally {
      this._url = url;
    }
  },
  createTile(coords, done) {
    const tile = TileLayer.prototype.createTile.call(this, coords, done);
    feather(this, tile, coords);
    cutHoles(this, tile, coords);
    return tile;
  },
  _initTile(tile) {
    TileLayer.prototype._initTile.call(this, tile);
    overlap(tile, this.getTileSize(), this);
  },
});

const ArchiveLayer = GridLayer.extend({
  initialize(url, options) {
    GridLayer.prototype.initialize.call(this, options);
    this._archiveUrl = url;
  },
  _initTile(tile) {
    GridLayer.prototype._initTile.call(this, tile);
    overlap(tile, this.getTileSize(), this);
  },
  createTile(coords, done) {
    const img = document.createElement("img");
    img.alt = "";
    img.setAttribute("role", "presentation");
    archive(this._archiveUrl)
      .then((a) => a.getZxy(coords.z, coords.x, coords.y))
      .then((tile) => {
        const url = tile ? URL.createObjectURL(new Blob([tile.data], { type: "image/png" })) : EMPTY;
        img.onload = () => {
          if (tile) URL.revokeObjectURL(url);
          done(undefined, img);
        };
        img.onerror = () => done(new Error(`tile ${coords.z}/${coords.x}/${coords.y}`), img);
        img.src = url;
      })
      .catch((e) => done(e, img));
    feather(this, img, coords);
    cutHoles(this, img, coords);
    return img;
  },
});

// ---- Place names that yield to the weather ----
// Orientation tiles and overlay tiles carry boxes in their PNG (a tEXt chunk "gridcast:boxes",
// [left, top, right, bottom] in the tile's 1x frame): the place labels drawn on the tile, and the
// isobars' line labels and H/L marks or the wind arrows' heads. A place label is hidden (its box cleared) when it meets a mark of a
// shown overlay. The decision for a label looks at the marks of every overlay tile its box reaches,
// so each tile a label spans decides alike: it is shown whole or not at all.

const BOXES_KEYWORD = "gridcast:boxes";
const PNG_HEADER = 8;

/** The boxes a tile's PNG bytes carry ([] when none): the chunks before its pixels. */
export function pngBoxes(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const latin1 = new TextDecoder("latin1");
  let at = PNG_HEADER;
  while (at + 8 <= bytes.length) {
    const len = view.getUint32(at);
    const type = latin1.decode(bytes.subarray(at + 4, at + 8));
    if (type === "IDAT" || type === "IEND") break;
    if (type === "tEXt") {
      const text = latin1.decode(bytes.subarray(at + 8, at + 8 + len));
      const nul = text.indexOf("\0");
      if (text.slice(0, nul) === BOXES_KEYWORD) return JSON.parse(text.slice(nul + 1));
    }
    at += 12 + len;
  }
  return [];
}

/** Substitutes a tile address into a {z}/{x}/{y} template. */
const fill = (template, z, x, y) =>
  template.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y));

/**
 * The PNG bytes of tile z/x/y of one lead (null: no tile there), from wherever forecastTileLayer
 * would take it; `hidpi` asks for the @2x tile where the lead has one. Answers { bytes, scale }.
 */
export function tileBytes(lead, { hidpiMaxZoom = -1 } = {}) {
  const wants2x = (z) => dense() && z <= hidpiMaxZoom;
  if (source.fromBuild && lead.archive) {
    return async (z, x, y) => {
      const t = await (await archive(rel(lead.archive))).getZxy(z, x, y);
      return { bytes: t ? new Uint8Array(t.data) : null, scale: 1 };
    };
  }
  const one = source.fromBuild ? lead.tiles : lead.route;
  const two = source.fromBuild ? lead.tiles_2x : lead.route_2x;
  return async (z, x, y) => {
    const scale = two && wants2x(z) ? 2 : 1;
    const url = fill(rel(scale === 2 ? two : one), z, x, y);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`tile ${z}/${x}/${y}: HTTP ${res.status}`);
    return { bytes: new Uint8Array(await res.arrayBuffer()), scale, url };
  };
}

/**
 * The marks of the shown overlays near a world rectangle of zoom z: `overlays` are
 * { fetch: tileBytes(...), minZoom, maxZoom, holes? } (holes(z): world rectangles where the overlay
 * is cut out, its marks there not drawn). An overlay past its zoom range is shown scaled from
 * its nearest zoom, so are its marks. Answers boxes in world pixels of zoom z.
 */
export function weatherMarks(overlays) {
  const cache = new Map();
  const tileMarks = (o, k, z, x, y) => {
    const key = `${k}/${z}/${x}/${y}`;
    let got = cache.get(key);
    if (!got) {
      got = o.fetch(z, x, y).then((t) => (t.bytes ? pngBoxes(t.bytes) : []));
      cache.set(key, got);
    }
    return got;
  };
  return async (z, [x0, y0, x1, y1]) => {
    const out = [];
    await Promise.all(
      overlays.map(async (o, k) => {
        const zi = Math.max(o.minZoom, Math.min(o.maxZoom, z));
        const f = 2 ** (z - zi); // world pixels of zoom z per pixel of zoom zi
        const n = 2 ** zi;
        const size = 256 * f;
        const jobs = [];
        const world = 256 * 2 ** z;
        const holes = o.holes?.(z) ?? [];
        // A mark whose centre lies in a hole (any world copy) is not drawn: the overlay is cut out there.
        const cut = (x, y) =>
          holes.some(([l, t, r, b]) => {
            const cx = x - world * Math.round((x - (l + r) / 2) / world);
            return cx >= l && cx < r && y >= t && y < b;
          });
        for (let ty = Math.max(0, Math.floor(y0 / size)); ty <= Math.min(n - 1, Math.floor(y1 / size)); ty++) {
          for (let tx = Math.floor(x0 / size); tx <= Math.floor(x1 / size); tx++) {
            const wx = ((tx % n) + n) % n;
            jobs.push(
              tileMarks(o, k, zi, wx, ty).then((boxes) => {
                for (const b of boxes) {
                  const m = [
                    (tx * 256 + b[0]) * f,
                    (ty * 256 + b[1]) * f,
                    (tx * 256 + b[2]) * f,
                    (ty * 256 + b[3]) * f,
                  ];
                  if (!cut((m[0] + m[2]) / 2, (m[1] + m[3]) / 2)) out.push(m);
                }
              }),
            );
          }
        }
        await Promise.all(jobs);
      }),
    );
    return out;
  };
}

/** Pixels between a place label and a mark for them to count as apart. */
const CLEARANCE = 1;

const meets = (a, b) =>
  a[0] - CLEARANCE < b[2] && b[0] < a[2] + CLEARANCE && a[1] - CLEARANCE < b[3] && b[1] < a[3] + CLEARANCE;

/**
 * The orientation layer on canvases: each tile is its PNG with the place labels that meet a shown
 * overlay's mark cleared. setWeather(weatherMarks(...) or null) redraws the tiles on screen.
 * A canvas keeps data-src (the tile's URL), data-labels and data-hidden (boxes in its 1x frame).
 */
const PlaceTiles = GridLayer.extend({
  initialize(fetchTile, options) {
    GridLayer.prototype.initialize.call(this, options);
    this._fetchTile = fetchTile;
    this._weather = null;
  },
  _initTile(tile) {
    GridLayer.prototype._initTile.call(this, tile);
    overlap(tile, this.getTileSize(), this);
  },
  createTile(coords, done) {
    const canvas = document.createElement("canvas");
    canvas.setAttribute("role", "presentation");
    this._fetchTile(coords.z, coords.x, coords.y)
      .then(async ({ bytes, scale, url }) => {
        const bitmap = bytes ? await createImageBitmap(new Blob([bytes], { type: "image/png" })) : null;
        canvas.gridcast = { bitmap, scale, coords, labels: bytes ? pngBoxes(bytes) : [] };
        if (url) canvas.dataset.src = url;
        await this._paint(canvas);
        done(undefined, canvas);
      })
      .catch((e) => done(e, canvas));
    return canvas;
  },
  /** Which overlays' marks place labels yield to (null: none); the tiles on screen are redrawn. */
  setWeather(marks) {
    this._weather = marks;
    for (const t of Object.values(this._tiles ?? {})) if (t.el.gridcast) this._paint(t.el).catch(() => {});
  },
  async _paint(canvas) {
    const { bitmap, scale, coords, labels } = canvas.gridcast;
    const weather = this._weather;
    const hidden = [];
    if (weather && labels.length) {
      const left = coords.x * 256;
      const top = coords.y * 256;
      const world = labels.map((b) => [b[0] + left, b[1] + top, b[2] + left, b[3] + top]);
      const reach = [
        Math.min(...world.map((b) => b[0])) - CLEARANCE,
        Math.min(...world.map((b) => b[1])) - CLEARANCE,
        Math.max(...world.map((b) => b[2])) + CLEARANCE,
        Math.max(...world.map((b) => b[3])) + CLEARANCE,
      ];
      let marks = [];
      try {
        marks = await weather(coords.z, reach);
        delete canvas.dataset.weather;
      } catch (e) {
        // The overlay's tiles did not come: the names stay, and the tile says so.
        canvas.dataset.weather = "unavailable";
        console.warn(`place names at ${coords.z}/${coords.x}/${coords.y}: overlay marks unavailable (${e.message})`);
      }
      labels.forEach((b, i) => {
        if (marks.some((m) => meets(world[i], m))) hidden.push(b);
      });
    }
    if (this._weather !== weather) return; // a newer lead or overlay set is being drawn
    const size = bitmap ? bitmap.width : 256;
    canvas.width = size;
    canvas.height = size;
    const ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, size, size);
    if (bitmap) ctx.drawImage(bitmap, 0, 0);
    // Label masks keep 4 px apart (the layout's margin): clearing a box and 2 px round it takes
    // the whole label, halo included, and nothing of its neighbours.
    for (const b of hidden)
      ctx.clearRect((b[0] - 2) * scale, (b[1] - 2) * scale, (b[2] - b[0] + 4) * scale, (b[3] - b[1] + 4) * scale);
    canvas.dataset.labels = JSON.stringify(labels.filter((b) => !hidden.includes(b)));
    canvas.dataset.hidden = JSON.stringify(hidden);
    canvas.dataset.painted = weather ? "weather" : "plain";
  },
});

/**
 * The orientation layer (place names, state borders, water) of one lead, drawn so that its place
 * labels yield to the marks of the overlays given to setWeather.
 */
export function placeTileLayer(lead, options) {
  return new PlaceTiles(tileBytes(lead, options), options);
}

/** Relative to the page, so the viewer works below any path prefix. */
const rel = pageRelative;

/**
 * The Leaflet layer showing one lead's tiles: the tile route when the API serves the page, else
 * the lead's archive (builds made with --tiles pmtiles) or its z/x/y files. `hidpiMaxZoom` is the
 * layer's hidpi_maxzoom (its @2x tiles); `feather` the bounds of a regional patch to fade in.
 */
export function forecastTileLayer(lead, options) {
  if (!source.fromBuild) {
    const url2x = lead.route_2x ? rel(lead.route_2x) : undefined;
    return new ForecastTiles(rel(lead.route), { ...options, url2x });
  }
  if (lead.archive) return new ArchiveLayer(rel(lead.archive), options);
  return new ForecastTiles(rel(lead.tiles), { ...options, url2x: lead.tiles_2x ? rel(lead.tiles_2x) : undefined });
}
