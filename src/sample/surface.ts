// Static surface of the synthetic planet: a land fraction shaped like crude continents and an
// orography with the big mountain ranges. Both depend on position (and the seed, through coastline
// and terrain noise) only, so they are computed once per grid block and reused for every time.
import type { WaveNoise } from "./noise.ts";

/** [lat, lon, half-extent lat, half-extent lon] of an elliptic blob, degrees. */
type Blob = [number, number, number, number];

const CONTINENTS: Blob[] = [
  [52, -102, 20, 34], // North America
  [28, -100, 10, 14],
  [15, -89, 5, 8], // Central America
  [-12, -58, 17, 16], // South America
  [-38, -66, 14, 7],
  [72, -41, 9, 16], // Greenland
  [64, -19, 2, 5], // Iceland
  [54, -2, 4, 3], // Great Britain
  [49, 12, 9, 20], // Europe
  [63, 18, 8, 10], // Scandinavia
  [55, 90, 18, 58], // Asia
  [35, 60, 10, 25],
  [21, 78, 10, 9], // India
  [15, 102, 9, 8], // South-east Asia
  [23, 46, 9, 11], // Arabia
  [10, 15, 15, 28], // Africa
  [-12, 26, 16, 14],
  [-19, 47, 6, 2.5], // Madagascar
  [37, 138, 5, 4], // Japan
  [-1, 113, 5, 12], // Indonesia
  [-25, 134, 11, 19], // Australia
  [-41, 173, 6, 3], // New Zealand
  [-90, 0, 22, 1e6], // Antarctica (a latitude cap)
];

const SEAS: Blob[] = [
  [37, 16, 4, 15], // Mediterranean
  [43, 34, 2.5, 6], // Black Sea
  [59, 20, 3.5, 3], // Baltic
  [60, -86, 6, 8], // Hudson Bay
  [25, -90, 5, 8], // Gulf of Mexico
  [20, 38, 6, 2], // Red Sea
  [27, 52, 2.5, 4], // Persian Gulf
  [15, 88, 5, 5], // Bay of Bengal
];

/** [lat, lon, half-extent lat, half-extent lon, height m] of a mountain range. */
const RANGES: [number, number, number, number, number][] = [
  [46.4, 10.2, 1.1, 3.6, 2400], // Alps
  [32, 86, 5, 13, 4800], // Himalaya and Tibet
  [44, -112, 11, 5, 2200], // Rockies
  [-20, -68, 22, 2.5, 3600], // Andes
  [0, 37, 9, 3, 1600], // East African highlands
  [63, 11, 5, 3, 1000], // Scandinavian mountains
  [73, -40, 9, 11, 2600], // Greenland ice sheet
  [-84, 0, 10, 1e6, 2800], // Antarctic plateau
];

export interface Surface {
  /** Land fraction 0..1, rows × cols. */
  land: Float32Array;
  /** Surface height in metres. */
  height: Float32Array;
}

export interface SurfaceNoise {
  coast: WaveNoise;
  coastDetail: WaveNoise;
  terrain: WaveNoise;
  terrainDetail: WaveNoise;
}

function dlon(a: number, b: number): number {
  const d = a - b;
  return d >= 180 ? d - 360 : d < -180 ? d + 360 : d;
}

/** Highest "inside" score 1 - q over a set of blobs, per cell. */
function blobScore(blobs: Blob[], lat: Float64Array, lon: Float64Array): Float64Array {
  const rows = lat.length;
  const cols = lon.length;
  const out = new Float64Array(rows * cols).fill(-Infinity);
  const qy = new Float64Array(rows);
  const qx = new Float64Array(cols);
  for (const [la, lo, a, b] of blobs) {
    for (let i = 0; i < rows; i++) qy[i] = ((lat[i] - la) / a) ** 2;
    for (let j = 0; j < cols; j++) qx[j] = (dlon(lon[j], lo) / b) ** 2;
    for (let i = 0; i < rows; i++) {
      const base = i * cols;
      const y = qy[i];
      if (y > 1.5) continue;
      for (let j = 0; j < cols; j++) {
        const s = 1 - y - qx[j];
        if (s > out[base + j]) out[base + j] = s;
      }
    }
  }
  return out;
}

export function surfaceAt(lat: Float64Array, lon: Float64Array, noise: SurfaceNoise, detail: boolean): Surface {
  const n = lat.length * lon.length;
  const cont = blobScore(CONTINENTS, lat, lon);
  const sea = blobScore(SEAS, lat, lon);
  const rough = new Float64Array(n);
  noise.coast.addTo(rough, lat, lon, 0, 0.22);
  if (detail) noise.coastDetail.addTo(rough, lat, lon, 0, 0.06);
  const land = new Float32Array(n);
  for (let c = 0; c < n; c++) {
    const s = Math.max(cont[c], -1) - 1.6 * Math.max(0, sea[c]) + rough[c];
    land[c] = 1 / (1 + Math.exp(-12 * s));
  }

  const hills = new Float64Array(n);
  noise.terrain.addTo(hills, lat, lon, 0, 1);
  const fine = new Float64Array(detail ? n : 0);
  if (detail) noise.terrainDetail.addTo(fine, lat, lon, 0, 1);
  const height = new Float32Array(n);
  const cols = lon.length;
  const hy = new Float64Array(n);
  for (const [la, lo, a, b, h] of RANGES) {
    for (let i = 0; i < lat.length; i++) {
      const y = ((lat[i] - la) / a) ** 2;
      if (y > 9) continue;
      for (let j = 0; j < cols; j++) {
        const q = y + (dlon(lon[j], lo) / b) ** 2;
        if (q < 9) hy[i * cols + j] += h * Math.exp(-q);
      }
    }
  }
  for (let c = 0; c < n; c++) {
    // Terrain roughness scales with the range height; fine valleys only exist where there is detail.
    const valleys = detail ? 0.4 * fine[c] : 0;
    const base = hy[c] * (1 + 0.07 * hills[c] + valleys) + 120 * (1 + 0.6 * hills[c]) * (1 + valleys);
    height[c] = Math.max(0, land[c] * base);
  }
  return { land, height };
}
