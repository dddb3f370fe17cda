// EO latent embeddings of the synthetic store:
// embeddings/<family>/rf/v1.2/base/<product>/<period>/<tile>, one group per item holding the
// latent (y, x, feature), its UTM pixel-centre coordinates and a small preview written up front,
// so item metadata never needs the main array. Latents are smooth functions of UTM position, so
// neighbouring pixels (and tiles of one zone) look alike; some items are left out on purpose.
import { type TileGeometry, tileGeometry, tileNameAt } from "../embeddings/mgrs.ts";
import { hashInts, hashString, Rng } from "./noise.ts";
import type { Preset } from "./presets.ts";
import { bitRound } from "./quantize.ts";
import type { ZarrWriter } from "./zarr-writer.ts";

export const FAMILIES = ["geofm", "terramind"] as const;
export const PRODUCTS = ["tokens", "map", "vector"] as const;
export const PERIODS = ["2026_06_01_2026_08_31", "2026_09_01_2026_11_30"] as const;
export const MODEL_VERSION = "v1.2";
const KEEP_BITS = 10;
const BASES = 8;

export type Product = (typeof PRODUCTS)[number];

export interface EmbeddingSummary {
  families: string[];
  products: string[];
  periods: string[];
  tiles: string[];
  /** Item paths below embeddings/ that were written. */
  items: string[];
  /** Item paths of the catalogue's combinations that were deliberately left out. */
  missing: string[];
}

const PRODUCT_TEXT: Record<Product, string> = {
  tokens: "full research latent (patch tokens)",
  map: "spatial feature map",
  vector: "one pooled vector per tile",
};

export function itemPath(family: string, product: string, period: string, tile: string): string {
  return `${family}/rf/${MODEL_VERSION}/base/${product}/${period}/${tile}`;
}

/** Whether an item exists: about one in five combinations is missing, chosen by the seed. */
export function itemExists(seed: number, family: string, product: string, period: string, tile: string): boolean {
  return hashInts(seed, hashString(itemPath(family, product, period, tile))) % 5 !== 0;
}

const isoDate = (s: string) => `${s.slice(0, 4)}-${s.slice(5, 7)}-${s.slice(8, 10)}`;

interface Basis {
  kx: number;
  ky: number;
  phase: number;
}

/** Latent values, C order (y, x, feature), at pixel centres xs × ys. */
function latent(
  seed: number,
  family: string,
  product: Product,
  period: string,
  xs: Float64Array,
  ys: Float64Array,
  nf: number,
): Float32Array {
  const rng = new Rng(hashInts(seed, hashString(`${family}/${product}`)));
  const bases: Basis[] = [];
  for (let b = 0; b < BASES; b++) {
    const k = (2 * Math.PI) / rng.uniform(6_000, 60_000);
    const dir = rng.uniform(0, Math.PI);
    bases.push({ kx: k * Math.cos(dir), ky: k * Math.sin(dir), phase: rng.uniform(0, 2 * Math.PI) });
  }
  const weights = Float64Array.from({ length: nf * BASES }, () => 0.7 * rng.normal());
  const bias = Float64Array.from({ length: nf }, () => 0.3 * rng.normal());
  const seasonal = Float64Array.from({ length: nf }, () => 0.4 * rng.normal());
  const season = period === PERIODS[0] ? 1 : -1;
  const out = new Float32Array(ys.length * xs.length * nf);
  const start = Float64Array.from({ length: nf }, (_, f) => bias[f] + season * seasonal[f]);
  const basis = new Float64Array(BASES);
  for (let i = 0; i < ys.length; i++) {
    for (let j = 0; j < xs.length; j++) {
      for (let b = 0; b < BASES; b++) basis[b] = Math.sin(bases[b].kx * xs[j] + bases[b].ky * ys[i] + bases[b].phase);
      // The sum over the eight bases written out, in the same order (the same rounding) as a loop.
      const b0 = basis[0],
        b1 = basis[1],
        b2 = basis[2],
        b3 = basis[3];
      const b4 = basis[4],
        b5 = basis[5],
        b6 = basis[6],
        b7 = basis[7];
      const o = (i * xs.length + j) * nf;
      for (let f = 0, k = 0; f < nf; f++, k += BASES) {
        let s = start[f];
        s += weights[k] * b0;
        s += weights[k + 1] * b1;
        s += weights[k + 2] * b2;
        s += weights[k + 3] * b3;
        s += weights[k + 4] * b4;
        s += weights[k + 5] * b5;
        s += weights[k + 6] * b6;
        s += weights[k + 7] * b7;
        // A cheap tanh-like squash keeps features within -1..1.
        out[o + f] = s / Math.sqrt(1 + s * s);
      }
    }
  }
  return out;
}

/** The same latent averaged over the tile (the "vector" product). */
function pooled(seed: number, family: string, period: string, g: TileGeometry, nf: number): Float32Array {
  const n = 8;
  const step = g.size_m / n;
  const xs = Float64Array.from({ length: n }, (_, j) => g.origin.easting + (j + 0.5) * step);
  const ys = Float64Array.from({ length: n }, (_, i) => g.origin.northing + g.size_m - (i + 0.5) * step);
  const grid = latent(seed, family, "vector", period, xs, ys, nf);
  const out = new Float32Array(nf);
  for (let p = 0; p < n * n; p++) for (let f = 0; f < nf; f++) out[f] += grid[p * nf + f] / (n * n);
  return out;
}

/** Mean-pooled first three features, at most 16 × 16 pixels. */
function preview(
  values: Float32Array,
  ny: number,
  nx: number,
  nf: number,
): { data: Float32Array; shape: number[]; pool: number } {
  const pool = Math.max(1, Math.ceil(Math.max(ny, nx) / 16));
  const py = Math.ceil(ny / pool);
  const px = Math.ceil(nx / pool);
  const bands = Math.min(3, nf);
  const data = new Float32Array(py * px * bands);
  for (let pi = 0; pi < py; pi++) {
    for (let pj = 0; pj < px; pj++) {
      for (let c = 0; c < bands; c++) {
        let sum = 0;
        let count = 0;
        for (let i = pi * pool; i < Math.min(ny, (pi + 1) * pool); i++) {
          for (let j = pj * pool; j < Math.min(nx, (pj + 1) * pool); j++) {
            sum += values[(i * nx + j) * nf + c];
            count++;
          }
        }
        data[(pi * px + pj) * bands + c] = sum / count;
      }
    }
  }
  return { data, shape: [py, px, bands], pool };
}

async function writeItem(
  w: ZarrWriter,
  seed: number,
  path: string,
  family: string,
  product: Product,
  period: string,
  g: TileGeometry,
  shape: [number, number, number],
): Promise<void> {
  const [ny, nx, nf] = shape;
  const res = g.size_m / nx;
  const xs = Float64Array.from({ length: nx }, (_, j) => g.origin.easting + (j + 0.5) * res);
  const ys = Float64Array.from({ length: ny }, (_, i) => g.origin.northing + g.size_m - (i + 0.5) * res);
  const values =
    product === "vector" ? pooled(seed, family, period, g, nf) : latent(seed, family, product, period, xs, ys, nf);
  bitRound(values, KEEP_BITS);
  const pv = preview(values, ny, nx, nf);
  const group = w.group(`embeddings/${path}`, 3, {
    crs: g.crs,
    epsg: g.epsg,
    // Affine [a, b, c, d, e, f]: x = a·col + b·row + c, y = d·col + e·row + f (pixel corners).
    transform: [res, 0, g.origin.easting, 0, -res, g.origin.northing + g.size_m],
    mgrs_tile: g.name,
    utm_zone: g.zone,
    hemisphere: g.hemisphere,
    bbox: g.bbox,
    family,
    product,
    period,
    period_start: isoDate(period.slice(0, 10)),
    period_end: isoDate(period.slice(11)),
    model_version: MODEL_VERSION,
    feature_count: nf,
    resolution_m: res,
    preview_pool: pv.pool,
  });
  const coord = (name: "y" | "x", data: Float64Array, std: string) =>
    group
      .array(name, {
        shape: [data.length],
        chunks: [data.length],
        dtype: "float64",
        dims: [name],
        fill: "NaN",
        attrs: {
          units: "m",
          standard_name: std,
          long_name: `${name} of pixel centre (${g.crs})`,
          axis: name.toUpperCase(),
        },
      })
      .writeAll(data);
  await coord("y", ys, "projection_y_coordinate");
  await coord("x", xs, "projection_x_coordinate");
  await group
    .array("latent", {
      shape,
      // 2 × 2 spatial chunks per item (all features in each), so slices can cross chunk edges.
      chunks: [Math.ceil(ny / 2), Math.ceil(nx / 2), nf],
      dtype: "float32",
      dims: ["y", "x", "feature"],
      fill: "NaN",
      attrs: {
        long_name: `${family} ${product} latent`,
        units: "1",
        _FillValue: "NaN",
        _QuantizeBitRoundNumberOfSignificantBits: KEEP_BITS,
      },
    })
    .writeAll(values);
  await group
    .array("preview", {
      shape: pv.shape,
      chunks: pv.shape,
      dtype: "float32",
      dims: ["preview_y", "preview_x", "preview_band"],
      fill: "NaN",
      attrs: {
        long_name: `mean of latent features 0..2 over ${pv.pool}x${pv.pool} pixels`,
        units: "1",
        _FillValue: "NaN",
      },
    })
    .writeAll(pv.data);
  group.close();
}

/**
 * Write the embeddings of `families` (default all). The top group "embeddings" is written by the
 * part that writes the first family.
 */
export async function writeEmbeddings(
  w: ZarrWriter,
  preset: Preset,
  seed: number,
  progress: (line: string) => void,
  families: readonly string[] = FAMILIES,
): Promise<EmbeddingSummary> {
  const tiles = [...new Set(preset.tilePoints.map(([lon, lat]) => tileNameAt(lon, lat)))];
  const geoms = new Map(tiles.map((t) => [t, tileGeometry(t)]));
  const groups = new Set<string>();
  const ensure = (path: string, attrs: Record<string, unknown>) => {
    if (groups.has(path)) return;
    groups.add(path);
    w.plainGroup(path, 3, attrs);
  };
  const items: string[] = [];
  const missing: string[] = [];
  if (families.includes(FAMILIES[0])) {
    ensure("embeddings", {
      title: "Synthetic EO latent embeddings",
      description: "per model, product, period and MGRS 100 km tile",
    });
  }
  for (const family of families) {
    progress(`embeddings/${family}`);
    for (const product of PRODUCTS) {
      for (const period of PERIODS) {
        for (const tile of tiles) {
          const path = itemPath(family, product, period, tile);
          if (!itemExists(seed, family, product, period, tile)) {
            missing.push(path);
            continue;
          }
          const base = `embeddings/${family}`;
          ensure(base, { family, description: `synthetic ${family} foundation model` });
          ensure(`${base}/rf`, { input: "surface reflectance" });
          ensure(`${base}/rf/${MODEL_VERSION}`, { model_version: MODEL_VERSION });
          ensure(`${base}/rf/${MODEL_VERSION}/base`, { model_size: "base" });
          ensure(`${base}/rf/${MODEL_VERSION}/base/${product}`, {
            product,
            description: PRODUCT_TEXT[product],
            shape: preset.products[product],
          });
          ensure(`${base}/rf/${MODEL_VERSION}/base/${product}/${period}`, {
            period,
            start: isoDate(period.slice(0, 10)),
            end: isoDate(period.slice(11)),
          });
          await writeItem(w, seed, path, family, product, period, geoms.get(tile)!, preset.products[product]);
          items.push(path);
        }
      }
    }
  }
  return {
    families: [...FAMILIES],
    products: [...PRODUCTS],
    periods: [...PERIODS],
    tiles: [...tiles].sort(),
    items: items.sort(),
    missing: missing.sort(),
  };
}
