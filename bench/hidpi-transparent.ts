import { arrowSpacing, renderArrows } from "../src/render/arrows.ts";
import { finiteRange, prepareContourText } from "../src/render/contour-labels.ts";
import { renderContours } from "../src/render/contours.ts";
import { hidpiLabels, paintOrientationTile, zoomLayout } from "../src/render/orientation.ts";
import { OVERLAY_BYTES } from "../src/render/overlay-paint.ts";
import { OVERLAY_PALETTE, quantizeOverlay } from "../src/render/overlay-palette.ts";
import { encodeIndexedPng, encodeRgbaPng } from "../src/render/png.ts";
import { createLevelSampler, type LevelSampler } from "../src/render/resample.ts";
import { HIDPI_MAX_ZOOM, HIDPI_SIZE, TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { overlayFields } from "./lib.ts";

const maxZoom = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 7);
const hidpiMax = Math.min(HIDPI_MAX_ZOOM, maxZoom - 1);

interface Tally {
  ms: number;
  tiles: number;
  encoded: number;
  bytes: number;
}
const tally = (): Tally => ({ ms: 0, tiles: 0, encoded: 0, bytes: 0 });
const fmt = (t: Tally) =>
  `${(t.ms / 1000).toFixed(1)} s, ${t.tiles} tiles (${t.encoded} encoded), ${(t.bytes / 1e6).toFixed(2)} MB`;
const rows: string[] = [];

// ---- orientation
{
  const one = tally();
  const two = tally();
  let layoutMs = 0;
  let masksMs = 0;
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE * 4);
  for (let z = 0; z <= hidpiMax; z++) {
    let t = performance.now();
    const layout = await zoomLayout(z);
    layoutMs += performance.now() - t;
    t = performance.now();
    const masks = await hidpiLabels(layout);
    masksMs += performance.now() - t;
    for (let x = 0; x < 2 ** z; x++) {
      for (let y = 0; y < 2 ** z; y++) {
        t = performance.now();
        if (paintOrientationTile(layout, x, y, rgba)) {
          const png = encodeRgbaPng(rgba, TILE_SIZE, TILE_SIZE);
          one.encoded++;
          one.bytes += png.length;
        }
        one.ms += performance.now() - t;
        one.tiles++;
        t = performance.now();
        if (paintOrientationTile(layout, x, y, big, masks)) {
          const png = encodeRgbaPng(big, HIDPI_SIZE, HIDPI_SIZE);
          two.encoded++;
          two.bytes += png.length;
        }
        two.ms += performance.now() - t;
        two.tiles++;
      }
    }
  }
  two.ms += masksMs;
  rows.push(`orientation z0..${hidpiMax} (label placement ${(layoutMs / 1000).toFixed(1)} s, shared)`);
  rows.push(`  1x:  ${fmt(one)}`);
  rows.push(`  @2x: ${fmt(two)} (of which 2x label text ${(masksMs / 1000).toFixed(1)} s)`);
  rows.push(`  @2x/1x: time ×${(two.ms / one.ms).toFixed(2)}, bytes ×${(two.bytes / one.bytes).toFixed(2)}`);
}

// ---- overlays
{
  const { grid, f } = await overlayFields();
  const label = (v: number) => String(Math.round(v / 100));
  await prepareContourText(...finiteRange(f.msl), { interval: 400, label });
  const cellPx = (z: number) => (grid.dlon / 360) * TILE_SIZE * 2 ** z;
  const rgba = new Uint8Array(OVERLAY_BYTES);
  const idx = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE);
  const samplers = Array.from({ length: maxZoom + 1 }, (_, z) => createLevelSampler(grid, z));
  for (const layer of ["isobars", "arrows"] as const) {
    const paint = (s: LevelSampler, x: number, y: number, out: Uint8Array) => {
      if (layer === "isobars") {
        const step = Math.min(24, Math.max(3, Math.round(cellPx(s.z) / 1.5)));
        renderContours(s, x, y, f.msl, { interval: 400, label, step }, rgba);
      } else renderArrows(s, x, y, f.u10, f.v10, { spacing: arrowSpacing(40, s.z, cellPx(s.z)) }, rgba);
      quantizeOverlay(rgba, out);
    };
    const one = tally();
    const two = tally();
    for (let z = 0; z <= maxZoom; z++) {
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          let t = performance.now();
          paint(samplers[z], x, y, idx);
          if (!isUniform(idx)) {
            const png = encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, OVERLAY_PALETTE, { rows: "none" });
            one.encoded++;
            one.bytes += png.length;
          }
          one.ms += performance.now() - t;
          one.tiles++;
          if (z > hidpiMax) continue;
          t = performance.now();
          for (let q = 0; q < 4; q++) {
            const dx = q & 1;
            const dy = q >> 1;
            paint(samplers[z + 1], 2 * x + dx, 2 * y + dy, idx);
            for (let r = 0; r < TILE_SIZE; r++) {
              big.set(
                idx.subarray(r * TILE_SIZE, (r + 1) * TILE_SIZE),
                (dy * TILE_SIZE + r) * HIDPI_SIZE + dx * TILE_SIZE,
              );
            }
          }
          if (!isUniform(big)) {
            const png = encodeIndexedPng(big, HIDPI_SIZE, HIDPI_SIZE, OVERLAY_PALETTE, { rows: "none" });
            two.encoded++;
            two.bytes += png.length;
          }
          two.ms += performance.now() - t;
          two.tiles++;
        }
      }
    }
    rows.push(`${layer}, one lead: 1x z0..${maxZoom} against @2x z0..${hidpiMax} (estimated by its pixel work)`);
    rows.push(`  1x:  ${fmt(one)}`);
    rows.push(`  @2x: ${fmt(two)}`);
    rows.push(
      `  adding @2x: time ×${(1 + two.ms / one.ms).toFixed(2)}, bytes ×${(1 + two.bytes / one.bytes).toFixed(2)}`,
    );
  }
}
console.log(rows.join("\n"));
