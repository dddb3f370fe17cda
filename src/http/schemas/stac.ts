// Request schemas of the STAC API (/stac): path parameters, the GET search and items queries and
// the POST search body. The answers are STAC documents, described by the STAC specification.
import Type from "typebox";
import { STAC_DEFAULT_LIMIT, STAC_MAX_IDS, STAC_MAX_LIMIT } from "../../embeddings/stac/search.ts";

export const CollectionPath = Type.Object({
  collectionId: Type.String({ maxLength: 200, description: "Collection id: <family>.<product>, e.g. geofm.map" }),
});

export const ItemPathStac = Type.Object({
  collectionId: Type.String({ maxLength: 200, description: "Collection id: <family>.<product>" }),
  itemId: Type.String({ maxLength: 200, description: "Item id: the item name, as in /api/embeddings" }),
});

const bbox = Type.String({
  maxLength: 400,
  description:
    "west,south,east,north in WGS84 degrees (or 6 numbers with heights, which are ignored); west > east crosses " +
    "the antimeridian. Not together with intersects",
});
const datetime = Type.String({
  maxLength: 100,
  description:
    "RFC 3339 date-time with a zone (2026-06-01T00:00:00Z) or an interval start/end with open ends as ..; " +
    "matches items whose period (first day 00:00Z to last day 23:59:59Z) meets it",
});
const limit = Type.Integer({
  minimum: 1,
  maximum: STAC_MAX_LIMIT,
  default: STAC_DEFAULT_LIMIT,
  description: "Items per page",
});
const token = Type.String({
  maxLength: 600,
  description: "Position to continue from, as handed out in a next link (opaque; stays valid across builds)",
});

export const ItemsQuery = Type.Object({
  bbox: Type.Optional(bbox),
  datetime: Type.Optional(datetime),
  limit: Type.Optional(limit),
  token: Type.Optional(token),
});

export const SearchQuery = Type.Object({
  bbox: Type.Optional(bbox),
  intersects: Type.Optional(
    Type.String({ maxLength: 100_000, description: "A GeoJSON geometry as JSON text. Not together with bbox" }),
  ),
  datetime: Type.Optional(datetime),
  collections: Type.Optional(Type.String({ maxLength: 4000, description: "Comma-separated collection ids" })),
  ids: Type.Optional(
    Type.String({ maxLength: 200_000, description: `Comma-separated item ids (at most ${STAC_MAX_IDS})` }),
  ),
  limit: Type.Optional(limit),
  token: Type.Optional(token),
});

export const SearchBody = Type.Object(
  {
    bbox: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 6, description: "As in the GET search" })),
    intersects: Type.Optional(Type.Object({}, { additionalProperties: true, description: "A GeoJSON geometry" })),
    datetime: Type.Optional(datetime),
    collections: Type.Optional(Type.Array(Type.String())),
    ids: Type.Optional(Type.Array(Type.String(), { maxItems: STAC_MAX_IDS })),
    limit: Type.Optional(limit),
    token: Type.Optional(token),
  },
  { description: "A STAC item search; a next link's body (with merge: true) carries the token" },
);

/** A STAC document: the answer's shape is the STAC specification's. */
export const StacDocument = Type.Object({}, { additionalProperties: true, description: "A STAC JSON document" });
