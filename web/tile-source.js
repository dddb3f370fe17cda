// Where the viewer gets its catalog and tiles. Served by gridcast: the catalog route and the tile
// route. From a plain copy of the build on a CDN (no API): catalog.json, and per lead either its
// PMTiles archive (read with HTTP Range requests by the pmtiles package, loaded on first use) or
// its z/x/y files. The one function the viewer calls for tiles is forecastTileLayer.
import { GridLayer, tileLayer } from "./vendor/leaflet/leaflet-src.esm.js";

const API_CATALOG = "api/forecast/catalog";
const BUILD_CATALOG = "catalog.json";
/** A fully transparent pixel for a tile the archive does not hold (outside a regional layer). */
const EMPTY = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

/** "Served by the API" or "a static copy of the build", decided by where the catalog came from. */
export const source = { fromBuild: false };

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

const ArchiveLayer = GridLayer.extend({
  initialize(url, options) {
    GridLayer.prototype.initialize.call(this, options);
    this._archiveUrl = url;
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
    return img;
  },
});

/** Relative to the page, so the viewer works below any path prefix. */
const rel = (path) => path.replace(/^\//, "");

/**
 * The Leaflet layer showing one lead's tiles: the tile route when the API serves the page, else
 * the lead's archive (builds made with --tiles pmtiles) or its z/x/y files.
 */
export function forecastTileLayer(lead, options) {
  if (!source.fromBuild) return tileLayer(rel(lead.route), options);
  if (lead.archive) return new ArchiveLayer(rel(lead.archive), options);
  return tileLayer(rel(lead.tiles), options);
}
