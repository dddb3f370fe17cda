// Weather fields of the synthetic store as pure functions of (lat, lon, valid time, seed):
// a latitude gradient, land/sea contrast, a diurnal cycle in local solar time, drifting lows with
// fronts, subtropical highs, smooth noise, winds that follow the pressure field and rain only near
// fronts and storm centres. Regional patches ask for `detail`, which adds small-scale structure on
// top of the same large-scale functions, so patch and global agree broadly but not exactly.
//
// Callers pass canonical coordinates (longitude in -180..180) and evaluate row blocks of a grid;
// each cell's value depends only on its own coordinates, whatever the layout or block.
import { hashInts, hashStep, Rng, WaveNoise } from "./noise.ts";
import { type Surface, type SurfaceNoise, surfaceAt } from "./surface.ts";
import { addDynamics, addRain, type Dynamics, makeSystems, type System } from "./systems.ts";

/** Reference time of the systems' positions: the first run, 2026-11-20T00:00Z. */
export const T0_MS = Date.UTC(2026, 10, 20, 0, 0, 0);

const RAD = Math.PI / 180;
const K_GEO = 0.065;

export interface FieldSet {
  t2m: Float32Array;
  u10: Float32Array;
  v10: Float32Array;
  msl: Float32Array;
  /** Cloud fraction 0..1, NaN where the (synthetic) satellite retrieval is missing. */
  tcc: Float32Array;
  t850: Float32Array;
  t500: Float32Array;
}

interface Noises extends SurfaceNoise {
  temp: WaveNoise;
  pres: WaveNoise;
  windU: WaveNoise;
  windV: WaveNoise;
  cloud: WaveNoise;
  rain: WaveNoise;
  tempDetail: WaveNoise;
  windDetail: WaveNoise;
  rainDetail: WaveNoise;
}

const gauss = (x: number, mu: number, s: number) => Math.exp(-(((x - mu) / s) ** 2));

/** Sea-surface air temperature by latitude (November: northern hemisphere cooling). */
function seaTemp(lat: number): number {
  const s = Math.sin(lat * RAD);
  const polar = 16 * Math.max(0, (Math.abs(lat) - 60) / 30) ** 2;
  const southernOcean = 10 * Math.max(0, (-lat - 35) / 30);
  return 300.5 - 30 * s * s - 5 * s - polar - southernOcean;
}

/** Zonal mean sea-level pressure: subtropical highs, subpolar lows. */
function bgPressure(lat: number): number {
  return (
    101_325 +
    900 * gauss(lat, 33, 9) +
    1100 * gauss(lat, -33, 9) -
    1500 * gauss(lat, 60, 10) -
    2200 * gauss(lat, -62, 8)
  );
}

export class WeatherModel {
  readonly seed: number;
  readonly systems: System[];
  readonly #noise: Noises;
  #pool: Float64Array[] = [];

  constructor(seed: number) {
    this.seed = seed >>> 0;
    const rng = new Rng(hashInts(this.seed, 0x5eed));
    this.systems = makeSystems(rng);
    const wn = (waves: number, mMin: number, mMax: number, drift?: [number, number]) =>
      new WaveNoise(rng, { waves, mMin, mMax, drift });
    this.#noise = {
      temp: wn(6, 2, 14, [0.1, 0.4]),
      pres: wn(5, 2, 10, [0.1, 0.4]),
      windU: wn(6, 3, 20, [0.1, 0.5]),
      windV: wn(6, 3, 20, [0.1, 0.5]),
      cloud: wn(8, 3, 30, [0.1, 0.5]),
      rain: wn(8, 8, 60, [0.2, 0.6]),
      coast: wn(8, 6, 40),
      coastDetail: wn(10, 120, 600),
      terrain: wn(8, 10, 60),
      terrainDetail: wn(14, 200, 1200),
      tempDetail: wn(10, 150, 700, [0.2, 0.5]),
      windDetail: wn(10, 150, 700, [0.2, 0.5]),
      rainDetail: wn(10, 150, 800, [0.3, 0.6]),
    };
  }

  /** k zeroed work arrays of n cells, reused between calls (block after block has the same size). */
  #scratch(n: number, k: number): Float64Array[] {
    if (this.#pool[0]?.length !== n) this.#pool = [];
    while (this.#pool.length < k) this.#pool.push(new Float64Array(n));
    const out = this.#pool.slice(0, k);
    for (const a of out) a.fill(0);
    return out;
  }

  surface(lat: Float64Array, lon: Float64Array, detail: boolean): Surface {
    return surfaceAt(lat, lon, this.#noise, detail);
  }

  /** Instantaneous fields at tau hours after T0 on the cells lat × lon. */
  evaluate(lat: Float64Array, lon: Float64Array, surf: Surface, tau: number, detail: boolean): FieldSet {
    const rows = lat.length;
    const cols = lon.length;
    const n = rows * cols;
    const nz = this.#noise;
    const [msl, u, v, dT, cloud, nT, nP, nU, nV, nC, nTd, nWd] = this.#scratch(n, 12);
    const dyn: Dynamics = { msl, u, v, dT, cloud };
    addDynamics(this.systems, lat, lon, tau, dyn);
    nz.temp.addTo(nT, lat, lon, tau, 1);
    nz.pres.addTo(nP, lat, lon, tau, 1);
    nz.windU.addTo(nU, lat, lon, tau, 1);
    nz.windV.addTo(nV, lat, lon, tau, 1);
    nz.cloud.addTo(nC, lat, lon, tau, 1);
    if (detail) {
      nz.tempDetail.addTo(nTd, lat, lon, tau, 1);
      nz.windDetail.addTo(nWd, lat, lon, tau, 1);
    }

    // Everything that depends on latitude only, then on longitude only.
    const tSea = new Float64Array(rows);
    const tLand = new Float64Array(rows);
    const ampSea = new Float64Array(rows);
    const ampLand = new Float64Array(rows);
    const pBg = new Float64Array(rows);
    const uBg = new Float64Array(rows);
    const vBg = new Float64Array(rows);
    const cBg = new Float64Array(rows);
    const t850 = new Float64Array(rows);
    const t500 = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      const la = lat[i];
      const s = Math.sin(la * RAD);
      const hs = la >= 0 ? 1 : -1;
      const trop = Math.min(1, Math.abs(la) / 12);
      tSea[i] = seaTemp(la);
      tLand[i] = -9 * s - 3 * s * s;
      const sun = Math.max(0.1, Math.cos((la + 20) * RAD));
      ampSea[i] = 0.4 * sun;
      ampLand[i] = 5 * sun;
      pBg[i] = bgPressure(la);
      const dpdlat = (bgPressure(la + 0.01) - bgPressure(la - 0.01)) / 0.02;
      const trade = gauss(Math.abs(la), 13, 9);
      uBg[i] = -K_GEO * hs * trop * dpdlat - 6 * trade;
      vBg[i] = -hs * 2.5 * trade;
      cBg[i] = 0.35 * gauss(la, 5, 6) - 0.2 * gauss(Math.abs(la), 25, 8) + 0.15 * gauss(Math.abs(la), 55, 12);
      t850[i] = seaTemp(la) - 13;
      t500[i] = 252 - 28 * s * s - 4 * s;
    }
    const hourUtc = (((T0_MS / 3_600_000 + tau) % 24) + 24) % 24;
    const diurnal = new Float64Array(cols);
    const lonKey = new Int32Array(cols);
    for (let j = 0; j < cols; j++) {
      diurnal[j] = Math.cos((2 * Math.PI * (hourUtc + lon[j] / 15 - 15)) / 24);
      lonKey[j] = Math.round(lon[j] * 1000);
    }

    const out: FieldSet = {
      t2m: new Float32Array(n),
      u10: new Float32Array(n),
      v10: new Float32Array(n),
      msl: new Float32Array(n),
      tcc: new Float32Array(n),
      t850: new Float32Array(n),
      t500: new Float32Array(n),
    };
    const { land, height } = surf;
    for (let i = 0; i < rows; i++) {
      const base = i * cols;
      // Missing cloud cells: a hash of the position (millidegrees), the same in every layout.
      const rowHash = hashInts(this.seed, Math.round(lat[i] * 1000));
      for (let j = 0; j < cols; j++) {
        const c = base + j;
        const L = land[c];
        const H = height[c];
        const dT = dyn.dT[c];
        let t = tSea[i] + L * tLand[i] - 0.0065 * H + (ampSea[i] + L * ampLand[i]) * diurnal[j] + dT + 1.5 * nT[c];
        let u = uBg[i] + dyn.u[c] + 2.5 * nU[c];
        let v = vBg[i] + dyn.v[c] + 2.5 * nV[c];
        if (detail) {
          t += 0.4 * nTd[c];
          const gust = 1.2 * (1 + H / 2000) * nWd[c];
          u += gust;
          v -= gust * 0.6;
        }
        const friction = 1 - 0.35 * L;
        out.t2m[c] = t;
        out.u10[c] = u * friction;
        out.v10[c] = v * friction;
        out.msl[c] = pBg[i] + dyn.msl[c] + 120 * nP[c];
        const cl = 0.4 + 0.22 * nC[c] + 1.2 * dyn.cloud[c] + cBg[i];
        const missing = hashStep(rowHash, lonKey[j]) % 1500 === 0;
        out.tcc[c] = missing ? Number.NaN : 1 / (1 + Math.exp(-5 * (cl - 0.5)));
        out.t850[c] = t850[i] + 0.3 * L * tLand[i] + 0.9 * dT + 0.8 * nT[c];
        out.t500[c] = t500[i] + 0.5 * dT + 0.6 * nT[c];
      }
    }
    return out;
  }

  /** Precipitation in metres over the hour ending tauEnd hours after T0 (midpoint rate × 1 h). */
  rain(lat: Float64Array, lon: Float64Array, surf: Surface, tauEnd: number, detail: boolean): Float32Array {
    const n = lat.length * lon.length;
    const tau = tauEnd - 0.5;
    const [raw, nR] = this.#scratch(n, 2);
    addRain(this.systems, lat, lon, tau, raw);
    this.#noise.rain.addTo(nR, lat, lon, tau, 1);
    if (detail) this.#noise.rainDetail.addTo(nR, lat, lon, tau, 0.25);
    const out = new Float32Array(n);
    for (let c = 0; c < n; c++) {
      if (raw[c] === 0) continue;
      // Mountains squeeze out more rain; light drizzle below 0.1 mm/h is dropped to zero.
      const oro = 1 + (0.6 * Math.min(surf.height[c], 2500)) / 1000;
      const mm = raw[c] * Math.max(0, 0.55 + 0.45 * nR[c]) * oro;
      out[c] = mm < 0.1 ? 0 : mm / 1000;
    }
    return out;
  }
}
