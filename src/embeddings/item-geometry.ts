// Where an item sits: CRS, affine transform, and bounds in the item's CRS and in lon/lat, taken
// from what the store states, in this order: the CF grid mapping (crs_wkt / spatial_ref with a
// GDAL GeoTransform, as rioxarray writes it), the x/y coordinate arrays, gridcast's own
// `crs`/`transform` group attributes. Every source present must agree to a fraction of a pixel,
// or the item is refused with the reason; with no source, a gridded item is refused. The lon/lat
// bbox is the same extent as bbox_utm, projected. Nothing is ever derived from the tile name,
// except the bounds of a pooled vector (one value for the whole tile) that states no geometry.
import proj4 from "proj4";
import { type Axes, gridMappingName, ItemRefusedError } from "./layout.ts";
import { tileGeometry, utmProj } from "./mgrs.ts";

export type Bbox = [number, number, number, number];
/** GDAL order: x = a·col + b·row + c, y = d·col + e·row + f, at pixel corners. */
export type Transform = [number, number, number, number, number, number];

export interface ItemGeometry {
  tile: string;
  crs: string;
  epsg: number | null;
  /** proj4 definition (or WKT) of the item's CRS. */
  proj: string;
  /** Null for a vector item that states no geometry of its own. */
  transform: Transform | null;
  /** West, south, east, north in degrees. */
  bbox: Bbox;
  /** x min, y min, x max, y max in the item's CRS. */
  bbox_utm: Bbox;
  /** What the geometry was read from, in the order checked. */
  sources: string[];
}

/** Pixel fraction within which the sources of an item's geometry must agree. */
export const AGREE_PX = 0.25;

const finiteList = (v: unknown, n: number): v is number[] =>
  Array.isArray(v) && v.length === n && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** proj4 definition of an EPSG code gridcast knows; undefined for others. */
export function projOfEpsg(epsg: number): string | undefined {
  if (epsg >= 32601 && epsg <= 32660) return utmProj(epsg - 32600, false);
  if (epsg >= 32701 && epsg <= 32760) return utmProj(epsg - 32700, true);
  if (epsg === 4326) return "+proj=longlat +datum=WGS84 +no_defs";
  if (epsg === 3857) return "EPSG:3857";
  return undefined;
}

/** The EPSG code of a WKT's top-level identifier (WKT1 AUTHORITY or WKT2 ID), if it has one. */
export function epsgOfWkt(wkt: string): number | undefined {
  const m = /(?:ID|AUTHORITY)\[\s*"EPSG"\s*,\s*"?(\d+)"?\s*\]\s*\]\s*$/i.exec(wkt.trim());
  return m ? Number(m[1]) : undefined;
}

/** The geometry of a tile's 100 km square (for a point on a tile without an item). */
export function squareGeometry(tile: string): ItemGeometry {
  const g = tileGeometry(tile);
  const { easting: e, northing: n } = g.origin;
  return {
    tile,
    crs: g.crs,
    epsg: g.epsg,
    proj: g.proj,
    transform: null,
    bbox: g.bbox,
    bbox_utm: [e, n, e + g.size_m, n + g.size_m],
    sources: ["the MGRS square of the tile name"],
  };
}

interface Coordinate {
  name: string;
  values: ArrayLike<number>;
}

export interface GeometryInput {
  tile: string;
  what: string;
  groupAttrs: Record<string, unknown>;
  latentAttrs: Record<string, unknown>;
  axes: Axes;
  /** Attributes of the grid-mapping variable, when the item has one. */
  gridMapping?: { name: string; attrs: Record<string, unknown> };
  /** The 1-D coordinates along the latent's y and x dimensions, when the item stores them. */
  y?: Coordinate;
  x?: Coordinate;
}

/** Names of the grid-mapping variable an item uses, if any (the latent's grid_mapping first). */
export function gridMappingOf(latentAttrs: Record<string, unknown>, arrays: string[]): string | undefined {
  const named = gridMappingName(latentAttrs);
  if (named) return named;
  return ["spatial_ref", "crs"].find((n) => arrays.includes(n));
}

function parseGeoTransform(v: unknown): Transform | undefined {
  const nums =
    typeof v === "string"
      ? v
          .trim()
          .split(/[\s,]+/)
          .map(Number)
      : Array.isArray(v)
        ? v.map(Number)
        : [];
  if (nums.length !== 6 || !nums.every(Number.isFinite)) return undefined;
  const [c, a, b, f, d, e] = nums;
  return [a, b, c, d, e, f];
}

/** Geometry of an item from what its store states; ItemRefusedError when it cannot be sure. */
export function itemGeometry(input: GeometryInput): ItemGeometry {
  const { what, axes } = input;
  const [ny, nx] = axes.shape;
  const sources: string[] = [];

  // CRS: the grid mapping's WKT, gridcast's crs/epsg attributes, lat/lon dimensions.
  const crsClaims: { epsg: number | undefined; proj: string | undefined; from: string }[] = [];
  const gm = input.gridMapping;
  if (gm) {
    const wkt = [gm.attrs.crs_wkt, gm.attrs.spatial_ref].find((w) => typeof w === "string" && w.trim()) as
      | string
      | undefined;
    const code = num(gm.attrs.epsg_code) ?? num(gm.attrs.epsg);
    if (wkt) {
      const epsg = epsgOfWkt(wkt);
      let proj = epsg !== undefined ? projOfEpsg(epsg) : undefined;
      if (!proj) {
        try {
          proj4(wkt, "WGS84");
          proj = wkt;
        } catch {
          throw new ItemRefusedError(`${what}: the CRS of grid mapping "${gm.name}" is not one gridcast can project`);
        }
      }
      crsClaims.push({ epsg, proj, from: `grid mapping "${gm.name}" crs_wkt` });
    } else if (code !== undefined) {
      crsClaims.push({ epsg: code, proj: projOfEpsg(code), from: `grid mapping "${gm.name}" EPSG code` });
    } else if (Object.keys(gm.attrs).some((k) => k !== "GeoTransform")) {
      throw new ItemRefusedError(`${what}: grid mapping "${gm.name}" states no crs_wkt or EPSG code`);
    }
  }
  const attrCrs = input.groupAttrs.crs ?? input.groupAttrs["proj:code"];
  if (typeof attrCrs === "string") {
    const m = /^EPSG:(\d{4,6})$/i.exec(attrCrs.trim());
    if (!m) throw new ItemRefusedError(`${what}: the crs attribute "${attrCrs}" is not of the form EPSG:<code>`);
    crsClaims.push({ epsg: Number(m[1]), proj: projOfEpsg(Number(m[1])), from: "the crs attribute" });
  } else if (num(input.groupAttrs.epsg) !== undefined || num(input.groupAttrs["proj:epsg"]) !== undefined) {
    const e = num(input.groupAttrs.epsg) ?? num(input.groupAttrs["proj:epsg"])!;
    crsClaims.push({ epsg: e, proj: projOfEpsg(e), from: "the epsg attribute" });
  }
  if (axes.geographic) crsClaims.push({ epsg: 4326, proj: projOfEpsg(4326), from: "lat/lon dimensions" });
  const codes = [...new Set(crsClaims.map((c) => c.epsg).filter((e) => e !== undefined))];
  if (codes.length > 1) {
    throw new ItemRefusedError(
      `${what}: its CRS sources disagree: ${crsClaims.map((c) => `${c.from} says EPSG:${c.epsg ?? "?"}`).join(", ")}`,
    );
  }
  const vector = ny === 1 && nx === 1;
  const claim = crsClaims.find((c) => c.epsg !== undefined) ?? crsClaims[0];
  if (claim && !claim.proj) {
    throw new ItemRefusedError(`${what}: EPSG:${claim.epsg} (from ${claim.from}) is not a CRS gridcast can project`);
  }

  // Transforms: the grid mapping's GeoTransform, the coordinates, gridcast's transform attribute.
  const transforms: { t: Transform; from: string; partial?: boolean }[] = [];
  if (gm?.attrs.GeoTransform !== undefined) {
    const t = parseGeoTransform(gm.attrs.GeoTransform);
    if (!t) throw new ItemRefusedError(`${what}: grid mapping "${gm.name}" has a GeoTransform that is not 6 numbers`);
    transforms.push({ t, from: `grid mapping "${gm.name}" GeoTransform` });
  }
  const fromCoords = coordinateTransform(input, transforms[0]?.t);
  if (fromCoords) transforms.push(fromCoords);
  if (input.groupAttrs.transform !== undefined) {
    if (!finiteList(input.groupAttrs.transform, 6)) {
      throw new ItemRefusedError(`${what}: the transform attribute is not 6 finite numbers`);
    }
    transforms.push({ t: input.groupAttrs.transform.slice() as Transform, from: "the transform attribute" });
  }

  if (transforms.filter((t) => !t.partial).length === 0 || !claim) {
    if (vector && transforms.length === 0 && !claim) {
      const sq = squareGeometry(input.tile);
      return { ...sq, sources: ["the MGRS square of the tile name (a vector item with no geometry of its own)"] };
    }
    if (!claim) {
      throw new ItemRefusedError(
        `${what} states no CRS (a grid mapping with crs_wkt, or a crs attribute EPSG:<code>); gridcast does not guess one`,
      );
    }
    throw new ItemRefusedError(
      `${what} states no geometry (a GeoTransform, evenly spaced x/y coordinates, or a transform attribute); gridcast does not guess one`,
    );
  }
  sources.push(claim.from);
  const full = transforms.filter((t) => !t.partial);
  const chosen = full[0].t;
  for (const other of transforms) {
    if (other.t === chosen) continue;
    const off = disagreement(chosen, other.t, ny, nx);
    if (off > AGREE_PX) {
      throw new ItemRefusedError(
        `${what}: ${full[0].from} and ${other.from} disagree by ${off.toFixed(2)} pixels (at most ${AGREE_PX} allowed)`,
      );
    }
  }
  for (const t of transforms) sources.push(t.from);
  const [a, b, c, d, e, f] = chosen;
  if (a * e - b * d === 0) throw new ItemRefusedError(`${what}: its transform is degenerate`);
  const xs = [c, c + a * nx, c + b * ny, c + a * nx + b * ny];
  const ys = [f, f + d * nx, f + e * ny, f + d * nx + e * ny];
  const bboxNative: Bbox = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  const proj = claim.proj!;
  return {
    tile: input.tile,
    crs: claim.epsg !== undefined ? `EPSG:${claim.epsg}` : "WKT",
    epsg: claim.epsg ?? null,
    proj,
    transform: chosen,
    bbox: lonLatBbox(proj, chosen, ny, nx, claim.epsg === 4326),
    bbox_utm: bboxNative,
    sources,
  };
}

const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v)
    ? v
    : typeof v === "string" && /^\s*\d+\s*$/.test(v)
      ? Number(v)
      : undefined;

/** Largest distance, in pixels of `t`, between where the two transforms put the grid's corners. */
function disagreement(t: Transform, u: Transform, ny: number, nx: number): number {
  const [a, b, c, d, e, f] = t;
  const det = a * e - b * d;
  let worst = 0;
  for (const [row, col] of [
    [0, 0],
    [0, nx],
    [ny, 0],
    [ny, nx],
  ]) {
    const x = u[0] * col + u[1] * row + u[2];
    const y = u[3] * col + u[4] * row + u[5];
    const pc = (e * (x - c) - b * (y - f)) / det;
    const pr = (-d * (x - c) + a * (y - f)) / det;
    worst = Math.max(worst, Math.abs(pc - col), Math.abs(pr - row));
  }
  return worst;
}

/**
 * The transform the x/y pixel-centre coordinates state: evenly spaced to a fraction of a pixel, or
 * the item is refused. A coordinate of length 1 states only where that pixel's centre is: its
 * spacing is taken from `known` (another source) to check the position, never invented.
 */
function coordinateTransform(
  input: GeometryInput,
  known: Transform | undefined,
): { t: Transform; from: string; partial?: boolean } | undefined {
  const { x, y, what } = input;
  if (!x || !y) {
    if (x || y) throw new ItemRefusedError(`${what} stores a ${x ? "x" : "y"} coordinate without its ${x ? "y" : "x"}`);
    return undefined;
  }
  const step = (c: Coordinate, fallback: number | undefined): { first: number; step: number | undefined } => {
    const v = c.values;
    const n = v.length;
    if (!Array.prototype.every.call(v, (z: number) => Number.isFinite(z))) {
      throw new ItemRefusedError(`${what}: coordinate "${c.name}" has missing values`);
    }
    if (n === 1) return { first: v[0], step: fallback };
    const s = (v[n - 1] - v[0]) / (n - 1);
    if (s === 0) throw new ItemRefusedError(`${what}: coordinate "${c.name}" does not change`);
    for (let i = 0; i < n; i++) {
      if (Math.abs(v[i] - (v[0] + i * s)) > AGREE_PX * Math.abs(s)) {
        throw new ItemRefusedError(`${what}: coordinate "${c.name}" is not evenly spaced (at index ${i})`);
      }
    }
    return { first: v[0], step: s };
  };
  const sx = step(x, known?.[0]);
  const sy = step(y, known?.[4]);
  if (sx.step === undefined || sy.step === undefined) {
    // Only a position: usable as a check against another source, not as a source of its own.
    if (!known) return undefined;
    const a = sx.step ?? known[0];
    const e = sy.step ?? known[4];
    return { t: [a, 0, sx.first - a / 2, 0, e, sy.first - e / 2], from: "the x/y coordinates", partial: true };
  }
  return {
    t: [sx.step, 0, sx.first - sx.step / 2, 0, sy.step, sy.first - sy.step / 2],
    from: "the x/y coordinates",
  };
}

/** Lon/lat bounds of the grid's extent: its edges sampled, since projected edges are curved. */
function lonLatBbox(proj: string, t: Transform, ny: number, nx: number, geographic: boolean): Bbox {
  const [a, b, c, d, e, f] = t;
  const conv = geographic ? undefined : proj4(proj, "WGS84");
  const pts: [number, number][] = [];
  const N = 16;
  for (let i = 0; i <= N; i++) {
    const s = i / N;
    for (const [col, row] of [
      [s * nx, 0],
      [s * nx, ny],
      [0, s * ny],
      [nx, s * ny],
    ]) {
      const x = a * col + b * row + c;
      const y = d * col + e * row + f;
      pts.push(conv ? (conv.forward([x, y]) as [number, number]) : [x, y]);
    }
  }
  // Unwrap around the first point so an extent across the antimeridian stays contiguous.
  const ref = pts[0][0];
  let w = Infinity;
  let s = Infinity;
  let east = -Infinity;
  let n = -Infinity;
  for (const [lon, lat] of pts) {
    const u = ref + ((((lon - ref + 180) % 360) + 360) % 360) - 180;
    w = Math.min(w, u);
    east = Math.max(east, u);
    s = Math.min(s, lat);
    n = Math.max(n, lat);
  }
  const wrap = (v: number) => (v > 180 ? v - 360 : v < -180 ? v + 360 : v);
  return [wrap(w), s, wrap(east), n];
}

/** The transform of a window that starts at (row0, col0) of a larger grid. */
export function windowTransform(t: Transform, row0: number, col0: number): Transform {
  const [a, b, c, d, e, f] = t;
  return [a, b, c + a * col0 + b * row0, d, e, f + d * col0 + e * row0];
}
