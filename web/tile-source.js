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
    return img;
  },
});

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
