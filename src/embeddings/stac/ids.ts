// Names of the STAC API: a collection per family and product, written <family>.<product> (neither
// segment may hold ".", so the id splits back); an item's id is its item name.

export const collectionId = (family: string, product: string): string => `${family}.${product}`;

/** The conformance classes the API states on its landing page and at /conformance. */
export const CONFORMANCE = [
  "https://api.stacspec.org/v1.0.0/core",
  "https://api.stacspec.org/v1.0.0/collections",
  "https://api.stacspec.org/v1.0.0/ogcapi-features",
  "https://api.stacspec.org/v1.0.0/item-search",
  "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
  "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
  "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
];

export const STAC_VERSION = "1.1.0";
export const PROJECTION_EXTENSION = "https://stac-extensions.github.io/projection/v2.0.0/schema.json";

/** Media types of the documents and assets. */
export const GEOJSON = "application/geo+json";
export const NPY = "application/x-npy";
