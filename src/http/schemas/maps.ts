// Request and response schemas of the public map routes (catalog, tile, value).
import Type from "typebox";
import { GridCoordinates, Lat, Lon, Temporal } from "./common.ts";

export const LayerParam = Type.String({
  minLength: 1,
  maxLength: 160,
  description: "Layer id from the catalog: <group name>.<variable>[.<level>], e.g. global.t2m or global.t.500",
});

export const RunParam = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    "Forecast run: its initialisation time in ISO 8601 (UTC when no zone is given, e.g. 2026-11-20T12:00) or " +
    "its token from the catalog (20261120T1200). Default: the latest run",
});

export const LeadParam = Type.Number({
  minimum: 0,
  description: "Lead time in hours after the run, one of the layer's leads in the catalog. Default: the first lead",
});

export const TilePath = Type.Object({
  z: Type.Integer({ description: "Zoom level, 0..7" }),
  x: Type.Integer({ description: "Tile column, 0..2^z-1, counted east from 180° W (XYZ scheme)" }),
  y: Type.Integer({ description: "Tile row, 0..2^z-1, counted south from the top of the Web Mercator square" }),
});

/** What WMTS clients append to a capabilities URL (KVP GetCapabilities); the document is the same. */
const KVP_WORD = Type.String({ maxLength: 40, description: "Ignored; WMTS clients send it with GetCapabilities" });
export const WmtsCapabilitiesQuery = Type.Object({
  service: Type.Optional(KVP_WORD),
  request: Type.Optional(KVP_WORD),
  version: Type.Optional(KVP_WORD),
  SERVICE: Type.Optional(KVP_WORD),
  REQUEST: Type.Optional(KVP_WORD),
  VERSION: Type.Optional(KVP_WORD),
});

export const TileQuery = Type.Object({
  layer: LayerParam,
  run: Type.Optional(RunParam),
  lead: Type.Optional(LeadParam),
  time: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 40,
      description:
        "Instead of lead: the valid time of the lead in ISO 8601, UTC (2026-11-20T15:00:00Z), as the WMTS Time " +
        "dimension lists it",
    }),
  ),
  scale: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 2,
      description:
        "2: the 512 px high-DPI tile (the static {y}@2x.png), for layers whose catalog entry has hidpi_maxzoom, " +
        "at zooms up to it; 404 otherwise",
    }),
  ),
  drawing: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: "^[A-Za-z0-9_-]+$",
      description:
        "The layer's drawing from the catalog (renderer version and style digest, r6-0c1d2e3f), as the catalog's " +
        "route URLs carry it. With run, the answer is cached for a year only when it matches; another or none is " +
        "answered with the tile as drawn now, cached for a minute",
    }),
  ),
});

export const ValueQuery = Type.Object({
  layer: LayerParam,
  run: Type.Optional(RunParam),
  lead: Type.Optional(LeadParam),
  lat: Lat,
  lon: Lon,
});

export const SeriesQuery = Type.Object({
  layer: LayerParam,
  run: Type.Optional(RunParam),
  lat: Lat,
  lon: Lon,
  units: Type.Optional(
    Type.String({
      maxLength: 16,
      description:
        "stored (the default) for the canonical units, display for the units the layer's legend shows, or another unit the maps offer for the variable (km/h, kn, °F)",
    }),
  ),
});

export const DisplayUnit = Type.Object(
  {
    units: Type.String({ description: "Unit label shown, e.g. °C, hPa, mm, %, m/s" }),
    scale: Type.Number(),
    offset: Type.Number(),
  },
  { description: "Shown value = canonical value × scale + offset" },
);

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const LayerValue = Type.Object({
  layer: Type.String(),
  group: Type.String({ description: "Forecast group the layer is drawn from (forecast/<name>)" }),
  variable: Type.String({ description: "Canonical variable name" }),
  units: Type.String({ description: "Units of value: the layer's canonical (stored) units" }),
  value: NullableNumber("Value at the grid node nearest to the point; null where missing or outside the grid"),
  display: Type.Object(
    {
      value: NullableNumber("value in the display units"),
      units: Type.String({ description: "Display units of the layer's style, e.g. °C, hPa, mm, %" }),
    },
    { description: "The value as legends and popups show it" },
  ),
  direction_deg: Type.Optional(
    NullableNumber("Wind layers: direction the wind blows from, degrees clockwise from north"),
  ),
  valid_time: Type.String({ description: "Run time plus lead, ISO 8601 without zone (UTC)" }),
  run: Type.String({ description: "Initialisation time of the run, ISO 8601 without zone (UTC)" }),
  lead_hours: Type.Number(),
  level: NullableNumber("Level (hPa) of the layer; null for single-level variables"),
  grid_lat: NullableNumber("Latitude of the grid node read; null outside the grid"),
  grid_lon: NullableNumber("Longitude of the grid node read (-180..180); null outside the grid"),
  grid_coordinates: GridCoordinates,
  temporal: Temporal,
  interval: Type.Optional(
    Type.Object(
      { start: Type.String(), end: Type.String() },
      { description: "Accumulated variables: the interval the amount covers" },
    ),
  ),
});

const CatalogLead = Type.Object({
  hours: Type.Number(),
  valid_time: Type.String(),
  interval: Type.Optional(
    Type.Union([Type.Object({ start: Type.String(), end: Type.String() }), Type.Null()], {
      description:
        "The interval the drawn value covers (amounts, means, extremes), ISO 8601 without zone; null when " +
        "instantaneous, or when the store leaves the window undecided (see temporal)",
    }),
  ),
  tiles: Type.String({
    description: "Static tile URL template of the build's files ({z}/{x}/{y}); absolute on public_url when set",
  }),
  route: Type.String({ description: "The same tiles through /api/forecast/tile" }),
  tiles_2x: Type.Optional(
    Type.String({
      description:
        "High-DPI layers: static template of the 512 px tiles ({z}/{x}/{y}@2x.png), zoom 0..hidpi_maxzoom; " +
        "for screens with a device pixel ratio of 2 or more",
    }),
  ),
  route_2x: Type.Optional(Type.String({ description: "The 512 px tiles through /api/forecast/tile (scale=2)" })),
  wind: Type.Optional(
    Type.String({
      description:
        "Wind-arrow layers on an evenly spaced lat/lon grid: JSON header of the lead's 10 m u/v file for animation " +
        "(grid, offset and scale per component; the PNG it names lies beside it)",
    }),
  ),
  archive: Type.Optional(
    Type.String({
      description: "PMTiles archive of this lead below the build root (builds made with --tiles pmtiles)",
    }),
  ),
  tilejson: Type.String({ description: "TileJSON 3.0.0 document of this layer, run and lead" }),
});

const CatalogLayer = Type.Object({
  id: Type.String(),
  drawing: Type.Optional(
    Type.String({
      description:
        "The renderer version and a digest of the layer's style its tiles are drawn with (r6-0c1d2e3f). It is part " +
        "of every tile path (tiles/<layer>/<token>.<drawing>/<lead>/…) and of the route URLs (drawing=…), so tiles " +
        "drawn anew after an upgrade or restyle come under new URLs, and a year-long cache never keeps old pixels. " +
        "A static tile path under another drawing, or none, is redirected (307, cached a minute) to this one. " +
        "Absent in builds made before it was recorded",
    }),
  ),
  group: Type.String(),
  group_stored_name: Type.Optional(
    Type.String({ description: "The group's name as stored, when its URL-safe id spells it otherwise" }),
  ),
  variable: Type.String(),
  level: Type.Union([Type.Number(), Type.Null()]),
  level_units: Type.Union([Type.String(), Type.Null()]),
  long_name: Type.String(),
  units: Type.String({ description: "Canonical units of the values; style min and max are in them" }),
  display: DisplayUnit,
  units_options: Type.Array(DisplayUnit, { description: "Units a client may show instead, the default first" }),
  temporal: Temporal,
  style: Type.Object({
    colormap: Type.String(),
    min: Type.Number(),
    max: Type.Number(),
    resample: Type.Union([Type.Literal("bilinear"), Type.Literal("nearest")], {
      description: "bilinear for continuous fields, nearest for categorical ones",
    }),
  }),
  role: Type.Union([Type.Literal("base"), Type.Literal("overlay"), Type.Literal("orientation")], {
    description:
      "base: a coloured field; overlay: transparent arrows or lines to draw over a base layer; orientation: " +
      "place names, state/province borders, rivers and lakes to draw over everything (one static run " +
      "in the year 2000 named after its drawing version, so a new drawing has new tile URLs; lead 0; no legend)",
  }),
  derived_from: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "Stored variables a derived layer (wind speed, arrows, isobars) is computed from; null otherwise",
  }),
  legend: Type.Union([Type.Object({ png: Type.String(), json: Type.String() }), Type.Null()], {
    description: "Legend image and stops; null for the orientation layer",
  }),
  kind: Type.Union([Type.Literal("global"), Type.Literal("regional")]),
  bounds: Type.Array(Type.Number(), {
    minItems: 4,
    maxItems: 4,
    description: "West, south, east, north in degrees; west > east when the layer crosses the antimeridian",
  }),
  minzoom: Type.Integer(),
  maxzoom: Type.Integer(),
  hidpi_maxzoom: Type.Optional(
    Type.Integer({
      description:
        "Present when the build has 512 px @2x tiles of this layer (tiles_2x, route_2x): the highest zoom with them. " +
        "In z/x/y builds base layers have them up to the top zoom, the orientation layer and the overlays (wind " +
        "arrows, isobars) to lower zooms; a PMTiles build has none",
    }),
  ),
  runs: Type.Array(
    Type.Object({
      run: Type.String({ description: "Initialisation time, ISO 8601 without zone (UTC)" }),
      token: Type.String({
        description: "Run token used in the run parameter, and in tile paths followed by .<drawing>",
      }),
      leads: Type.Array(CatalogLead),
    }),
    { description: "Published runs, oldest first" },
  ),
});

export const Catalog = Type.Object({
  build_id: Type.String(),
  public_url: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description:
        "Base URL the published files and routes are reached at (setting public_url; on the live route also the " +
        "trusted proxy's X-Forwarded-Proto/-Host when trust_proxy is 1); null when unknown. Every URL in the " +
        "catalog (tiles, routes, TileJSON, legends, archives, tile_url_template) is this base followed by a path " +
        "from the build root; without a base they are those paths, and public_url_missing says so",
    }),
  ),
  public_url_missing: Type.Optional(
    Type.String({ description: "Present when public_url is unknown: what that means" }),
  ),
  generated_at: Type.String(),
  tile_url_template: Type.String({
    description: "Tile route template with {layer}, {run}, {lead} and {drawing} (the layer's) to fill in",
  }),
  tile_format: Type.Optional(
    Type.Union([Type.Literal("zxy"), Type.Literal("pmtiles")], {
      description: "How the build stores tiles: z/x/y PNG files (default) or one PMTiles archive per lead",
    }),
  ),
  rendering: Type.Optional(
    Type.String({
      description:
        "Present while `gridcast start` publishes in steps: what the build running now will add (e.g. the lead " +
        "times after the first); the viewer shows it and checks the catalog more often until it is gone",
    }),
  ),
  layers: Type.Array(CatalogLayer),
});
