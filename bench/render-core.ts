// Micro benchmark of the pure render core on one core: a synthetic 0.25° global field (721×1440)
// rendered to the full z0..7 pyramid (21,845 tiles). Prints tiles/s for PNG encoding of ready
// index buffers at deflate levels 1..6, for sampling alone, and for sample+encode end to end.
//   node bench/render-core.ts [maxZoom] [--demo]
// --demo renders the demo store's 2 m temperature (latest run, first lead) instead of the synthetic field.
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { latestRun } from "../src/forecast/select.ts";
import { buildPalette, type Palette } from "../src/render/colormap.ts";
import { DEFAULT_COMPRESSION, encodeIndexedPng, type IndexedPngOptions } from "../src/render/png.ts";
import { createLevelSampler, type LatLonGrid } from "../src/render/resample.ts";
import { MAX_ZOOM, TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { Store } from "../src/store/store.ts";
import { benchStore } from "./lib.ts";

const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const maxZoom = Number(positional[0] ?? MAX_ZOOM);
const useDemo = process.argv.includes("--demo");
/** zlib settings compared on the same buffers: levels 1..6, and the run-length strategy. */
const SETTINGS: { label: string; options: IndexedPngOptions }[] = [
  ...[1, 2, 3, 4, 5, 6].map((level) => ({ label: `level ${level}`, options: { compression: level } })),
  { label: "rle", options: { compression: "rle" } },
];
const BATCH = 32; // index buffers held at once for the encode-only timing (2 MiB, stays in cache)

/** Smooth large-scale pattern plus node-scale jitter, so tiles look like a real temperature field. */
function syntheticGrid(): { grid: LatLonGrid; field: Float32Array } {
  const lat = Float64Array.from({ length: 721 }, (_, i) => 90 - i * 0.25);
  const lon = Float64Array.from({ length: 1440 }, (_, j) => j * 0.25);
  const field = new Float32Array(lat.length * lon.length);
  let seed = 12345;
  for (let i = 0; i < lat.length; i++) {
    const p = (lat[i] * Math.PI) / 180;
    for (let j = 0; j < lon.length; j++) {
      const l = (lon[j] * Math.PI) / 180;
      seed = (seed * 1103515245 + 12345) >>> 0;
      const jitter = (seed / 2 ** 32 - 0.5) * 1.0;
      field[i * lon.length + j] =
        250 + 45 * Math.cos(p) + 8 * Math.sin(3 * l + 2 * p) + 4 * Math.sin(17 * l) * Math.cos(11 * p) + jitter;
    }
  }
  return { grid: { lat, lon }, field };
}

function* pyramid(): Generator<[z: number, x: number, y: number]> {
  for (let z = 0; z <= maxZoom; z++) for (let y = 0; y < 2 ** z; y++) for (let x = 0; x < 2 ** z; x++) yield [z, x, y];
}

/** The demo store's t2m at the latest run and first lead, as the build reads it. */
async function demoGrid(): Promise<{ grid: LatLonGrid; field: Float32Array }> {
  const store = new Store(await benchStore("demo"));
  const group = await store.forecastGroup("forecast/global");
  const v = group.variables.get("t2m")!;
  const run = latestRun(group);
  const region = v.roles.map((r, d): [number, number] => {
    if (r === "time") return [run, run + 1];
    return r === "lat" || r === "lon" ? [0, v.array.shape[d]] : [0, 1];
  });
  return { grid: group.grid, field: Float32Array.from(await v.array.read(region)) };
}

const { grid, field } = useDemo ? await demoGrid() : syntheticGrid();
const palette: Palette = buildPalette({ colormap: "thermal", min: 223.15, max: 323.15 });
const tileCount = [...pyramid()].length;

// Pass 1: sample into batches of ready buffers, then time encoding each batch with every setting.
const encodeMs = new Map(SETTINGS.map((s) => [s.label, 0]));
const encodeBytes = new Map(SETTINGS.map((s) => [s.label, 0]));
let sampleMs = 0;
let uniform = 0;
const pool = Array.from({ length: BATCH }, () => new Uint8Array(TILE_SIZE * TILE_SIZE));
let filled = 0;
const flush = (): void => {
  for (const { label, options } of SETTINGS) {
    const t0 = performance.now();
    let bytes = 0;
    for (let i = 0; i < filled; i++)
      bytes += encodeIndexedPng(pool[i], TILE_SIZE, TILE_SIZE, palette.rgba, options).length;
    encodeMs.set(label, encodeMs.get(label)! + performance.now() - t0);
    encodeBytes.set(label, encodeBytes.get(label)! + bytes);
  }
  filled = 0;
};
let sampler = createLevelSampler(grid, 0);
for (const [z, x, y] of pyramid()) {
  const t0 = performance.now();
  if (sampler.z !== z) sampler = createLevelSampler(grid, z);
  const indices = sampler.renderTile(x, y, field, palette, pool[filled]);
  sampleMs += performance.now() - t0;
  if (isUniform(indices)) uniform++;
  else if (++filled === BATCH) flush();
}
flush();
const encodedTiles = tileCount - uniform;

// Pass 2: end to end, uniform tiles encoded once per index and reused.
const t0 = performance.now();
const uniformPng = new Map<number, Buffer>();
const buf = new Uint8Array(TILE_SIZE * TILE_SIZE);
let totalBytes = 0;
for (const [z, x, y] of pyramid()) {
  if (sampler.z !== z) sampler = createLevelSampler(grid, z);
  const indices = sampler.renderTile(x, y, field, palette, buf);
  let png: Buffer;
  if (isUniform(indices)) {
    png = uniformPng.get(indices[0]) ?? encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, palette.rgba);
    uniformPng.set(indices[0], png);
  } else {
    png = encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, palette.rgba);
  }
  totalBytes += png.length;
}
const endToEndMs = performance.now() - t0;

// Pass 3: the same end to end with bilinear sampling, the cost of smooth continuous fields.
const smoothUniform = new Map<number, Buffer>();
let smoothSampleMs = 0;
let smoothBytes = 0;
const t1 = performance.now();
for (const [z, x, y] of pyramid()) {
  if (sampler.z !== z) sampler = createLevelSampler(grid, z);
  const s0 = performance.now();
  const indices = sampler.renderTile(x, y, field, palette, buf, "bilinear");
  smoothSampleMs += performance.now() - s0;
  let png: Buffer;
  if (isUniform(indices)) {
    png = smoothUniform.get(indices[0]) ?? encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, palette.rgba);
    smoothUniform.set(indices[0], png);
  } else {
    png = encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, palette.rgba);
  }
  smoothBytes += png.length;
}
const smoothMs = performance.now() - t1;

// Size reference: the same tiles as RGBA PNG from sharp (libpng defaults), on a z7 sample.
const rgbaSample = { indexed: 0, rgba: 0, tiles: 0 };
const rgbaSampler = createLevelSampler(grid, maxZoom);
const rgba = Buffer.alloc(TILE_SIZE * TILE_SIZE * 4);
for (let k = 0; k < 64; k++) {
  const n = 2 ** maxZoom;
  const x = (k * 37) % n;
  const y = Math.floor(n / 4) + ((k * 11) % Math.max(1, Math.floor(n / 2)));
  const indices = rgbaSampler.renderTile(x, y, field, palette);
  for (let p = 0; p < indices.length; p++) rgba.set(palette.rgba.subarray(indices[p] * 4, indices[p] * 4 + 4), p * 4);
  rgbaSample.indexed += encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, palette.rgba).length;
  rgbaSample.rgba += (
    await sharp(rgba, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } })
      .png()
      .toBuffer()
  ).length;
  rgbaSample.tiles++;
}

const rate = (tiles: number, ms: number): string => `${Math.round((tiles / ms) * 1000)} tiles/s`;
console.log(
  `pyramid z0..${maxZoom}: ${tileCount} tiles, ${uniform} uniform; ${useDemo ? "demo store t2m" : "synthetic field"} (0.25°)`,
);
console.log("encode-only (ready index buffers, uniform tiles skipped):");
const defaultLabel = typeof DEFAULT_COMPRESSION === "number" ? `level ${DEFAULT_COMPRESSION}` : DEFAULT_COMPRESSION;
for (const { label } of SETTINGS) {
  const ms = encodeMs.get(label)!;
  const kb = encodeBytes.get(label)! / 1024;
  const mark = label === defaultLabel ? "  <- default" : "";
  console.log(
    `  ${label.padEnd(7)}: ${rate(encodedTiles, ms).padStart(15)}  ${(kb / 1024).toFixed(1)} MiB  ${(kb / encodedTiles).toFixed(2)} KiB/tile${mark}`,
  );
}
console.log(`sample-only: ${rate(tileCount, sampleMs)} (level tables included)`);
const encodeDefault = rate(encodedTiles, encodeMs.get(defaultLabel)!);
console.log(
  `sample+encode (${defaultLabel}): ${rate(tileCount, endToEndMs)}, ${(totalBytes / 2 ** 20).toFixed(1)} MiB`,
);
const ratio = tileCount / endToEndMs / (encodedTiles / encodeMs.get(defaultLabel)!);
console.log(`ratio sample+encode / encode-only: ${ratio.toFixed(2)} (encode-only ${encodeDefault})`);
console.log(
  `bilinear: sample-only ${rate(tileCount, smoothSampleMs)} (nearest ${rate(tileCount, sampleMs)}), sample+encode ${rate(tileCount, smoothMs)}, ${(smoothBytes / 2 ** 20).toFixed(1)} MiB; end-to-end ratio bilinear / nearest ${(endToEndMs / smoothMs).toFixed(2)}`,
);
console.log(
  `size vs RGBA (sharp png, ${rgbaSample.tiles} z${maxZoom} tiles): indexed ${(rgbaSample.indexed / rgbaSample.tiles / 1024).toFixed(2)} KiB, rgba ${(rgbaSample.rgba / rgbaSample.tiles / 1024).toFixed(2)} KiB per tile`,
);
