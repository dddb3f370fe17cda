// Seeded randomness and smooth noise for the synthetic store. Everything here is a pure function of
// the seed, so the same seed writes the same bytes. Noise is a sum of plane waves on the sphere;
// each wave splits into two row × column products, which keeps evaluation cheap on big grids.

/** 32-bit FNV-1a of a string: stable names → seeds. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** One mixing step (a murmur3-style finaliser); chain it to hash several integers. */
export function hashStep(h: number, x: number): number {
  h = Math.imul(h ^ (x | 0), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Mix integers into one 32-bit hash. */
export function hashInts(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) h = hashStep(h, x);
  return h;
}

/** Small deterministic generator (mulberry32). */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  uniform(a: number, b: number): number {
    return a + (b - a) * this.next();
  }
  int(a: number, b: number): number {
    return Math.floor(this.uniform(a, b + 1));
  }
  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

const RAD = Math.PI / 180;

interface Wave {
  amp: number;
  /** Wavenumber in latitude (per radian). */
  p: number;
  /** Integer wavenumber in longitude, so the field wraps around the globe seamlessly. */
  m: number;
  phase: number;
  /** Eastward drift of the pattern, degrees per hour. */
  drift: number;
}

export interface NoiseSpec {
  waves: number;
  /** Range of the total wavenumber (waves per 2π radians). */
  mMin: number;
  mMax: number;
  /** Eastward drift range in degrees per hour. */
  drift?: [number, number];
}

/** Smooth noise of roughly unit amplitude: sum of drifting plane waves sin(p·lat + m·lon + φ). */
export class WaveNoise {
  readonly waves: Wave[] = [];

  constructor(rng: Rng, spec: NoiseSpec) {
    const [d0, d1] = spec.drift ?? [0, 0];
    // Wavenumbers spread log-uniformly in every direction, amplitudes falling off like k^-0.8
    // (a red spectrum): this looks like weather rather than an egg crate or hatching.
    for (let n = 0; n < spec.waves; n++) {
      const k = Math.exp(rng.uniform(Math.log(spec.mMin), Math.log(spec.mMax)));
      const dir = rng.uniform(0, Math.PI);
      const m = Math.round(k * Math.cos(dir));
      const p = k * Math.sin(dir);
      const amp = (k / spec.mMin) ** -0.8 * rng.uniform(0.7, 1.3);
      this.waves.push({ amp, p, m, phase: rng.uniform(0, 2 * Math.PI), drift: rng.uniform(d0, d1) });
    }
    // Unit standard deviation: each wave contributes amp²/2 to the variance.
    const norm = Math.sqrt(2 / this.waves.reduce((a, w) => a + w.amp * w.amp, 0));
    for (const w of this.waves) w.amp *= norm;
  }

  /** out[i*cols+j] += scale · noise(lat[i], lon[j], hours). */
  addTo(out: Float64Array, lat: Float64Array, lon: Float64Array, hours: number, scale: number): void {
    const rows = lat.length;
    const cols = lon.length;
    const rs = new Float64Array(rows);
    const rc = new Float64Array(rows);
    const cs = new Float64Array(cols);
    const cc = new Float64Array(cols);
    for (const w of this.waves) {
      for (let i = 0; i < rows; i++) {
        // Fade near the poles, where a longitude wave would make the pole row ragged.
        const fade = Math.min(1, 4 * Math.cos(lat[i] * RAD));
        const a = w.p * lat[i] * RAD + w.phase;
        rs[i] = scale * w.amp * fade * Math.sin(a);
        rc[i] = scale * w.amp * fade * Math.cos(a);
      }
      for (let j = 0; j < cols; j++) {
        const b = w.m * (lon[j] - w.drift * hours) * RAD;
        cs[j] = Math.sin(b);
        cc[j] = Math.cos(b);
      }
      // sin(a + b) = sin a cos b + cos a sin b
      for (let i = 0; i < rows; i++) {
        const s = rs[i];
        const c = rc[i];
        const base = i * cols;
        for (let j = 0; j < cols; j++) out[base + j] += s * cc[j] + c * cs[j];
      }
    }
  }
}
