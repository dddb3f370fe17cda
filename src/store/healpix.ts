// HEALPix cell centres (Górski et al. 2005): the latitude and longitude of pixel `p` of a grid of
// resolution nside, numbered nested (the quad-tree order of the twelve base faces) or ring (west to
// east along iso-latitude rings, north to south). Centres are computed, never stored.

/** Largest nside gridcast computes centres for (12 × 8192² ≈ 805 million cells). */
export const MAX_HEALPIX_NSIDE = 8192;

export type HealpixOrder = "nested" | "ring";

// Base faces: their ring row (in units of nside) and their first longitude (in units of π/4).
const FACE_ROW = [2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4];
const FACE_LON = [1, 3, 5, 7, 0, 2, 4, 6, 1, 3, 5, 7];

/** The even bits of `v` packed together (nested numbering interleaves x and y bits). */
function evenBits(v: number): number {
  let out = 0;
  for (let bit = 1; v > 0; bit *= 2) {
    out += (v % 2) * bit;
    v = Math.floor(v / 4);
  }
  return out;
}

/** z = sin(latitude) and the longitude φ (radians, 0..2π) of a nested pixel's centre. */
function nestedCentre(nside: number, p: number): [number, number] {
  const perFace = nside * nside;
  const face = Math.floor(p / perFace);
  const inFace = p - face * perFace;
  const ix = evenBits(inFace);
  const iy = evenBits(Math.floor(inFace / 2));
  const jr = FACE_ROW[face] * nside - ix - iy - 1;
  let nr: number;
  let z: number;
  let shift: number;
  if (jr < nside) {
    nr = jr;
    z = 1 - (nr * nr) / (3 * perFace);
    shift = 0;
  } else if (jr > 3 * nside) {
    nr = 4 * nside - jr;
    z = (nr * nr) / (3 * perFace) - 1;
    shift = 0;
  } else {
    nr = nside;
    z = ((2 * nside - jr) * 2) / (3 * nside);
    shift = (jr - nside) & 1;
  }
  let jp = (FACE_LON[face] * nr + ix - iy + 1 + shift) / 2;
  if (jp > 4 * nside) jp -= 4 * nside;
  if (jp < 1) jp += 4 * nside;
  return [z, (jp - (shift + 1) * 0.5) * (Math.PI / 2 / nr)];
}

/** z = sin(latitude) and longitude φ of a ring pixel's centre. */
function ringCentre(nside: number, p: number): [number, number] {
  const npix = 12 * nside * nside;
  const cap = 2 * nside * (nside - 1);
  if (p < cap) {
    const ring = Math.floor((1 + Math.sqrt(1 + 2 * p)) / 2);
    const i = p + 1 - 2 * ring * (ring - 1);
    return [1 - (ring * ring) / (3 * nside * nside), ((i - 0.5) * Math.PI) / (2 * ring)];
  }
  if (p < npix - cap) {
    const q = p - cap;
    const ring = Math.floor(q / (4 * nside)) + nside;
    const i = (q % (4 * nside)) + 1;
    const odd = (ring + nside) & 1 ? 1 : 0.5;
    return [((2 * nside - ring) * 2) / (3 * nside), ((i - odd) * Math.PI) / (2 * nside)];
  }
  const q = npix - p;
  const ring = Math.floor((1 + Math.sqrt(2 * q - 1)) / 2);
  const i = 4 * ring + 1 - (q - 2 * ring * (ring - 1));
  return [-1 + (ring * ring) / (3 * nside * nside), ((i - 0.5) * Math.PI) / (2 * ring)];
}

/** Latitude and longitude (degrees, -180..180) of pixel `p`'s centre. */
export function healpixCentre(nside: number, order: HealpixOrder, p: number): [number, number] {
  const [z, phi] = order === "nested" ? nestedCentre(nside, p) : ringCentre(nside, p);
  const deg = (phi * 180) / Math.PI;
  return [(Math.asin(z) * 180) / Math.PI, deg >= 180 ? deg - 360 : deg];
}

/** Latitude and longitude (degrees, -180..180) of the centres of pixels `ids` (or of all 12·nside² pixels). */
export function healpixCentres(
  nside: number,
  order: HealpixOrder,
  ids?: ArrayLike<number>,
): { lat: Float64Array; lon: Float64Array } {
  const n = ids ? ids.length : 12 * nside * nside;
  const out = { lat: new Float64Array(n), lon: new Float64Array(n) };
  centresInto(nside, order, ids, out, 0, n);
  return out;
}

/** healpixCentres of cells [from, to) (of `ids`, or pixels from..to-1 without), written into `out`. */
export function centresInto(
  nside: number,
  order: HealpixOrder,
  ids: ArrayLike<number> | undefined,
  out: { lat: Float64Array; lon: Float64Array },
  from: number,
  to: number,
): void {
  const { lat, lon } = out;
  const centre = order === "nested" ? nestedCentre : ringCentre;
  for (let k = from; k < to; k++) {
    const [z, phi] = centre(nside, ids ? ids[k] : k);
    lat[k] = (Math.asin(z) * 180) / Math.PI;
    const deg = (phi * 180) / Math.PI;
    lon[k] = deg >= 180 ? deg - 360 : deg;
  }
}

// ---- The nearest pixel centre to a point, by HEALPix's own indexing ----
// A point's iso-latitude ring is found from its z = sin(latitude) as ang2pix finds it; in a ring
// the centres are evenly spaced in longitude, so the nearest of a ring lies at one of the two
// longitudes around the point's. Rings are examined outward from the point's, north and south,
// until the next one lies farther in latitude than the best centre found: no centre of it can be
// nearer. The answer is the nearest centre by great-circle distance (ties to the lower pixel
// number), whatever the ordering; nested numbers come from the ring ones as ring2nest makes them.

/** Rings of a grid: 4·nside − 1, from north to south. */
function ringCount(nside: number): number {
  return 4 * nside - 1;
}

/** z = sin(latitude) of ring i (1-based from the north). */
function ringZ(nside: number, i: number): number {
  if (i < nside) return 1 - (i * i) / (3 * nside * nside);
  if (i <= 3 * nside) return ((2 * nside - i) * 2) / (3 * nside);
  const s = 4 * nside - i;
  return (s * s) / (3 * nside * nside) - 1;
}

/** Ring i's pixels, its first ring-order pixel number, and the offset o of its centres φ_j = (j + o)·2π/m, j = 0..m−1. */
function ringShape(nside: number, i: number): { m: number; first: number; o: number } {
  if (i < nside) return { m: 4 * i, first: 2 * i * (i - 1), o: 0.5 };
  if (i <= 3 * nside) {
    return { m: 4 * nside, first: 2 * nside * (nside - 1) + (i - nside) * 4 * nside, o: (i + nside) & 1 ? 0 : 0.5 };
  }
  const s = 4 * nside - i;
  return { m: 4 * s, first: 12 * nside * nside - 2 * s * (s + 1), o: 0.5 };
}

/** The ring (1-based, fractional) a point of z = sin(latitude) lies on: ang2pix's ring coordinate. */
function ringOf(nside: number, z: number): number {
  if (z > 2 / 3) return nside * Math.sqrt(3 * (1 - z));
  if (z < -2 / 3) return 4 * nside - nside * Math.sqrt(3 * (1 + z));
  return nside * (2 - 1.5 * z);
}

/** `v`'s bits spread to the even positions (the inverse of evenBits). */
function spreadBits(v: number): number {
  let out = 0;
  for (let bit = 1; v > 0; bit *= 4) {
    out += (v % 2) * bit;
    v = Math.floor(v / 2);
  }
  return out;
}

/** The nested number of pixel j (0-based) of ring i: its face and position in the face, interleaved. */
export function ringToNested(nside: number, i: number, j: number): number {
  const iphi = j + 1;
  let face: number;
  let nr: number;
  let kshift = 0;
  if (i < nside) {
    nr = i;
    face = Math.floor((iphi - 1) / nr);
  } else if (i <= 3 * nside) {
    nr = nside;
    kshift = (i + nside) & 1;
    const ire = i - nside + 1;
    const irm = 2 * nside + 2 - ire;
    const ifm = Math.floor((iphi - (ire >> 1) + nside - 1) / nside);
    const ifp = Math.floor((iphi - (irm >> 1) + nside - 1) / nside);
    face = ifp === ifm ? ifp | 4 : ifp < ifm ? ifp : ifm + 8;
  } else {
    nr = 4 * nside - i;
    face = 8 + Math.floor((iphi - 1) / nr);
  }
  const irt = i - FACE_ROW[face] * nside + 1;
  let ipt = 2 * iphi - FACE_LON[face] * nr - kshift - 1;
  if (ipt >= 2 * nside) ipt -= 8 * nside;
  const ix = (ipt - irt) >> 1;
  const iy = (-ipt - irt) >> 1;
  return face * nside * nside + spreadBits(ix) + 2 * spreadBits(iy);
}

/**
 * The pixel whose centre is nearest to (lat, lon) by great-circle distance, in the grid's own
 * numbering, and that distance in radians; `exclude` leaves one pixel out (a pixel's own nearest
 * neighbour). Ties go to the lower pixel number.
 */
export function healpixNearest(
  nside: number,
  order: HealpixOrder,
  lat: number,
  lon: number,
  exclude = -1,
): { cell: number; angle: number } {
  const f = (lat * Math.PI) / 180;
  const l = (lon * Math.PI) / 180;
  const qx = Math.cos(f) * Math.cos(l);
  const qy = Math.cos(f) * Math.sin(l);
  const qz = Math.sin(f);
  const phi = ((((lon % 360) + 360) % 360) * Math.PI) / 180;
  let best = -1;
  let bestDot = Number.NEGATIVE_INFINITY;
  const rings = ringCount(nside);
  const visit = (i: number) => {
    const { m, first, o } = ringShape(nside, i);
    const z = ringZ(nside, i);
    const r = Math.sqrt(Math.max(0, 1 - z * z));
    const t = (phi * m) / (2 * Math.PI) - o;
    const j0 = Math.floor(t);
    // The two centres around the point's longitude, and one more each side (for `exclude`).
    for (let dj = -1; dj <= 2; dj++) {
      const j = (((j0 + dj) % m) + m) % m;
      const cell = order === "ring" ? first + j : ringToNested(nside, i, j);
      if (cell === exclude) continue;
      const a = ((j + o) * 2 * Math.PI) / m;
      const d = r * Math.cos(a) * qx + r * Math.sin(a) * qy + z * qz;
      if (d > bestDot || (d === bestDot && cell < best)) {
        bestDot = d;
        best = cell;
      }
    }
  };
  const i0 = Math.min(rings, Math.max(1, Math.round(ringOf(nside, qz))));
  visit(i0);
  const angle = () => Math.acos(Math.min(1, Math.max(-1, bestDot)));
  // Outward, north and south, while a ring could still hold a nearer centre.
  for (let n = i0 - 1, s = i0 + 1; n >= 1 || s <= rings; ) {
    const a = angle();
    const northGap = n >= 1 ? Math.asin(ringZ(nside, n)) - f : Number.POSITIVE_INFINITY;
    const southGap = s <= rings ? f - Math.asin(ringZ(nside, s)) : Number.POSITIVE_INFINITY;
    if (northGap > a && southGap > a) break;
    if (northGap <= southGap) visit(n--);
    else visit(s++);
  }
  return { cell: best, angle: angle() };
}
