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

/** Latitude and longitude (degrees, -180..180) of the centres of pixels `ids` (or of all 12·nside² pixels). */
export function healpixCentres(
  nside: number,
  order: HealpixOrder,
  ids?: ArrayLike<number>,
): { lat: Float64Array; lon: Float64Array } {
  const n = ids ? ids.length : 12 * nside * nside;
  const lat = new Float64Array(n);
  const lon = new Float64Array(n);
  const centre = order === "nested" ? nestedCentre : ringCentre;
  for (let k = 0; k < n; k++) {
    const [z, phi] = centre(nside, ids ? ids[k] : k);
    lat[k] = (Math.asin(z) * 180) / Math.PI;
    const deg = (phi * 180) / Math.PI;
    lon[k] = deg >= 180 ? deg - 360 : deg;
  }
  return { lat, lon };
}
