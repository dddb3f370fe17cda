// What decides whether a tile must be rendered again: the renderer's version, and digests of what
// a layer's pixels depend on in the store's metadata. A lead's fingerprint (layer-spec.ts) is the
// digest of these with its run, lead, level, style and recipe; equal fingerprints let a build
// hard-link the previous build's tiles.
import { createHash } from "node:crypto";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";

/** Bump whenever the pixels a given field and style produce change; every tile then re-renders. */
export const RENDERER_VERSION = "9";

/** A short digest of a JSON value (16 hex digits of its SHA-256). */
export const sha = (value: unknown): string =>
  createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);

/**
 * The drawing segment of a layer's tile paths and pinned tile URLs ("r6-0c1d2e3f"): the renderer
 * version and a digest of what else decides the pixels of a layer (its style and recipe). Run
 * tiles are cached for a year (immutable), so tiles drawn anew after an upgrade (or a restyle)
 * must come under new URLs, never the old ones a CDN or browser keeps; the same renderer and
 * style keep the same URLs, and later builds hard-link the tiles.
 */
export function drawingOf(style: unknown, recipe: unknown, renderer: string = RENDERER_VERSION): string {
  return `r${renderer}-${sha({ renderer, style, recipe }).slice(0, 8)}`;
}

/**
 * What the pixels of a variable depend on in the store's metadata (chunk bytes are not read: that
 * would cost as much as rendering on an HTTP store). The lengths of the run and lead axes are left
 * out on purpose: a new cycle appends a run, and the runs already published keep their
 * fingerprints. A run rewritten in place with identical metadata needs `build --no-reuse`.
 */
export function sourceRevision(group: ForecastGroup, v: GroupVariable): string {
  const a = v.array;
  const { grid } = v;
  return sha({
    stored: v.stored,
    dtype: a.dtype,
    codecs: a.meta.array?.codecs,
    chunks: a.chunks,
    dims: a.dims,
    fill: a.meta.array?.fill_value,
    packing: a.packing,
    attrs: a.meta.attrs,
    groupAttrs: group.attrs,
    levels: group.levels ?? null,
    // A cell grid's count is its cells' (a whole HEALPix grid's lat/lon hold only its ends).
    lat: [grid.lat[0], grid.lat.at(-1), grid.cells?.n ?? grid.lat.length],
    lon: [grid.lon[0], grid.lon.at(-1), grid.cells?.n ?? grid.lon.length],
  });
}
