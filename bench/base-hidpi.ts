// What the base layers' @2x tiles cost per lead, as the build draws them: the demo store's global
// t2m and tp_1h (second lead) through their stepped ramps, bilinear, the 1x pyramid z0..max
// against the @2x tiles below the top (each the four tiles of the next zoom in one 512 px image)
// and at the top (sampled one zoom past the pyramid). One-colour tiles are encoded once per colour,
// as the build hard-links them. CPU time of this one thread (process.cpuUsage), so the ratios hold
// under load; the load average is printed beside them.
// usage: node bench/base-hidpi.ts [maxZoom=7]
import { loadavg } from "node:os";
import { latestRun } from "../src/forecast/select.ts";
import { registry } from "../src/registry/registry.ts";
import { buildPalette, onAxis } from "../src/render/colormap.ts";
import { encodeIndexedPng } from "../src/render/png.ts";
import { createLevelSampler } from "../src/render/resample.ts";
import { HIDPI_SIZE, TILE_SIZE } from "../src/render/tiles.ts";
import { isUniform } from "../src/render/uniform.ts";
import { Store } from "../src/store/store.ts";
import { benchStore } from "./lib.ts";

const maxZoom = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 7);
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const store = new Store(await benchStore("demo"));
const group = await store.forecastGroup("forecast/global");
const run = latestRun(group);
const samplers = Array.from({ length: maxZoom + 2 }, (_, z) => createLevelSampler(group.grid, z));
const rows = [`base layers per lead, demo global grid, z0..${maxZoom} (load average ${loadavg()[0].toFixed(1)})`];
const idx = new Uint8Array(TILE_SIZE * TILE_SIZE);
const quarter = new Uint8Array(TILE_SIZE * TILE_SIZE);
const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE);
const total = { one: 0, below: 0, top: 0 };

for (const name of ["t2m", "tp_1h"]) {
  const v = group.variables.get(name)!;
  const region = v.roles.map((r, d): [number, number] => {
    if (r === "time") return [run, run + 1];
    if (r === "lead") return [1, 2];
    return r === "lat" || r === "lon" ? [0, v.array.shape[d]] : [0, 1];
  });
  const palette = buildPalette(registry.resolve(name).style!);
  const field = onAxis(palette, Float32Array.from(await v.array.read(region)));
  const one = { ms: 0, bytes: 0 };
  const two = Array.from({ length: maxZoom + 1 }, () => ({ ms: 0, bytes: 0 }));
  const seen1 = new Set<number>();
  const seen2 = new Set<number>();
  for (let z = 0; z <= maxZoom; z++) {
    for (let x = 0; x < 2 ** z; x++) {
      for (let y = 0; y < 2 ** z; y++) {
        let t = cpuMs();
        samplers[z].renderTile(x, y, field, palette, idx, "bilinear");
        if (!isUniform(idx) || !seen1.has(idx[0])) {
          if (isUniform(idx)) seen1.add(idx[0]);
          one.bytes += encodeIndexedPng(idx, TILE_SIZE, TILE_SIZE, palette.rgba).length;
        }
        one.ms += cpuMs() - t;
        t = cpuMs();
        for (let q = 0; q < 4; q++) {
          const [dx, dy] = [q & 1, q >> 1];
          samplers[z + 1].renderTile(2 * x + dx, 2 * y + dy, field, palette, quarter, "bilinear");
          for (let r = 0; r < TILE_SIZE; r++) {
            big.set(
              quarter.subarray(r * TILE_SIZE, (r + 1) * TILE_SIZE),
              (dy * TILE_SIZE + r) * HIDPI_SIZE + dx * TILE_SIZE,
            );
          }
        }
        if (!isUniform(big) || !seen2.has(big[0])) {
          if (isUniform(big)) seen2.add(big[0]);
          two[z].bytes += encodeIndexedPng(big, HIDPI_SIZE, HIDPI_SIZE, palette.rgba).length;
        }
        two[z].ms += cpuMs() - t;
      }
    }
  }
  const below = two.slice(0, maxZoom).reduce((a, b) => ({ ms: a.ms + b.ms, bytes: a.bytes + b.bytes }));
  const top = two[maxZoom];
  total.one += one.ms;
  total.below += below.ms;
  total.top += top.ms;
  const mb = (b: number) => (b / 1e6).toFixed(1);
  rows.push(`${name}: 1x z0..${maxZoom} ${(one.ms / 1000).toFixed(1)} s CPU, ${mb(one.bytes)} MB`);
  rows.push(
    `  @2x z0..${maxZoom - 1} (before): +${(below.ms / 1000).toFixed(1)} s, +${mb(below.bytes)} MB → time ×${(1 + below.ms / one.ms).toFixed(2)}, bytes ×${(1 + below.bytes / one.bytes).toFixed(2)}`,
  );
  rows.push(
    `  @2x z0..${maxZoom} (with the top): +${((below.ms + top.ms) / 1000).toFixed(1)} s, +${mb(below.bytes + top.bytes)} MB → time ×${(1 + (below.ms + top.ms) / one.ms).toFixed(2)}, bytes ×${(1 + (below.bytes + top.bytes) / one.bytes).toFixed(2)}`,
  );
}
rows.push(
  `both: time ×${(1 + total.below / total.one).toFixed(2)} with @2x to z${maxZoom - 1}, ×${(1 + (total.below + total.top) / total.one).toFixed(2)} with @2x to z${maxZoom}; the top's @2x alone ×${(total.top / total.one).toFixed(2)} of the 1x pyramid`,
);
console.log(rows.join("\n"));
