// What @2x overlays cost per lead, as the build draws them: isobars and wind arrows over the demo
// fields, the 1x pyramid z0..max against @2x tiles (four tiles of the next zoom drawn at twice the
// scale, stitched into one 512 px palette PNG) zoom by zoom, the top included, and the ratio
// (1x + @2x) / 1x for each highest @2x zoom. The build draws @2x overlays up to the top
// (OVERLAY_HIDPI_BELOW in src/render/tiles.ts). The marks' boxes (isobar labels and
// H/L, arrow heads) are gathered and carried in the PNGs as the build does. CPU time of this one
// thread (process.cpuUsage), so the ratios hold under load; the load average is printed beside.
// usage: node bench/overlays-hidpi.ts [maxZoom=6]
import { arrowSpacing, renderArrows } from "../src/render/arrows.ts";
import { finiteRange, prepareContourText } from "../src/render/contour-labels.ts";
import { renderContours } from "../src/render/contours.ts";
import { OVERLAY_BYTES } from "../src/render/overlay-paint.ts";
import { OVERLAY_PALETTE, quantizeOverlay } from "../src/render/overlay-palette.ts";
import { encodeIndexedPng, type TileBoxes } from "../src/render/png.ts";
import { createLevelSampler, type LevelSampler } from "../src/render/resample.ts";
import { buildHidpiMax, HIDPI_SIZE, overlayHidpiMax, TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { overlayFields } from "./lib.ts";

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const maxZoom = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 6);
const { grid, f } = await overlayFields();
const label = (v: number) => String(Math.round(v / 100));
await prepareContourText(...finiteRange(f.msl), { interval: 400, label }, [1, 2]);
const cellPx = (z: number) => (grid.dlon / 360) * TILE_SIZE * 2 ** z;
const rgba = new Uint8Array(OVERLAY_BYTES);
const rgba2x = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE * 4);
const idx = new Uint8Array(TILE_SIZE * TILE_SIZE);
const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE);
const samplers = Array.from({ length: maxZoom + 2 }, (_, z) => createLevelSampler(grid, z));
const load = (await import("node:os")).loadavg()[0].toFixed(1);
const rows = [`overlays per lead, 1x z0..${maxZoom} against @2x by zoom (load average ${load})`];

const sumOne = { ms: 0 };
const sumTwo: number[] = [];
const sumQuarters: number[] = [];
for (const layer of ["isobars", "arrows"] as const) {
  // size 256: a 1x tile (or one @2x quarter, the earlier way); 512: a whole @2x tile, as the build draws it.
  const paint = (s: LevelSampler, x: number, y: number, out: Uint8Array, k: number, size = TILE_SIZE): TileBoxes => {
    const marks: TileBoxes = [];
    const px = size === TILE_SIZE ? rgba : rgba2x;
    if (layer === "isobars") {
      const step = Math.min(24, Math.max(3, Math.round(cellPx(s.z) / 1.5)));
      renderContours(s, x, y, f.msl, { interval: 400, label, step, scale: k }, px, marks, size);
    } else {
      const screenZ = s.z - Math.log2(k);
      const spacing = k * arrowSpacing(40, screenZ, cellPx(screenZ));
      renderArrows(s, x, y, f.u10, f.v10, { spacing, scale: k }, px, marks, size);
    }
    quantizeOverlay(px, out);
    return marks;
  };
  let oneMs = 0;
  let oneBytes = 0;
  const twoMs: number[] = [];
  const twoBytes: number[] = [];
  const quarterMs: number[] = [];
  for (let z = 0; z <= maxZoom; z++) {
    twoMs[z] = 0;
    twoBytes[z] = 0;
    quarterMs[z] = 0;
    for (let x = 0; x < 2 ** z; x++) {
      for (let y = 0; y < 2 ** z; y++) {
        let t = cpuMs();
        const marks = paint(samplers[z], x, y, idx, 1);
        if (!isUniform(idx) || marks.length) {
          const boxes = marks.length ? { boxes: marks } : {};
          oneBytes += encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, OVERLAY_PALETTE, { rows: "none", ...boxes }).length;
        }
        oneMs += cpuMs() - t;
        for (const way of ["whole", "quarters"] as const) {
          t = cpuMs();
          const marks2x: TileBoxes = [];
          const keep = (b: TileBoxes[number], dx: number, dy: number) => {
            const [x0, y0] = [b[0] + dx * TILE_SIZE, b[1] + dy * TILE_SIZE];
            const [x1, y1] = [b[2] + dx * TILE_SIZE, b[3] + dy * TILE_SIZE];
            marks2x.push([Math.floor(x0 / 2), Math.floor(y0 / 2), Math.ceil(x1 / 2), Math.ceil(y1 / 2)]);
          };
          if (way === "whole") {
            for (const b of paint(samplers[z + 1], x, y, big, 2, HIDPI_SIZE)) keep(b, 0, 0);
          } else {
            for (let q = 0; q < 4; q++) {
              const dx = q & 1;
              const dy = q >> 1;
              for (const b of paint(samplers[z + 1], 2 * x + dx, 2 * y + dy, idx, 2)) keep(b, dx, dy);
              for (let r = 0; r < TILE_SIZE; r++) {
                big.set(
                  idx.subarray(r * TILE_SIZE, (r + 1) * TILE_SIZE),
                  (dy * TILE_SIZE + r) * HIDPI_SIZE + dx * TILE_SIZE,
                );
              }
            }
          }
          let bytes = 0;
          if (!isUniform(big) || marks2x.length) {
            const boxes = marks2x.length ? { boxes: marks2x } : {};
            bytes = encodeIndexedPng(big, HIDPI_SIZE, HIDPI_SIZE, OVERLAY_PALETTE, { rows: "none", ...boxes }).length;
          }
          const ms = cpuMs() - t;
          if (way === "whole") {
            twoMs[z] += ms;
            twoBytes[z] += bytes;
          } else quarterMs[z] += ms;
        }
      }
    }
  }
  sumOne.ms += oneMs;
  twoMs.forEach((ms, z) => {
    sumTwo[z] = (sumTwo[z] ?? 0) + ms;
    sumQuarters[z] = (sumQuarters[z] ?? 0) + quarterMs[z];
  });
  rows.push(`${layer}: 1x z0..${maxZoom} ${(oneMs / 1000).toFixed(1)} s, ${(oneBytes / 1e6).toFixed(2)} MB`);
  let ms = 0;
  let bytes = 0;
  for (let z = 0; z <= maxZoom; z++) {
    ms += twoMs[z];
    bytes += twoBytes[z];
    rows.push(
      `  @2x up to z${z}: +${(ms / 1000).toFixed(1)} s, +${(bytes / 1e6).toFixed(2)} MB → time ×${(1 + ms / oneMs).toFixed(2)}, bytes ×${(1 + bytes / oneBytes).toFixed(2)}`,
    );
  }
}
let both = 0;
let bothQuarters = 0;
for (let z = 0; z <= maxZoom; z++) {
  both += sumTwo[z];
  bothQuarters += sumQuarters[z];
  rows.push(
    `both overlays, @2x up to z${z}: time ×${(1 + both / sumOne.ms).toFixed(2)} (drawn as four quarters: ×${(1 + bothQuarters / sumOne.ms).toFixed(2)})`,
  );
}
const top = buildHidpiMax(maxZoom);
rows.push(
  `the build's @2x overlays for --max-zoom ${maxZoom}: isobars up to z${overlayHidpiMax(top, "contours")}, arrows up to z${overlayHidpiMax(top, "arrows")}`,
);
console.log(rows.join("\n"));
