// What keeping the big places' names against the weather costs a build (issue 56): the one-off
// placement of the kept names per render thread (every zoom, 1x and @2x lattices), and the arrow
// and isobar pyramids of one lead over the demo fields drawn without the names and with them, in
// the same run, alternately, with the ratio. CPU time of this one thread (process.cpuUsage), so the
// ratios hold under load; the load average is printed beside.
// usage: node bench/label-rank.ts [maxZoom=5] [--rounds 2]
import { arrowSpacing, renderArrows } from "../src/render/arrows.ts";
import { finiteRange, prepareContourText } from "../src/render/contour-labels.ts";
import { renderContours } from "../src/render/contours.ts";
import { KeptNames } from "../src/render/label-rank.ts";
import { OVERLAY_BYTES } from "../src/render/overlay-paint.ts";
import type { TileBoxes } from "../src/render/png.ts";
import { createLevelSampler } from "../src/render/resample.ts";
import { TILE_SIZE } from "../src/render/tiles.ts";
import { overlayFields } from "./lib.ts";

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const args = process.argv.slice(2);
const maxZoom = Number(args.find((a) => !a.startsWith("--")) ?? 5);
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? 2) || 2;
const { grid, f } = await overlayFields();
const label = (v: number) => String(Math.round(v / 100));
await prepareContourText(...finiteRange(f.msl), { interval: 400, label }, [1]);
const cellPx = (z: number) => (grid.dlon / 360) * TILE_SIZE * 2 ** z;
const samplers = Array.from({ length: maxZoom + 1 }, (_, z) => createLevelSampler(grid, z));
const rgba = new Uint8Array(OVERLAY_BYTES);
const load = (await import("node:os")).loadavg()[0].toFixed(1);

// The one-off: what each render thread does once before its first arrow or isobar lead.
const t0 = performance.now();
const c0 = cpuMs();
const names: KeptNames[] = [];
for (let z = 0; z <= maxZoom; z++) {
  names.push(await KeptNames.of(z, 1));
  await KeptNames.of(z, 2);
}
const placeWall = performance.now() - t0;
const placeCpu = cpuMs() - c0;

function pyramid(kind: "arrows" | "isobars", keep: boolean): { ms: number; marks: number } {
  let marks = 0;
  const c = cpuMs();
  for (let z = 0; z <= maxZoom; z++) {
    const s = samplers[z];
    const n = 2 ** z;
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        const boxes: TileBoxes = [];
        const k = keep ? names[z] : undefined;
        if (kind === "arrows") {
          const spacing = arrowSpacing(40, z, cellPx(z));
          renderArrows(s, x, y, f.u10, f.v10, { spacing, keep: k }, rgba, boxes);
        } else {
          const step = Math.min(24, Math.max(3, Math.round(cellPx(z) / 1.5)));
          renderContours(s, x, y, f.msl, { interval: 400, label, step, keep: k }, rgba, boxes);
        }
        marks += boxes.length;
      }
    }
  }
  return { ms: cpuMs() - c, marks };
}

const rows = [
  `kept names, z0..${maxZoom}, one lead of the demo fields (load average ${load}, ${rounds} rounds, medians)`,
  `one-off placement of the kept names (1x and @2x lattices, z0..${maxZoom}): ${(placeWall / 1000).toFixed(1)} s wall, ${(placeCpu / 1000).toFixed(1)} s CPU`,
  "| layer | without the names | with them | ratio | marks without → with |",
  "| --- | --- | --- | --- | --- |",
];
const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[xs.length >> 1];
for (const kind of ["arrows", "isobars"] as const) {
  const off: number[] = [];
  const on: number[] = [];
  let marks = [0, 0];
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first.
    const order = r % 2 ? [true, false] : [false, true];
    for (const keep of order) {
      const got = pyramid(kind, keep);
      (keep ? on : off).push(got.ms);
      marks[keep ? 1 : 0] = got.marks;
    }
  }
  const a = median(off);
  const b = median(on);
  rows.push(
    `| ${kind} | ${(a / 1000).toFixed(2)} s | ${(b / 1000).toFixed(2)} s | ${(b / a).toFixed(3)} | ${marks[0]} → ${marks[1]} |`,
  );
  marks = [0, 0];
}
console.log(rows.join("\n"));
