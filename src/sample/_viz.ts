import sharp from "sharp";
import { Store } from "../store/store.ts";

const [dir, group, name, run, lead, lev] = process.argv.slice(2);
const s = new Store(dir);
const g = await s.forecastGroup(group);
const v = g.variables.get(name)!;
const ny = g.grid.lat.length,
  nx = g.grid.lon.length;
const region: [number, number][] = v.roles.map((r, d) =>
  r === "time"
    ? [+run, +run + 1]
    : r === "lead"
      ? [+lead, +lead + 1]
      : r === "level"
        ? [+(lev ?? 0), +(lev ?? 0) + 1]
        : [0, v.array.shape[d]],
);
const a = await v.array.read(region);
let mn = Infinity,
  mx = -Infinity;
for (const x of a)
  if (!Number.isNaN(x)) {
    mn = Math.min(mn, x);
    mx = Math.max(mx, x);
  }
const scale = Math.max(1, Math.round(720 / nx));
const img = Buffer.alloc(ny * nx * scale * scale * 3);
for (let i = 0; i < ny * scale; i++)
  for (let j = 0; j < nx * scale; j++) {
    const x = a[Math.floor(i / scale) * nx + Math.floor(j / scale)];
    const t = Number.isNaN(x) ? -1 : (x - mn) / (mx - mn || 1);
    const o = (i * nx * scale + j) * 3;
    if (t < 0) {
      img[o] = 255;
      img[o + 1] = 0;
      img[o + 2] = 255;
      continue;
    }
    img[o] = Math.round(255 * Math.min(1, Math.max(0, 1.5 - Math.abs(4 * t - 3))));
    img[o + 1] = Math.round(255 * Math.min(1, Math.max(0, 1.5 - Math.abs(4 * t - 2))));
    img[o + 2] = Math.round(255 * Math.min(1, Math.max(0, 1.5 - Math.abs(4 * t - 1))));
  }
await sharp(img, { raw: { width: nx * scale, height: ny * scale, channels: 3 } })
  .flip(g.grid.latAscending)
  .png()
  .toFile(`/tmp/viz-${group.replace("/", "_")}-${name}-${run}-${lead}.png`);
console.log(name, mn, mx);
