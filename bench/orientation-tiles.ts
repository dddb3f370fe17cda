// The orientation layer's 1x tiles z0..maxZoom on one core: label placement and line bucketing,
// then painting and RGBA encoding, with the renderer of the checkout at <repo> (this one by
// default), so two revisions can be compared in one session by running it on each in turn.
//   node bench/orientation-tiles.ts [repo=.] [maxZoom=6]
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(process.argv[2] ?? resolve(import.meta.dirname, ".."));
const maxZoom = Number(process.argv[3] ?? 6);
const o = await import(pathToFileURL(`${root}/src/render/orientation.ts`).href);
const png = await import(pathToFileURL(`${root}/src/render/png.ts`).href);
const rgba = new Uint8Array(256 * 256 * 4);
let layoutMs = 0;
let paintMs = 0;
let bytes = 0;
let encoded = 0;
let tiles = 0;
for (let z = 0; z <= maxZoom; z++) {
  let t = performance.now();
  const layout = await o.zoomLayout(z);
  layoutMs += performance.now() - t;
  t = performance.now();
  for (let x = 0; x < 2 ** z; x++) {
    for (let y = 0; y < 2 ** z; y++) {
      tiles++;
      if (o.paintOrientationTile(layout, x, y, rgba)) {
        bytes += png.encodeRgbaPng(rgba, 256, 256).length;
        encoded++;
      }
    }
  }
  paintMs += performance.now() - t;
}
const s = (ms: number) => +(ms / 1000).toFixed(1);
console.log(
  JSON.stringify({
    root,
    maxZoom,
    layoutS: s(layoutMs),
    paintS: s(paintMs),
    tiles,
    encoded,
    MB: +(bytes / 1e6).toFixed(2),
  }),
);
