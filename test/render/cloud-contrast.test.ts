// Low cloud cover is seen on the map: a tile rendered from a field of clear sky beside 20 % cover,
// composited over the viewer's land fill, shows the two at least ΔE 10 apart (CIE76: Euclidean
// distance in CIE L*a*b*, D65), and 20 % is not drawn as overcast. The land colour is read from the
// viewer's source, so a change of either side is measured.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { VARIABLES } from "../../src/registry/variables.ts";
import { buildPalette, onAxis } from "../../src/render/colormap.ts";
import { encodeIndexedPng } from "../../src/render/png.ts";
import { createLevelSampler } from "../../src/render/resample.ts";
import { TILE_SIZE } from "../../src/render/tiles.ts";
import { decodeRgba, pixel } from "./decode.ts";

type Rgb = [number, number, number];

/** sRGB (0–255) to CIE L*a*b* under D65. */
function lab([r, g, b]: Rgb): Rgb {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const X = (0.4124 * R + 0.3576 * G + 0.1805 * B) / 0.95047;
  const Y = 0.2126 * R + 0.7152 * G + 0.0722 * B;
  const Z = (0.0193 * R + 0.1192 * G + 0.9505 * B) / 1.08883;
  const f = (t: number) => (t > (6 / 29) ** 3 ? Math.cbrt(t) : t / (3 * (6 / 29) ** 2) + 4 / 29);
  return [116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))];
}

const deltaE76 = (p: Rgb, q: Rgb) => {
  const [a, b] = [lab(p), lab(q)];
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
};

/** The viewer's land fill, from its source. */
function landFill(): Rgb {
  const src = readFileSync(new URL("../../web/viewer.js", import.meta.url), "utf8");
  const m = /fillColor: "#([0-9a-f]{6})"/i.exec(src);
  assert.ok(m, "the viewer names its land fill");
  return [0, 2, 4].map((k) => Number.parseInt(m[1].slice(k, k + 2), 16)) as Rgb;
}

/** A pixel over the land: its alpha blended onto the fill, as the browser draws the tile. */
const over = ([r, g, b, a]: number[], land: Rgb): Rgb =>
  [r, g, b].map((c, k) => Math.round((c * a + land[k] * (255 - a)) / 255)) as Rgb;

describe("cloud cover over land", () => {
  test("0 % and 20 % cover are at least ΔE 10 apart (CIE76), 20 % and overcast too", async () => {
    const tcc = VARIABLES.find((v) => v.name === "tcc")!;
    const palette = buildPalette(tcc.style!);
    // A 1° global grid: clear west of 0°, 20 % from 0° to 90° E, overcast beyond.
    const lat = Float64Array.from({ length: 181 }, (_, i) => -90 + i);
    const lon = Float64Array.from({ length: 360 }, (_, i) => -180 + i);
    const cover = (l: number) => (l < 0 ? 0 : l < 90 ? 0.2 : 1);
    const field = new Float32Array(lat.length * lon.length);
    for (let i = 0; i < lat.length; i++) for (let j = 0; j < lon.length; j++) field[i * lon.length + j] = cover(lon[j]);
    const sampler = createLevelSampler({ lat, lon }, 2);
    const axis = onAxis(palette, field);
    const tileAt = async (x: number) =>
      decodeRgba(
        encodeIndexedPng(
          sampler.renderTile(x, 1, axis, palette, undefined, tcc.style!.resample),
          TILE_SIZE,
          TILE_SIZE,
          palette.rgba,
        ),
      );
    // Zoom 2 tiles 1, 2 and 3 span 90° W..0°, 0..90° E and 90..180° E: read their middles.
    const [west, east, far] = await Promise.all([1, 2, 3].map(tileAt));
    const mid = (TILE_SIZE / 2) * TILE_SIZE + TILE_SIZE / 2;
    const land = landFill();
    const clear = over(pixel(west.data, mid), land);
    const thin = over(pixel(east.data, mid), land);
    const overcast = over(pixel(far.data, mid), land);
    assert.deepEqual(clear, land, "clear sky leaves the land as it is");
    const dThin = deltaE76(clear, thin);
    assert.ok(dThin >= 10, `0 % ${clear} vs 20 % ${thin}: ΔE76 ${dThin.toFixed(1)}`);
    const dOver = deltaE76(thin, overcast);
    assert.ok(dOver >= 10, `20 % ${thin} vs overcast ${overcast}: ΔE76 ${dOver.toFixed(1)}`);
    console.log(`ΔE76 over land: 0→20 % ${dThin.toFixed(1)}, 20 %→100 % ${dOver.toFixed(1)}`);
  });
});
