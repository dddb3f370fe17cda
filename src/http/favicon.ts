// The site icon: a 32×32 map tile in four temperature bands under a white graticule, with
// rounded corners. Drawn here (not a binary file in the repository) as an indexed PNG for
// /favicon.ico — browsers read a PNG at that path — and as SVG for the <link rel="icon"> tags.
import { encodeIndexedPng } from "../render/png.ts";

const SIZE = 32;
const BANDS = ["#2c7bb6", "#abd9e9", "#fdae61", "#d7191c"];
const GRID = [8, 16, 24];

function rgbaOf(hex: string): number[] {
  return [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).concat(255);
}

/** Inside the rounded square (corner radius 5). */
function inside(x: number, y: number): boolean {
  const r = 5;
  const cx = Math.min(Math.max(x + 0.5, r), SIZE - r);
  const cy = Math.min(Math.max(y + 0.5, r), SIZE - r);
  return (x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= r * r;
}

let png: Buffer | undefined;
export function faviconPng(): Buffer {
  if (png) return png;
  // 0 transparent, 1..4 the bands, 5 graticule white
  const palette = new Uint8Array([0, 0, 0, 0, ...BANDS.flatMap(rgbaOf), 255, 255, 255, 255]);
  const idx = new Uint8Array(SIZE * SIZE);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      if (!inside(x, y)) continue;
      idx[y * SIZE + x] = GRID.includes(x) || GRID.includes(y) ? 5 : 1 + Math.floor((y * BANDS.length) / SIZE);
    }
  }
  png = encodeIndexedPng(idx, SIZE, SIZE, palette);
  return png;
}

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<clipPath id="r"><rect width="32" height="32" rx="5"/></clipPath>
<g clip-path="url(#r)">${BANDS.map((c, i) => `<rect y="${i * 8}" width="32" height="8" fill="${c}"/>`).join("")}
<path d="M8.5 0v32M16.5 0v32M24.5 0v32M0 8.5h32M0 16.5h32M0 24.5h32" stroke="#fff"/></g>
</svg>
`;
