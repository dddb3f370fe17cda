// What the stepped ramps and the @2x tiles cost a CDN: bytes per tile and encode time, on the
// same synthetic 0.25° global fields (721 × 1440) sampled bilinearly to the z0..maxZoom pyramid,
// for three ways of drawing each field:
//   linear   the ramp before issue 29: 255 equal bins over the style's range (8-bit palette);
//   stepped  the stepped, perceptual ramp (8-bit palette, one flat colour per class);
//   rgba     the linear ramp's colour of the continuous value per pixel, 32-bit RGBA through
//            sharp (libpng, compression level 6): what tiles without any palette would weigh.
// Then the 512 px @2x tiles of the stepped ramp for z0..maxZoom-1 against the 256 px tiles.
// Uniform tiles are counted once per colour, as the build hard-links them.
//   node bench/ramp-tiles.ts [maxZoom (default 5)]
import { performance } from "node:perf_hooks";
import sharp from "sharp";
import { registry } from "../src/registry/registry.ts";
import { buildPalette, onAxis, type Palette, type PaletteStyle } from "../src/render/colormap.ts";
import { encodeIndexedPng } from "../src/render/png.ts";
import { createLevelSampler, type LatLonGrid } from "../src/render/resample.ts";
import { TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";

const maxZoom = Number(process.argv[2] ?? 5);
const lat = Float64Array.from({ length: 721 }, (_, i) => 90 - i * 0.25);
const lon = Float64Array.from({ length: 1440 }, (_, j) => j * 0.25);
const grid: LatLonGrid = { lat, lon };

/** Temperature-like (K): large-scale pattern and node-scale jitter. Rain-like (m): patchy showers, mostly dry. */
function fields(): { t2m: Float32Array; tp: Float32Array } {
  const t2m = new Float32Array(lat.length * lon.length);
  const tp = new Float32Array(lat.length * lon.length);
  let seed = 12345;
  for (let i = 0; i < lat.length; i++) {
    const p = (lat[i] * Math.PI) / 180;
    for (let j = 0; j < lon.length; j++) {
      const l = (lon[j] * Math.PI) / 180;
      seed = (seed * 1103515245 + 12345) >>> 0;
      const jitter = seed / 2 ** 32 - 0.5;
      t2m[i * lon.length + j] =
        250 + 45 * Math.cos(p) + 8 * Math.sin(3 * l + 2 * p) + 4 * Math.sin(17 * l) * Math.cos(11 * p) + jitter;
      const showers = Math.sin(7 * l + 3 * p) * Math.cos(5 * p - 2 * l) + 0.3 * Math.sin(23 * l) * Math.cos(19 * p);
      tp[i * lon.length + j] = Math.max(0, showers - 0.35) * 0.012 * (1 + 0.2 * jitter);
    }
  }
  return { t2m, tp };
}

interface Tally {
  bytes: number;
  tiles: number;
  ms: number;
}

function* pyramid(top: number): Generator<[number, number, number]> {
  for (let z = 0; z <= top; z++) for (let x = 0; x < 2 ** z; x++) for (let y = 0; y < 2 ** z; y++) yield [z, x, y];
}

/** Indexed tiles of `palette`, 256 px, or 512 px from the four tiles of the next zoom. */
function indexed(field: Float32Array, palette: Palette, hidpi: boolean): Tally {
  const axis = onAxis(palette, field);
  const t: Tally = { bytes: 0, tiles: 0, ms: 0 };
  const size = hidpi ? 2 * TILE_SIZE : TILE_SIZE;
  const out = new Uint8Array(size * size);
  const quarter = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const seen = new Set<number>();
  const samplers = new Map<number, ReturnType<typeof createLevelSampler>>();
  const level = (z: number) => samplers.get(z) ?? samplers.set(z, createLevelSampler(grid, z)).get(z)!;
  for (const [z, x, y] of pyramid(hidpi ? maxZoom - 1 : maxZoom)) {
    const t0 = performance.now();
    if (hidpi) {
      for (let q = 0; q < 4; q++) {
        const dx = q & 1;
        const dy = q >> 1;
        level(z + 1).renderTile(2 * x + dx, 2 * y + dy, axis, palette, quarter, "bilinear");
        for (let r = 0; r < TILE_SIZE; r++) {
          out.set(quarter.subarray(r * TILE_SIZE, (r + 1) * TILE_SIZE), (dy * TILE_SIZE + r) * size + dx * TILE_SIZE);
        }
      }
    } else level(z).renderTile(x, y, axis, palette, out, "bilinear");
    t.tiles++;
    if (isUniform(out) && seen.has(out[0])) continue;
    if (isUniform(out)) seen.add(out[0]);
    t.bytes += encodeIndexedPng(out, size, size, palette.rgba).length;
    t.ms += performance.now() - t0;
  }
  return t;
}

/** RGBA tiles: each pixel the linear ramp's colour at its bilinear value, no palette. */
async function rgba(field: Float32Array, style: PaletteStyle): Promise<Tally> {
  const linear = buildPalette(style);
  // 4096 steps of the ramp: finer than any 8-bit channel step, so no banding from the table.
  const table = new Uint8Array(4096 * 4);
  for (let k = 0; k < 4096; k++) {
    const v = style.min + ((k + 0.5) / 4096) * (style.max - style.min);
    const a = linear.lut(v);
    const lo = Math.max(1, Math.min(254, a));
    // Between the two palette entries around v, by where v falls between their centres.
    const f = Math.min(1, Math.max(0, (v - style.min) * linear.scale + 0.5 - lo));
    for (let c = 0; c < 4; c++) {
      table[k * 4 + c] =
        a === 0 ? 0 : Math.round(linear.rgba[lo * 4 + c] * (1 - f) + linear.rgba[(lo + 1) * 4 + c] * f);
    }
  }
  const t: Tally = { bytes: 0, tiles: 0, ms: 0 };
  const samplers = new Map<number, ReturnType<typeof createLevelSampler>>();
  const level = (z: number) => samplers.get(z) ?? samplers.set(z, createLevelSampler(grid, z)).get(z)!;
  const px = Buffer.alloc(TILE_SIZE * TILE_SIZE * 4);
  const below = style.transparent_below ?? Number.NEGATIVE_INFINITY;
  for (const [z, x, y] of pyramid(maxZoom)) {
    const t0 = performance.now();
    const s = level(z);
    for (let r = 0; r < TILE_SIZE; r++) {
      for (let c = 0; c < TILE_SIZE; c++) {
        const v = s.valueAt(x * TILE_SIZE + c, y * TILE_SIZE + r, field);
        const o = (r * TILE_SIZE + c) * 4;
        if (!(v > below)) {
          px.fill(0, o, o + 4);
          continue;
        }
        const k = Math.min(4095, Math.max(0, Math.floor(((v - style.min) / (style.max - style.min)) * 4096)));
        px.set(table.subarray(k * 4, k * 4 + 4), o);
      }
    }
    const png = await sharp(px, { raw: { width: TILE_SIZE, height: TILE_SIZE, channels: 4 } })
      .png({ compressionLevel: 6 })
      .toBuffer();
    t.bytes += png.length;
    t.tiles++;
    t.ms += performance.now() - t0;
  }
  return t;
}

const { t2m, tp } = fields();
const kib = (t: Tally) => (t.bytes / t.tiles / 1024).toFixed(2);
console.log(`z0..${maxZoom} (${[...pyramid(maxZoom)].length} tiles per field), @2x z0..${maxZoom - 1}`);
console.log("field  drawing        KiB/tile  ×linear  ms/tile(encoded)");
for (const [name, field, variable] of [
  ["t2m", t2m, "t2m"],
  ["tp", tp, "tp"],
] as const) {
  const style = registry.resolve(variable).style!;
  const { display: _, ...plain } = style;
  const linear = indexed(field, buildPalette(plain), false);
  const stepped = indexed(field, buildPalette(style), false);
  const hidpi = indexed(field, buildPalette(style), true);
  const truecolour = await rgba(field, plain);
  const row = (label: string, t: Tally, per = 1) =>
    console.log(
      `${name.padEnd(6)} ${label.padEnd(14)} ${kib(t).padStart(8)}  ${(t.bytes / t.tiles / (linear.bytes / linear.tiles) / per).toFixed(2).padStart(7)}  ${(t.ms / t.tiles).toFixed(2).padStart(8)}`,
    );
  row("linear 8-bit", linear);
  row("stepped 8-bit", stepped);
  row("rgba", truecolour);
  row("stepped @2x", hidpi);
  console.log(
    `${name.padEnd(6)} @2x per area of a 256 px tile: ${(hidpi.bytes / hidpi.tiles / 4 / 1024).toFixed(2)} KiB (×${(hidpi.bytes / hidpi.tiles / 4 / (stepped.bytes / stepped.tiles)).toFixed(2)} stepped 256 px)`,
  );
}
