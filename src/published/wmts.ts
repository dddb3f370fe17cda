// OGC WMTS 1.0.0 capabilities (RESTful) of a published build, for GIS clients (QGIS, GDAL's WMTS
// driver, OWSLib, ArcGIS): every catalog layer with its latest run, a Time dimension listing the
// lead's valid times (the first by default), its legend, TileMatrixSetLimits where a regional
// layer has tiles, and the GoogleMapsCompatible tile matrix set up to the build's maximum zoom.
// Tiles are addressed through the public tile route, which picks the lead by valid time and
// answers a transparent tile outside a regional patch. The build writes this document beside
// its tiles (with public_url, or paths and a note saying it is missing); the server answers it
// live with its own base URL.
import { MERCATOR_MAX_LAT, tilesCovering } from "../render/tiles.ts";
import { type Catalog, type CatalogLayer, legendPaths } from "./layout.ts";

/** Where the capabilities document lives, in the build and on the server. */
export const WMTS_CAPABILITIES = "wmts/1.0.0/WMTSCapabilities.xml";
export const WMTS_MATRIX_SET = "GoogleMapsCompatible";
/** Scale denominator of zoom 0 of the GoogleMapsCompatible set (OGC 07-057r7, annex E.4). */
const Z0_SCALE = 559082264.0287178;
/** Half the extent of Web Mercator, metres. */
const MERCATOR_HALF = 20037508.3427892;

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * The tile route template of one layer and run, the lead chosen by {Time}; with the layer's
 * drawing, so the tiles it names are cached for a year only as that renderer drew them.
 */
function resourceTemplate(base: string, layer: CatalogLayer, token: string): string {
  return (
    `${base}/api/forecast/tile/{TileMatrix}/{TileCol}/{TileRow}` +
    `?layer=${encodeURIComponent(layer.id)}&run=${token}&time={Time}` +
    (layer.drawing ? `&drawing=${layer.drawing}` : "")
  );
}

/** Tile rows and columns a regional layer has at each zoom (a superset across the antimeridian). */
function limits(layer: CatalogLayer): string {
  if (layer.kind === "global") return "";
  const rows: string[] = [];
  for (let z = layer.minzoom; z <= layer.maxzoom; z++) {
    const tiles = tilesCovering(layer.bounds, z);
    if (tiles.length === 0) continue;
    const xs = tiles.map((t) => t.x);
    const ys = tiles.map((t) => t.y);
    const [w, , e] = layer.bounds;
    const wraps = e < w;
    rows.push(
      `<TileMatrixLimits><TileMatrix>${z}</TileMatrix><MinTileRow>${Math.min(...ys)}</MinTileRow>` +
        `<MaxTileRow>${Math.max(...ys)}</MaxTileRow><MinTileCol>${wraps ? 0 : Math.min(...xs)}</MinTileCol>` +
        `<MaxTileCol>${wraps ? 2 ** z - 1 : Math.max(...xs)}</MaxTileCol></TileMatrixLimits>`,
    );
  }
  return `<TileMatrixSetLimits>${rows.join("")}</TileMatrixSetLimits>`;
}

/** y in EPSG:3857 metres of a latitude, clamped to the matrix set's square. */
function mercatorY(lat: number): number {
  const f = (Math.max(-MERCATOR_MAX_LAT, Math.min(MERCATOR_MAX_LAT, lat)) * Math.PI) / 180;
  const y = (Math.log(Math.tan(Math.PI / 4 + f / 2)) / Math.PI) * MERCATOR_HALF;
  return Math.max(-MERCATOR_HALF, Math.min(MERCATOR_HALF, y));
}

/**
 * A layer's extent as its tiles cover it, in WGS84 and in EPSG:3857. Latitudes are clamped to
 * the matrix set's ±85.0511°: clients such as GDAL's WMTS driver turn the box into tile rows, and
 * ±90° lies outside the matrix (rows below 0). A box across the antimeridian keeps its east edge
 * past 180° in WGS84 and spans the whole width in EPSG:3857, where one box cannot wrap.
 */
function boundingBoxes(bounds: [number, number, number, number]): { wgs84: string; mercator: string } {
  const [w, s0, e, n0] = bounds;
  const [s, n] = [Math.max(s0, -MERCATOR_MAX_LAT), Math.min(n0, MERCATOR_MAX_LAT)];
  const wraps = e < w;
  const [x0, x1] = wraps ? [-MERCATOR_HALF, MERCATOR_HALF] : [(w / 180) * MERCATOR_HALF, (e / 180) * MERCATOR_HALF];
  return {
    wgs84:
      `<ows:WGS84BoundingBox><ows:LowerCorner>${w} ${s}</ows:LowerCorner>` +
      `<ows:UpperCorner>${wraps ? e + 360 : e} ${n}</ows:UpperCorner></ows:WGS84BoundingBox>`,
    mercator:
      `<ows:BoundingBox crs="urn:ogc:def:crs:EPSG::3857"><ows:LowerCorner>${x0} ${mercatorY(s)}</ows:LowerCorner>` +
      `<ows:UpperCorner>${x1} ${mercatorY(n)}</ows:UpperCorner></ows:BoundingBox>`,
  };
}

function layerXml(layer: CatalogLayer, base: string): string {
  const run = layer.runs.at(-1);
  if (!run || run.leads.length === 0) return "";
  const box = boundingBoxes(layer.bounds);
  const times = run.leads.map((l) => `${l.valid_time.replace(/Z?$/, "Z")}`);
  const legend = layer.legend
    ? `<LegendURL format="image/png" xlink:href="${esc(`${base}/${legendPaths(layer.id).png}`)}"/>`
    : "";
  return [
    "<Layer>",
    `<ows:Title>${esc(`${layer.long_name} (${layer.id}), run ${run.run}`)}</ows:Title>`,
    `<ows:Abstract>${esc(`${layer.long_name} in ${layer.display.units}; one tile set per valid time`)}</ows:Abstract>`,
    box.wgs84,
    `<ows:Identifier>${esc(layer.id)}</ows:Identifier>`,
    box.mercator,
    `<Style isDefault="true"><ows:Identifier>default</ows:Identifier>${legend}</Style>`,
    "<Format>image/png</Format>",
    `<Dimension><ows:Identifier>Time</ows:Identifier><ows:UOM>ISO8601</ows:UOM><Default>${times[0]}</Default>`,
    ...times.map((t) => `<Value>${t}</Value>`),
    "</Dimension>",
    `<TileMatrixSetLink><TileMatrixSet>${WMTS_MATRIX_SET}</TileMatrixSet>${limits(layer)}</TileMatrixSetLink>`,
    `<ResourceURL format="image/png" resourceType="tile" template="${esc(resourceTemplate(base, layer, run.token))}"/>`,
    "</Layer>",
  ].join("");
}

function matrixSet(maxZoom: number): string {
  const matrices: string[] = [];
  for (let z = 0; z <= maxZoom; z++) {
    const n = 2 ** z;
    matrices.push(
      `<TileMatrix><ows:Identifier>${z}</ows:Identifier><ScaleDenominator>${Z0_SCALE / n}</ScaleDenominator>` +
        `<TopLeftCorner>${-MERCATOR_HALF} ${MERCATOR_HALF}</TopLeftCorner><TileWidth>256</TileWidth>` +
        `<TileHeight>256</TileHeight><MatrixWidth>${n}</MatrixWidth><MatrixHeight>${n}</MatrixHeight></TileMatrix>`,
    );
  }
  return (
    `<TileMatrixSet><ows:Identifier>${WMTS_MATRIX_SET}</ows:Identifier>` +
    "<ows:SupportedCRS>urn:ogc:def:crs:EPSG::3857</ows:SupportedCRS>" +
    "<WellKnownScaleSet>urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible</WellKnownScaleSet>" +
    `${matrices.join("")}</TileMatrixSet>`
  );
}

/**
 * The capabilities document of a catalog. `base` is the public base URL (no trailing slash); ""
 * writes paths instead and says in a comment that public_url is missing.
 */
export function wmtsCapabilities(catalog: Catalog, base: string, missingNote?: string): string {
  const maxZoom = Math.max(0, ...catalog.layers.map((l) => l.maxzoom));
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    ...(base ? [] : [`<!-- ${esc(missingNote ?? "public_url is not set: the URLs below are paths")} -->`]),
    '<Capabilities xmlns="http://www.opengis.net/wmts/1.0" xmlns:ows="http://www.opengis.net/ows/1.1" ',
    'xmlns:xlink="http://www.w3.org/1999/xlink" version="1.0.0">',
    "<ows:ServiceIdentification><ows:Title>gridcast forecast maps</ows:Title>",
    "<ows:ServiceType>OGC WMTS</ows:ServiceType><ows:ServiceTypeVersion>1.0.0</ows:ServiceTypeVersion>",
    "</ows:ServiceIdentification>",
    "<Contents>",
    ...catalog.layers.map((l) => layerXml(l, base)),
    matrixSet(maxZoom),
    "</Contents>",
    `<ServiceMetadataURL xlink:href="${esc(`${base}/${WMTS_CAPABILITIES}`)}"/>`,
    "</Capabilities>",
    "",
  ].join("\n");
}
