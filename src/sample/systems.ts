// Synoptic systems of the synthetic weather: mid-latitude lows with a cold and a warm front, slow
// subtropical highs and one tropical cyclone. Each system drifts with time and touches only a
// window of cells around its centre; a compact taper makes every contribution vanish at the
// window edge, so there are no seams however the grid is laid out or cut into blocks.
import type { Rng } from "./noise.ts";

const RAD = Math.PI / 180;
/** Geostrophic-ish wind per unit pressure gradient, m s-1 per (Pa per degree). */
const K_GEO = 0.065;
/** Cross-isobar inflow towards lows (outflow from highs). */
const K_IN = 0.018;

export interface Front {
  /** Cold front heads equatorward, turned west by alpha; the warm front heads east, turned equatorward by beta. */
  alpha: number;
  beta: number;
  coldLen: number;
  warmLen: number;
  /** Half-width of the rain band, degrees. */
  width: number;
  /** Peak rain rate, mm per hour. */
  rate: number;
  /** Temperature contrast across the cold front, K. */
  dT: number;
}

export interface System {
  lat0: number;
  lon0: number;
  /** Drift in degrees per hour (positive = east / north). */
  dLon: number;
  dLat: number;
  radius: number;
  /** Central pressure anomaly, Pa; positive for lows, negative for highs. */
  depth: number;
  tropical: boolean;
  front?: Front;
}

/** Accumulators the systems add into (rows × cols). */
export interface Dynamics {
  msl: Float64Array;
  u: Float64Array;
  v: Float64Array;
  dT: Float64Array;
  cloud: Float64Array;
}

function front(rng: Rng, r: number): Front {
  return {
    alpha: rng.uniform(15, 40) * RAD,
    beta: rng.uniform(10, 30) * RAD,
    coldLen: rng.uniform(1.8, 2.4) * r,
    warmLen: rng.uniform(0.9, 1.3) * r,
    width: rng.uniform(0.6, 1.1),
    rate: rng.uniform(1.5, 4.5),
    dT: rng.uniform(3, 7),
  };
}

function low(rng: Rng, lat: number, lon: number): System {
  const radius = rng.uniform(7, 11);
  return {
    lat0: lat,
    lon0: lon,
    dLon: rng.uniform(0.35, 0.8),
    dLat: rng.uniform(0, 0.05) * Math.sign(lat),
    radius,
    depth: rng.uniform(1500, 4000),
    tropical: false,
    front: front(rng, radius),
  };
}

export function makeSystems(rng: Rng): System[] {
  const out: System[] = [];
  // One low always sits west of Europe so its front crosses the regional patches during the runs.
  out.push(low(rng, rng.uniform(50, 57), rng.uniform(-4, 4)));
  for (let k = 0; k < 7; k++) out.push(low(rng, rng.uniform(38, 66), rng.uniform(-180, 180)));
  for (let k = 0; k < 6; k++) out.push(low(rng, -rng.uniform(40, 64), rng.uniform(-180, 180)));
  for (let k = 0; k < 5; k++) {
    out.push({
      lat0: rng.uniform(25, 42) * (k % 2 === 0 ? 1 : -1),
      lon0: rng.uniform(-180, 180),
      dLon: rng.uniform(0.02, 0.15),
      dLat: 0,
      radius: rng.uniform(12, 20),
      depth: -rng.uniform(900, 2000),
      tropical: false,
    });
  }
  // The Siberian winter high barely moves.
  out.push({ lat0: 52, lon0: rng.uniform(92, 104), dLon: 0, dLat: 0, radius: 17, depth: -2600, tropical: false });
  const tcRadius = rng.uniform(3, 4.5);
  out.push({
    lat0: rng.uniform(12, 20),
    lon0: rng.uniform(125, 150),
    dLon: -rng.uniform(0.1, 0.25),
    dLat: rng.uniform(0.02, 0.08),
    radius: tcRadius,
    depth: rng.uniform(2500, 4000),
    tropical: true,
    front: { ...front(rng, tcRadius), rate: rng.uniform(4, 8) },
  });
  return out;
}

interface Window {
  clat: number;
  hemi: number;
  /** Squared reach in local degrees. */
  reach2: number;
  rows: number[];
  cols: Int32Array;
  /** East offset of each listed column from the centre, in local degrees (scaled by cos lat). */
  dx: Float64Array;
}

function windowOf(s: System, tau: number, lat: Float64Array, lon: Float64Array): Window {
  const clat = Math.max(-85, Math.min(85, s.lat0 + s.dLat * tau));
  let clon = s.lon0 + s.dLon * tau;
  clon = ((((clon + 180) % 360) + 360) % 360) - 180;
  const reach = 2.6 * s.radius;
  const rows: number[] = [];
  for (let i = 0; i < lat.length; i++) if (Math.abs(lat[i] - clat) < reach) rows.push(i);
  const shrink = Math.max(0.25, Math.cos(clat * RAD));
  const cols: number[] = [];
  const dxs: number[] = [];
  for (let j = 0; j < lon.length; j++) {
    let d = lon[j] - clon;
    d = d >= 180 ? d - 360 : d < -180 ? d + 360 : d;
    const dx = d * shrink;
    if (Math.abs(dx) < reach) {
      cols.push(j);
      dxs.push(dx);
    }
  }
  return {
    clat,
    hemi: clat >= 0 ? 1 : -1,
    reach2: reach * reach,
    rows,
    cols: Int32Array.from(cols),
    dx: Float64Array.from(dxs),
  };
}

const along = (s: number, len: number) => Math.exp(-(((s - 0.45 * len) / (0.55 * len)) ** 4));

/** Add pressure, wind, temperature and cloud anomalies of every system at time tau (hours). */
export function addDynamics(systems: System[], lat: Float64Array, lon: Float64Array, tau: number, out: Dynamics): void {
  const ncols = lon.length;
  for (const s of systems) {
    const w = windowOf(s, tau, lat, lon);
    const r2inv = 1 / (s.radius * s.radius);
    const f = s.front;
    const ca = f ? Math.cos(f.alpha) : 0;
    const sa = f ? Math.sin(f.alpha) : 0;
    const cb = f ? Math.cos(f.beta) : 0;
    const sb = f ? Math.sin(f.beta) : 0;
    const h = w.hemi;
    const cloudSign = s.depth > 0 ? 0.6 : -0.6;
    for (const i of w.rows) {
      const dy = lat[i] - w.clat;
      const hs = lat[i] >= 0 ? 1 : -1;
      const trop = Math.min(1, Math.abs(lat[i]) / (s.tropical ? 5 : 12));
      const base = i * ncols;
      for (let k = 0; k < w.cols.length; k++) {
        const dx = w.dx[k];
        const r2 = dx * dx + dy * dy;
        if (r2 >= w.reach2) continue;
        const taper = (1 - r2 / w.reach2) ** 2;
        // env is the broad envelope of the frontal temperature contrast, g the core: g = env².
        const env = Math.exp(-0.5 * r2 * r2inv);
        const g = env * env * taper;
        const c = base + w.cols[k];
        const gx = s.depth * g * 2 * dx * r2inv;
        const gy = s.depth * g * 2 * dy * r2inv;
        out.msl[c] -= s.depth * g;
        out.u[c] += -K_GEO * gy * hs * trop - K_IN * gx;
        out.v[c] += K_GEO * gx * hs * trop - K_IN * gy;
        let cloud = cloudSign * g;
        if (f) {
          const nC = dx * ca - h * dy * sa;
          const sC = -dx * sa - h * dy * ca;
          const nW = h * dx * sb + dy * cb;
          const sW = dx * cb - h * dy * sb;
          if (!s.tropical) {
            // A tanh-like step across the cold front, cheaper than Math.tanh.
            const x = nC / (1.5 * f.width);
            out.dT[c] += (f.dT * x * env * taper) / Math.sqrt(1 + x * x);
          }
          // Cloud bands along both fronts; cells far from a front skip the costly along-front factor.
          const wide = 2.5 * f.width;
          let band = 0;
          if (Math.abs(nC) < 3 * wide) band += Math.exp(-((nC / wide) ** 2)) * along(sC, f.coldLen);
          if (Math.abs(nW) < 3 * wide) band += Math.exp(-((nW / wide) ** 2)) * along(sW, f.warmLen);
          cloud += 0.9 * taper * band;
        }
        out.cloud[c] += cloud;
      }
    }
  }
}

/** Add the rain rate (mm per hour, before noise) of every system at time tau. */
export function addRain(
  systems: System[],
  lat: Float64Array,
  lon: Float64Array,
  tau: number,
  rate: Float64Array,
): void {
  const ncols = lon.length;
  for (const s of systems) {
    const f = s.front;
    if (!f) continue;
    const w = windowOf(s, tau, lat, lon);
    const r2inv = 1 / (s.radius * s.radius);
    const ca = Math.cos(f.alpha);
    const sa = Math.sin(f.alpha);
    const cb = Math.cos(f.beta);
    const sb = Math.sin(f.beta);
    const h = w.hemi;
    for (const i of w.rows) {
      const dy = lat[i] - w.clat;
      const base = i * ncols;
      for (let k = 0; k < w.cols.length; k++) {
        const dx = w.dx[k];
        const r2 = dx * dx + dy * dy;
        if (r2 >= w.reach2) continue;
        const taper = (1 - r2 / w.reach2) ** 2;
        let band: number;
        if (s.tropical) {
          // Eyewall ring plus spiral-free outer rain.
          const r = Math.sqrt(r2 * r2inv);
          band = Math.exp(-(((r - 0.35) / 0.25) ** 2)) + 0.3 * Math.exp(-r * r);
        } else {
          const nC = dx * ca - h * dy * sa;
          const sC = -dx * sa - h * dy * ca;
          const nW = h * dx * sb + dy * cb;
          const sW = dx * cb - h * dy * sb;
          band = 0.5 * Math.exp(-r2 * r2inv * 8);
          if (Math.abs(nC) < 3 * f.width) band += Math.exp(-((nC / f.width) ** 2)) * along(sC, f.coldLen);
          const ww = 1.6 * f.width;
          if (Math.abs(nW) < 3 * ww) band += 0.6 * Math.exp(-((nW / ww) ** 2)) * along(sW, f.warmLen);
        }
        rate[base + w.cols[k]] += f.rate * band * taper;
      }
    }
  }
}
