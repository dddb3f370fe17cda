// Overlay tiles before and after the cartographic rewrite, on the demo store's pressure and wind
// (latest run, first lead), every tile of z0..maxZoom, one core, in the same run:
// - before: the renderer at git revision BEFORE (hard-edged lines, bitmap digits, indexed PNG
//   with a four-colour palette), loaded from `git show` into a temporary module;
// - after: src/render/contours.ts and arrows.ts (anti-aliased RGBA, vector labels, H/L, speed-scaled arrows).
// The new tiles are measured twice: encoded as RGBA PNG, and quantised to the overlay palette
// (indexed PNG, what the build writes). Prints ms per tile (render + encode) and bytes per drawn tile; fully transparent tiles are one
// hard-linked file in a build, so they are counted apart.
//   node bench/overlays.ts [maxZoom=5] [--before=<git rev>]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { arrowSpacing, renderArrows } from "../src/render/arrows.ts";
import { finiteRange, prepareContourText } from "../src/render/contour-labels.ts";
import { renderContours } from "../src/render/contours.ts";
import { OVERLAY_BYTES } from "../src/render/overlay-paint.ts";
import { OVERLAY_PALETTE, quantizeOverlay } from "../src/render/overlay-palette.ts";
import { encodeIndexedPng, encodeRgbaPng } from "../src/render/png.ts";
import { createLevelSampler } from "../src/render/resample.ts";
import { TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { overlayFields } from "./lib.ts";

const ROOT = resolve(import.meta.dirname, "..");
const positional = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const maxZoom = Number(positional[0] ?? 5);
/** The last revision with the old overlay renderer. */
const BEFORE = process.argv.find((a) => a.startsWith("--before="))?.slice(9) ?? "304fa40^";

type Field = Float32Array | Float64Array;
interface OldOverlay {
  OVERLAY_RGBA: Uint8Array;
  renderArrows(
    s: unknown,
    x: number,
    y: number,
    u: Field,
    v: Field,
    o: { spacing: number },
    out: Uint8Array,
  ): Uint8Array;
  renderContours(
    s: unknown,
    x: number,
    y: number,
    f: Field,
    o: { interval: number; label: (v: number) => string },
    out: Uint8Array,
  ): Uint8Array;
}

async function oldOverlay(dir: string): Promise<OldOverlay> {
  const src = execFileSync("git", ["show", `${BEFORE}:src/render/overlay.ts`], { cwd: ROOT, encoding: "utf8" });
  const at = (p: string) => pathToFileURL(join(ROOT, "src/render", p)).href;
  const file = join(dir, "overlay-before.ts");
  writeFileSync(
    file,
    src.replace('"./resample.ts"', `"${at("resample.ts")}"`).replace('"./tiles.ts"', `"${at("tiles.ts")}"`),
  );
  return (await import(pathToFileURL(file).href)) as OldOverlay;
}

interface Tally {
  ms: number;
  tiles: number;
  drawn: number;
  bytes: number;
}

const dir = mkdtempSync(join(tmpdir(), "gridcast-bench-overlays-"));
try {
  const old = await oldOverlay(dir);
  const { grid, f } = await overlayFields();
  const label = (v: number) => String(Math.round(v / 100));
  await prepareContourText(...finiteRange(f.msl), { interval: 400, label });
  const cellPx = (z: number) => (grid.dlon / 360) * TILE_SIZE * 2 ** z;
  const idx = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const rgba = new Uint8Array(OVERLAY_BYTES);
  const rows: string[] = [];
  for (const layer of ["isobars", "arrows"] as const) {
    const before: Tally = { ms: 0, tiles: 0, drawn: 0, bytes: 0 };
    const after: Tally = { ms: 0, tiles: 0, drawn: 0, bytes: 0 };
    const quantised: Tally = { ms: 0, tiles: 0, drawn: 0, bytes: 0 };
    const zlib6: Tally = { ms: 0, tiles: 0, drawn: 0, bytes: 0 };
    let upRows = 0;
    for (let z = 0; z <= maxZoom; z++) {
      const s = createLevelSampler(grid, z);
      const step = Math.min(24, Math.max(3, Math.round(cellPx(z) / 1.5)));
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          let t = performance.now();
          if (layer === "isobars") old.renderContours(s, x, y, f.msl, { interval: 400, label }, idx);
          else old.renderArrows(s, x, y, f.u10, f.v10, { spacing: 40 }, idx);
          const a = isUniform(idx) ? null : encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, old.OVERLAY_RGBA);
          before.ms += performance.now() - t;
          before.tiles++;
          if (a) {
            before.drawn++;
            before.bytes += a.length;
          }
          t = performance.now();
          if (layer === "isobars") renderContours(s, x, y, f.msl, { interval: 400, label, step }, rgba);
          else renderArrows(s, x, y, f.u10, f.v10, { spacing: arrowSpacing(40, z, cellPx(z)) }, rgba);
          const drawnAt = performance.now() - t;
          const b = isUniform(rgba) ? null : encodeRgbaPng(rgba, TILE_SIZE, TILE_SIZE);
          after.ms += performance.now() - t;
          after.tiles++;
          if (b) {
            after.drawn++;
            after.bytes += b.length;
          }
          // What the build writes: the same RGBA quantised to the overlay palette, indexed PNG.
          t = performance.now();
          quantizeOverlay(rgba, idx);
          const c = isUniform(idx)
            ? null
            : encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, OVERLAY_PALETTE, { rows: "none" });
          quantised.ms += drawnAt + performance.now() - t;
          quantised.tiles++;
          if (c) {
            quantised.drawn++;
            quantised.bytes += c.length;
          }
          // The same with filter Up rows (the default for base layers) and zlib's default strategy
          // at level 6 (matches at any distance).
          t = performance.now();
          const d = isUniform(idx)
            ? null
            : encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, OVERLAY_PALETTE, { compression: 6 });
          zlib6.ms += drawnAt + performance.now() - t;
          const e = isUniform(idx) ? null : encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, OVERLAY_PALETTE);
          if (e) upRows += e.length;
          zlib6.tiles++;
          if (d) {
            zlib6.drawn++;
            zlib6.bytes += d.length;
          }
        }
      }
    }
    const per = (t: Tally) =>
      `${(t.ms / t.tiles).toFixed(2)} ms/tile, ${t.drawn} drawn tiles, ${(t.bytes / Math.max(1, t.drawn) / 1024).toFixed(1)} KiB/drawn tile, ${(t.bytes / 2 ** 20).toFixed(2)} MiB`;
    rows.push(`${layer} z0..${maxZoom} (${before.tiles} tiles)`);
    rows.push(`  before (${BEFORE}, indexed PNG): ${per(before)}`);
    rows.push(`  after, RGBA PNG:                 ${per(after)}`);
    rows.push(
      `  after, palette PNG, run-length:  ${per(quantised)} (rows unfiltered; as Up: ${(upRows / 2 ** 20).toFixed(2)} MiB)`,
    );
    rows.push(`  after, palette PNG, zlib 6, Up:  ${per(zlib6)}`);
    rows.push(
      `  after/before: RGBA time ×${(after.ms / before.ms).toFixed(2)} bytes ×${(after.bytes / before.bytes).toFixed(2)}; ` +
        `palette run-length time ×${(quantised.ms / before.ms).toFixed(2)} bytes ×${(quantised.bytes / before.bytes).toFixed(2)}; ` +
        `palette zlib 6 time ×${(zlib6.ms / before.ms).toFixed(2)} bytes ×${(zlib6.bytes / before.bytes).toFixed(2)}`,
    );
  }
  console.log(rows.join("\n"));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
