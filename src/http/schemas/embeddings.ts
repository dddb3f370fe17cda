// Request and response schemas of the /api/embeddings routes (validation and OpenAPI).
import Type from "typebox";
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT } from "../../embeddings/catalogue.ts";
import { DEFAULT_PRODUCT } from "../../embeddings/locate.ts";
import { Lon } from "./common.ts";

const NAME_FORM = "<family>~rf~<version>~base~<product>~<YYYY_MM_DD>_<YYYY_MM_DD>~<MGRS tile>";
const Bbox = Type.Array(Type.Number(), { minItems: 4, maxItems: 4 });

export const ItemPath = Type.Object({
  name: Type.String({
    maxLength: 200,
    description: `Item name: the store path below embeddings/ with "/" written as "~" (${NAME_FORM})`,
  }),
});

export const ListQuery = Type.Object({
  prefix: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        "Restrict to <family>/rf/<version>/base/<product> (optionally followed by /<period>), or to a <family>",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: LIST_MAX_LIMIT,
      default: LIST_DEFAULT_LIMIT,
      description: `Entries per page; default ${LIST_DEFAULT_LIMIT}, at most ${LIST_MAX_LIMIT}`,
    }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 400, description: "next_cursor of the previous page (opaque)" })),
});

export const LocateQuery = Type.Object({
  lon: Lon,
  lat: Type.Number({
    minimum: -80,
    maximum: 84,
    description: "Latitude in degrees north; UTM tiles cover -80..84 (no polar UPS zones)",
  }),
  family: Type.Optional(Type.String({ maxLength: 64, description: "Model family; default the first published one" })),
  product: Type.Optional(
    Type.String({ maxLength: 32, description: `Product (tokens, map, vector); default ${DEFAULT_PRODUCT}` }),
  ),
  period: Type.Optional(
    Type.String({
      maxLength: 21,
      description: "Period <YYYY_MM_DD>_<YYYY_MM_DD>; default the latest published one of that family and product",
    }),
  ),
});

const index = (what: string) =>
  Type.Optional(Type.Integer({ minimum: 0, description: `${what}; half-open like a Python slice` }));

export const NpyQuery = Type.Object({
  y_start: index("First row (y index), included; default 0"),
  y_stop: index(
    "End row (y index), excluded, as in a Python slice: y_start=0&y_stop=2 is two rows (the forecast export's lead_stop is included instead); default the y size",
  ),
  x_start: index("First column (x index), included; default 0"),
  x_stop: index("End column (x index), excluded, as in a Python slice; default the x size"),
  feature_start: index("First feature, included; default 0"),
  feature_stop: index("End feature, excluded, as in a Python slice; default the feature count"),
  values: Type.Optional(
    Type.Union([Type.Literal("physical"), Type.Literal("raw")], {
      default: "physical",
      description:
        "physical (default): float32 with the item's quantization undone and missing values NaN; raw: the " +
        "stored values in their stored type, nothing masked. Both cost the same and meet the same size limit: " +
        "price and limit count the physical answer",
    }),
  ),
});

const ItemEntry = Type.Object({
  name: Type.String(),
  family: Type.String(),
  version: Type.String(),
  product: Type.String(),
  period: Type.String(),
  tile: Type.String(),
  item: Type.String({
    description: "Metadata URL (metered): absolute on the server's public_url when known, else a path",
  }),
  npy: Type.String({ description: ".npy slice URL (metered): absolute on public_url when known, else a path" }),
});

export const ItemList = Type.Object({
  items: Type.Array(ItemEntry),
  total: Type.Integer({ description: "Items matching the prefix, over all pages" }),
  limit: Type.Integer(),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: "Cursor of the next page; null on the last" }),
});

export const LocateResult = Type.Object({
  lon: Type.Number(),
  lat: Type.Number(),
  item: Type.String({ description: `Deterministic item name (${NAME_FORM})` }),
  family: Type.String(),
  version: Type.String(),
  product: Type.String(),
  period: Type.String(),
  tile: Type.String({ description: "MGRS 100 km tile holding the point" }),
  crs: Type.String({ description: "UTM CRS of the tile, EPSG:326zz (north) or EPSG:327zz (south)" }),
  epsg: Type.Union([Type.Integer(), Type.Null()]),
  utm_zone: Type.Union([Type.Integer(), Type.Null()]),
  hemisphere: Type.Union([Type.Literal("N"), Type.Literal("S"), Type.Null()]),
  bbox: Type.Array(Type.Number(), { description: "West, south, east, north in degrees" }),
  bbox_utm: Type.Array(Type.Number(), { description: "x min, y min, x max, y max in the tile's CRS (metres)" }),
  point_utm: Type.Array(Type.Number(), { description: "The point in the tile's CRS" }),
  pixel: Type.Union([Type.Object({ row: Type.Integer(), col: Type.Integer() }), Type.Null()], {
    description: "y and x index of the latent pixel holding the point; null when the item is not available",
  }),
  inside: Type.Union([Type.Boolean(), Type.Null()], {
    description: "Whether the point lies inside the item's extent (bbox_utm); null when the item is not available",
  }),
  shape: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  transform: Type.Union([Type.Array(Type.Number()), Type.Null()]),
  available: Type.Boolean({ description: "Whether this item exists in the published catalogue" }),
  available_items: Type.Array(Type.String(), { description: "Every published item on this tile" }),
});

export const ItemMetadata = Type.Object(
  {
    name: Type.String(),
    path: Type.String(),
    family: Type.String(),
    model_version: Type.String(),
    product: Type.String(),
    period: Type.Object({ id: Type.String(), start: Type.String(), end: Type.String() }),
    tile: Type.String(),
    crs: Type.String(),
    transform: Type.Union([Type.Array(Type.Number()), Type.Null()], {
      description:
        "Affine [a, b, c, d, e, f] of pixel corners, as the store states it (CF grid mapping GeoTransform, x/y " +
        "coordinates, or the transform attribute; all present must agree); null for a vector item without geometry",
    }),
    bbox: Type.Array(Type.Number(), {
      minItems: 4,
      maxItems: 4,
      description: "West, south, east, north in degrees: the extent of bbox_utm, projected",
    }),
    bbox_utm: Bbox,
    geometry_sources: Type.Array(Type.String(), { description: "What the CRS and transform were read from" }),
    resolution_m: Type.Union([Type.Number(), Type.Null()]),
    feature_count: Type.Integer(),
    latent: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The stored array: its name, dims, shape, dtype, chunks, codecs; axes (which stored dimension is y, x and " +
          "feature) and served_shape (the (y, x, feature) shape of the .npy)",
      },
    ),
    values: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "default (physical), quantization (scheme: raw, cf_linear, signed_power or scale_array, and its rule), " +
          "stored_dtype, and missing: the stored values that are missing and the rule they come from",
      },
    ),
    coordinates: Type.Object({}, { additionalProperties: true, description: "y and x pixel-centre ranges" }),
    preview: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description:
        "Mean of features 0..2 over blocks of pixels, nested [y][x][band], in the same physical scale as the default .npy",
    }),
  },
  { additionalProperties: true },
);
