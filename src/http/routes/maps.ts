// Public map routes: the forecast catalog and tiles from the published build, and the click value
// read live through the store. Nothing here exposes a raw array.
import type { IncomingMessage, ServerResponse } from "node:http";
import { InvalidParameterError, NotFoundError, StoreUnavailableError } from "../../errors.ts";
import { findMapLayer, parseRunParam } from "../../forecast/layers.ts";
import { pointSeries } from "../../forecast/point.ts";
import { UNITS_STORED } from "../../forecast/units-option.ts";
import { layerValue } from "../../forecast/value.ts";
import { catalogOnBase } from "../../published/catalog-base.ts";
import { CATALOG, type Catalog as CatalogDoc, type CatalogLayer, runToken } from "../../published/layout.ts";
import { liveDocument } from "../../published/live-document.ts";
import { BUILD_HEADER, type Snapshot } from "../../published/snapshot.ts";
import type { CachedFile } from "../../published/static-cache.ts";
import { sendCached } from "../../published/static-reply.ts";
import { WMTS_CAPABILITIES, wmtsCapabilities } from "../../published/wmts.ts";
import { emptyTilePng } from "../../render/empty-tile.ts";
import { validateTile } from "../../render/tiles.ts";
import { isoNoZone } from "../../store/describe.ts";
import type { AppContext } from "../context.ts";
import { pointCopies } from "../point-copies.ts";
import { baseFromRequest, publicBase, VARY_FORWARDED } from "../public-base.ts";
import { route } from "../route.ts";
import { Problem } from "../schemas/common.ts";
import {
  Catalog,
  LayerValue,
  SeriesQuery,
  TilePath,
  TileQuery,
  ValueQuery,
  WmtsCapabilitiesQuery,
} from "../schemas/maps.ts";
import { PointSeries, pointReply } from "./weather.ts";

/** A tile named by its run never changes; one that follows "latest" does at the next build. */
const TILE_PINNED = "public, max-age=31536000, immutable";
const FOLLOWS_LATEST = "public, max-age=60";
const VALUE_PINNED = "public, max-age=86400";
const JSON_TYPE = "application/json; charset=utf-8";
const WMTS_TYPE = "application/xml; charset=utf-8";
const HANDLED = { handled: true } as const;

const NOT_PUBLISHED = {
  description: "Nothing has been published yet (run gridcast build)",
  content: { "application/problem+json": { schema: Problem } },
};

async function published(app: AppContext): Promise<Snapshot & { catalog: CatalogDoc }> {
  const snap = await app.published.current();
  if (!snap?.catalog) throw new StoreUnavailableError("no forecast build has been published yet");
  return snap as Snapshot & { catalog: CatalogDoc };
}

function catalogLayer(catalog: CatalogDoc, id: string): CatalogLayer {
  const layer = catalog.layers.find((l) => l.id === id);
  if (!layer) throw new NotFoundError(`no layer "${id}" in the published catalog`, { param: "layer" });
  return layer;
}

/** A valid time as the catalog writes it: UTC without a zone letter. */
const noZone = (t: string) => t.replace(/(\.0+)?(Z|\+00:?00)$/i, "");

/**
 * The run and lead a tile request names, defaulting to the latest run and its first lead; `time`
 * (a valid time, as WMTS clients send it) picks the lead instead of `lead`.
 */
function pick(layer: CatalogLayer, run: string | undefined, lead: number | undefined, time?: string) {
  if (time !== undefined && lead !== undefined) {
    throw new InvalidParameterError("time", "give either lead or time, not both");
  }
  const token = run === undefined ? undefined : runToken(isoNoZone(parseRunParam(run)));
  const r = token === undefined ? layer.runs.at(-1) : layer.runs.find((x) => x.token === token);
  if (!r) {
    throw new NotFoundError(`layer ${layer.id} has no published run ${run}`, {
      param: "run",
      available: layer.runs.map((x) => x.run),
    });
  }
  if (time !== undefined) {
    const at = r.leads.find((x) => x.valid_time === noZone(time));
    if (!at) {
      throw new NotFoundError(`run ${r.run} of layer ${layer.id} has no lead valid at ${time}`, {
        param: "time",
        available: r.leads.map((x) => `${x.valid_time}Z`),
      });
    }
    return { token: r.token, hours: at.hours };
  }
  const l = lead === undefined ? r.leads[0] : r.leads.find((x) => x.hours === lead);
  if (!l) {
    throw new NotFoundError(`run ${r.run} of layer ${layer.id} has no lead time ${lead} h`, {
      param: "lead",
      available: r.leads.map((x) => x.hours),
    });
  }
  return { token: r.token, hours: l.hours };
}

/** The Vary a live document adds when its base URL may come from the proxy headers. */
function forwardedVary(app: AppContext): string | undefined {
  return baseFromRequest(app.settings) ? VARY_FORWARDED.Vary : undefined;
}

/**
 * Answers with a document of the published build: the build's own file (with its compressed
 * twins) when it was written for this base URL, else the document written for `base` by `write`,
 * made once per build and base (live-document.ts). Either is answered from memory once made, in
 * this very turn when it is (a warm request awaits nothing); `undefined` when it is sent, else a
 * promise settled once it is.
 */
function sendBuildDocument(
  app: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  snap: Snapshot & { catalog: CatalogDoc },
  rel: string,
  type: string,
  write: (base: string) => string,
): Promise<void> | undefined {
  const base = publicBase(app.settings, req);
  const vary = forwardedVary(app);
  if (!base || base === snap.catalog.public_url) {
    if (snap.sendWarmDocument(req, res, rel, FOLLOWS_LATEST, vary)) return undefined;
    return snap.sendDocument(req, res, rel, FOLLOWS_LATEST, vary).then((sent) => {
      // The build's file has gone (a build of an older layout): the document as this server writes it.
      if (!sent) return sendLive(req, res, snap, rel, type, base, write, vary);
    });
  }
  return sendLive(req, res, snap, rel, type, base, write, vary);
}

function sendLive(
  req: IncomingMessage,
  res: ServerResponse,
  snap: Snapshot & { catalog: CatalogDoc },
  rel: string,
  type: string,
  base: string,
  write: (base: string) => string,
  vary: string | undefined,
): Promise<void> | undefined {
  const doc = liveDocument(snap.catalog, rel, base, type, () => write(base));
  const send = (file: CachedFile) => {
    if (res.destroyed) return;
    res.setHeader(BUILD_HEADER, snap.buildId);
    sendCached(req, res, file, FOLLOWS_LATEST, vary);
  };
  if (!(doc instanceof Promise)) {
    send(doc);
    return undefined;
  }
  return doc.then(send);
}

/**
 * The catalog as this server publishes it at `base`: the build's, every URL in it moved from the
 * build's public_url (or its paths) onto `base`, and public_url set to it.
 */
function catalogText(catalog: CatalogDoc, base: string): string {
  if (!base) return JSON.stringify(catalog);
  return JSON.stringify(catalogOnBase(catalog, base));
}

export const mapRoutes = [
  route({
    method: "GET",
    path: `/${WMTS_CAPABILITIES}`,
    operationId: "getWmtsCapabilities",
    summary: "OGC WMTS 1.0.0 capabilities (RESTful) of the published maps",
    description:
      "Every catalog layer with its latest run: a Time dimension listing the valid times (default the first), the " +
      "legend, TileMatrixSetLimits where a regional layer has tiles, and the GoogleMapsCompatible tile matrix set " +
      "up to the build's maximum zoom. Tiles come from the tile route, the lead chosen by valid time. URLs are " +
      "absolute, on the public_url setting; without it, on the request's X-Forwarded-Proto/-Host when trust_proxy " +
      "is 1; otherwise 404 (this server publishes no WMTS document), since one cannot hold relative URLs. The build writes " +
      "the same document beside its tiles for a CDN, with brotli and gzip twins; this route answers those very bytes when " +
      "the build was written for the same base URL. Compressed by Accept-Encoding (br, gzip, q-values), Vary: " +
      "Accept-Encoding (and the proxy headers when the base comes from them), an ETag per coding, 304, Range.",
    tags: ["maps"],
    auth: "public",
    query: WmtsCapabilitiesQuery,
    responses: {
      200: { description: "Capabilities", content: { "application/xml": { schema: { type: "string" } } } },
      503: NOT_PUBLISHED,
    },
    handler: async ({ app, req, res, query }) => {
      const q = query as Record<string, string | undefined>;
      const asked = q.request ?? q.REQUEST;
      if (asked !== undefined && asked.toLowerCase() !== "getcapabilities") {
        throw new InvalidParameterError(
          "request",
          "this document answers GetCapabilities; tiles come from its ResourceURL",
        );
      }
      const snap = await published(app);
      if (!publicBase(app.settings, req)) {
        // Not a server fault a client can cause or wait out: this server simply has no WMTS document
        // until the operator says where clients reach it, so every request, hostile or not, gets the same 4xx.
        throw new NotFoundError(
          "no WMTS capabilities here: public_url is not set (and trust_proxy is 0), and WMTS needs the absolute URL clients reach this server at",
        );
      }
      // The build's document and its twins when written for this base, else one made for it once.
      const sent = sendBuildDocument(app, req, res, snap, WMTS_CAPABILITIES, WMTS_TYPE, (base) =>
        wmtsCapabilities(snap.catalog, base),
      );
      if (sent) await sent;
      return { handled: true };
    },
  }),
  route({
    method: "GET",
    path: "/api/forecast/catalog",
    operationId: "getForecastCatalog",
    summary: "Forecast map layers, their runs and lead times",
    description:
      "The catalog of the published build: every forecast/* layer (group × variable × level) with units, temporal " +
      "semantics, colour style, legend links, bounds, zoom range, and per run and lead the valid time, the static " +
      "tile path, the tile route and the TileJSON. The build's catalog.json and its brotli/gzip twins, chosen by " +
      "Accept-Encoding (Vary, an ETag per coding, 304, Range). Every URL in it is absolute on this server's base " +
      "URL when one is known (public_url, or the trusted proxy's headers), moved there from the build's; else the " +
      "build's own (absolute on the build's public_url, or paths with public_url_missing). 503 until a build has " +
      "been published.",
    tags: ["maps"],
    auth: "public",
    responses: {
      200: { description: "Catalog", content: { "application/json": { schema: Catalog } } },
      503: NOT_PUBLISHED,
    },
    // The build's catalog.json itself, with its compressed twins (a real build's catalog runs to
    // megabytes), from memory: a warm request is answered in this turn, awaiting nothing. A server
    // that knows a base URL the build did not write answers the catalog with it, made once per
    // build and base.
    handler: ({ app, req, res }) => {
      const snap = app.published.now();
      if (snap?.catalog) {
        const sent = sendBuildDocument(
          app,
          req,
          res,
          snap as Snapshot & { catalog: CatalogDoc },
          CATALOG,
          JSON_TYPE,
          (base) => catalogText(snap.catalog!, base),
        );
        return sent ? sent.then(() => HANDLED) : HANDLED;
      }
      return published(app).then(async (snap) => {
        await sendBuildDocument(app, req, res, snap, CATALOG, JSON_TYPE, (base) => catalogText(snap.catalog, base));
        return HANDLED;
      });
    },
  }),
  route({
    method: "GET",
    path: "/api/forecast/tile/{z}/{x}/{y}",
    operationId: "getForecastTile",
    summary: "A pre-rendered 256 px PNG map tile (Web Mercator, XYZ, zoom 0..7), or its 512 px @2x version",
    description:
      "Served from the published build. Outside a regional layer's coverage the answer is a transparent tile. " +
      "Cached for a year (immutable) when the run is named and drawing is the layer's drawing in the catalog (the " +
      "renderer and style the tiles are drawn with, which the catalog's route URLs carry); for a minute otherwise " +
      "(the latest run by default, or a URL pinned under another drawing, answered with the tile as drawn now), so " +
      "a tile drawn anew after an upgrade never sits under a URL a cache keeps for a year. " +
      "400 for a tile address off the z0..7 pyramid; 404 for an unknown layer, run or lead, or a zoom level " +
      "above the layer's maxzoom in the catalog. 500 corrupt-data (Cache-Control: no-store) when the build's tile " +
      "archive for the lead is damaged or missing: every field of an archive is checked before use, and the server " +
      "log names the archive and the defect; the same holds for static tile paths and raw reads of that archive. " +
      "scale=2 answers the 512 px tile of the same area for dense screens (the static {y}@2x.png), for layers " +
      "whose catalog entry has hidpi_maxzoom and zooms up to it; 404 otherwise. Tiles of contour overlays and " +
      "of the orientation layer carry a PNG tEXt chunk gridcast:boxes: JSON [[left, top, right, bottom], …] in " +
      "the tile's 256 px frame, the boxes of the line labels and H/L marks, or of the place labels, drawn on it.",
    tags: ["maps"],
    auth: "public",
    pathParams: TilePath,
    query: TileQuery,
    responses: {
      200: { description: "PNG tile", content: { "image/png": { schema: { type: "string", format: "binary" } } } },
      503: NOT_PUBLISHED,
    },
    handler: async ({ app, params, query }) => {
      const { z, x, y } = params as unknown as { z: number; x: number; y: number };
      validateTile(z, x, y);
      const q = query as {
        layer: string;
        run?: string;
        lead?: number;
        time?: string;
        scale?: number;
        drawing?: string;
      };
      const snap = await published(app);
      const layer = catalogLayer(snap.catalog, q.layer);
      const hidpi = q.scale === 2;
      if (hidpi && !(layer.hidpi_maxzoom !== undefined && z <= layer.hidpi_maxzoom)) {
        throw new NotFoundError(
          layer.hidpi_maxzoom === undefined
            ? `layer ${layer.id} has no @2x tiles in this build`
            : `layer ${layer.id} has @2x tiles up to zoom ${layer.hidpi_maxzoom}`,
          { param: "scale", ...(layer.hidpi_maxzoom === undefined ? {} : { max_zoom: layer.hidpi_maxzoom }) },
        );
      }
      if (z > layer.maxzoom) {
        throw new NotFoundError(`layer ${layer.id} is published up to zoom ${layer.maxzoom}`, {
          param: "z",
          max_zoom: layer.maxzoom,
        });
      }
      const { token, hours } = pick(layer, q.run, q.lead, q.time);
      const body =
        (await snap.tile(q.layer, token, hours, z, x, y, hidpi, layer.drawing)) ??
        (await snap.emptyTile()) ??
        emptyTilePng();
      // Pinned for a year only under the drawing it was drawn with (a build made before drawings
      // were recorded has none: its named runs are pinned as they were).
      const pinned = q.run !== undefined && (layer.drawing === undefined || q.drawing === layer.drawing);
      return {
        body,
        type: "image/png",
        headers: { [BUILD_HEADER]: snap.buildId },
        cache: pinned ? TILE_PINNED : FOLLOWS_LATEST,
      };
    },
  }),
  route({
    method: "GET",
    path: "/api/forecast/value",
    operationId: "getForecastValue",
    summary: "The value of a map layer at a clicked position",
    description:
      "Reads the grid node nearest to the point (the node whose colour the tile shows there) for one run and lead, " +
      "one cell through the chunk cache. value is null where the field is missing or the point lies outside the " +
      "layer's grid. Without run, the latest published run of the layer (or the store's latest) is used. " +
      "display gives the value in the layer's display unit (°C, hPa, mm, %, m/s); derived layers answer with " +
      "their computed value (wind speed with direction_deg, isobars with the pressure). On a projected or rotated " +
      "grid the node is the nearest by distance on the earth (among the corners of the cell the point projects " +
      "into), coverage is the cells' own footprint, and wind components stored relative to the grid are turned " +
      "to true north (u10/v10 layers, and the wind speed's direction_deg).",
    tags: ["maps"],
    auth: "public",
    heavy: true,
    query: ValueQuery,
    responses: { 200: { description: "Value", content: { "application/json": { schema: LayerValue } } } },
    handler: async ({ app, query }) => {
      const q = query as { layer: string; run?: string; lead?: number; lat: number; lon: number };
      let run = q.run;
      // Default to what the map shows: the catalog's latest run, which may lag the store's newest.
      if (run === undefined)
        run = (await app.published.current())?.catalog?.layers.find((l) => l.id === q.layer)?.runs.at(-1)?.token;
      const value = await layerValue(app.store, { ...q, run }, pointCopies(app));
      return { json: value, cache: q.run === undefined ? FOLLOWS_LATEST : VALUE_PINNED };
    },
  }),
  route({
    method: "GET",
    path: "/api/forecast/series",
    operationId: "getForecastSeries",
    summary: "A map layer's forecast at one place across all leads (the viewer's meteogram)",
    description:
      "The series form of /api/forecast/value for a layer of a stored variable: every lead of one run at the grid " +
      "node nearest to the point, read by the same code as /point, so the numbers are /point's for the same place, " +
      "variable and run. On a global layer the most local regional patch that covers the point and has the " +
      "variable answers, as /point chooses it (source and region name it). Without run, the latest published run " +
      "of the layer. Derived layers (wind speed, arrows, isobars) have no series of their own: ask their sources " +
      "(u10 and v10, msl); asking one is a 400 naming them. The map's view only: no key, no member or level choice " +
      "beyond the layer's own.",
    tags: ["maps"],
    auth: "public",
    heavy: true,
    query: SeriesQuery,
    responses: { 200: { description: "Point series", content: { "application/json": { schema: PointSeries } } } },
    handler: async ({ app, query }) => {
      const q = query as { layer: string; run?: string; lat: number; lon: number; units?: string };
      let run = q.run;
      if (run === undefined)
        run = (await app.published.current())?.catalog?.layers.find((l) => l.id === q.layer)?.runs.at(-1)?.token;
      const { group, variable, level, derived } = await findMapLayer(app.store, q.layer);
      if (derived) {
        throw new InvalidParameterError(
          "layer",
          `${q.layer} is derived from ${derived.sources.map((s) => s.name).join(" and ")}: ask for the series of those layers`,
        );
      }
      const series = await pointSeries(
        app.store,
        app.registry,
        { lat: q.lat, lon: q.lon, var: variable.name, group: group.id, run, level: level ?? undefined },
        pointCopies(app),
      );
      return {
        ...pointReply(app.registry, series, q.units ?? UNITS_STORED),
        cache: q.run === undefined ? FOLLOWS_LATEST : VALUE_PINNED,
      };
    },
  }),
];
