import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidParameterError } from "../../src/errors.ts";
import { VARIABLES } from "../../src/registry/variables.ts";
import { buildPalette, COLORMAPS, legendStops, PALETTE_COLORS } from "../../src/render/colormap.ts";

const t2m = { colormap: "thermal", min: 220, max: 320 };
const rain = { colormap: "precipitation", min: 0, max: 0.01, transparent_below: 0.00005 };

const rgbaAt = (rgba: Uint8Array, i: number) => [...rgba.subarray(i * 4, i * 4 + 4)];
const luminance = ([r, g, b]: number[]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;

describe("buildPalette", () => {
  it("reserves index 0 as fully transparent and fills 255 colours", () => {
    const { rgba } = buildPalette(t2m);
    assert.equal(rgba.length, 256 * 4);
    assert.equal(PALETTE_COLORS, 255);
    assert.deepEqual(rgbaAt(rgba, 0), [0, 0, 0, 0]);
    for (let i = 1; i <= 255; i++) assert.equal(rgba[i * 4 + 3], 255, `index ${i} opaque`);
  });

  it("maps NaN to 0 and clamps values outside the range", () => {
    const { lut } = buildPalette(t2m);
    assert.equal(lut(Number.NaN), 0);
    assert.equal(lut(220), 1);
    assert.equal(lut(100), 1);
    assert.equal(lut(320), 255);
    assert.equal(lut(1e9), 255);
    assert.equal(lut(Number.POSITIVE_INFINITY), 255);
  });

  it("splits [min, max] into 255 equal bins", () => {
    const { lut } = buildPalette(t2m);
    const width = (320 - 220) / 255;
    for (let k = 0; k < 255; k++) assert.equal(lut(220 + (k + 0.5) * width), k + 1, `bin ${k}`);
  });

  it("draws values at or below transparent_below transparent", () => {
    const { lut } = buildPalette(rain);
    assert.equal(lut(0), 0);
    assert.equal(lut(0.00005), 0);
    assert.equal(lut(-1), 0);
    assert.ok(lut(0.00006) >= 1);
    assert.equal(lut(0.02), 255);
  });

  it("gives ramps their intended look", () => {
    const thermal = buildPalette(t2m).rgba;
    const [r1, , b1] = rgbaAt(thermal, 1);
    const [r255, , b255] = rgbaAt(thermal, 255);
    assert.ok(b1 > r1, "cold end is blue/purple");
    assert.ok(r255 > b255, "hot end is red");

    const div = buildPalette({ colormap: "diverging", min: -30, max: 30 });
    const mid = rgbaAt(div.rgba, div.lut(0));
    assert.ok(
      mid.slice(0, 3).every((c) => c > 230),
      `zero is near white: ${mid}`,
    );
    assert.ok(rgbaAt(div.rgba, 1)[2] > rgbaAt(div.rgba, 1)[0], "negative is blue");
    assert.ok(rgbaAt(div.rgba, 255)[0] > rgbaAt(div.rgba, 255)[2], "positive is red");

    const precip = buildPalette(rain).rgba;
    assert.ok(luminance(rgbaAt(precip, 1)) > luminance(rgbaAt(precip, 128)));
    assert.ok(luminance(rgbaAt(precip, 128)) > luminance(rgbaAt(precip, 255)));

    const clouds = buildPalette({ colormap: "clouds", min: 0, max: 1 }).rgba;
    assert.ok(clouds[1 * 4 + 3] < 20, "clear sky nearly transparent");
    assert.ok(clouds[255 * 4 + 3] > 200, "overcast nearly opaque");
  });

  it("rejects unknown colormaps and empty ranges", () => {
    assert.throws(
      () => buildPalette({ colormap: "rainbow", min: 0, max: 1 }),
      (e: unknown) => e instanceof InvalidParameterError && Array.isArray(e.extensions.available),
    );
    assert.throws(() => buildPalette({ colormap: "thermal", min: 1, max: 1 }), InvalidParameterError);
  });

  it("has a ramp for every colormap the registry names", () => {
    for (const v of VARIABLES) if (v.style) assert.ok(COLORMAPS.includes(v.style.colormap), v.name);
  });
});

describe("legendStops", () => {
  it("spans min to max with the colours tiles show", () => {
    const stops = legendStops(t2m, 6);
    const { rgba, lut } = buildPalette(t2m);
    assert.deepEqual(
      stops.map((s) => s.value),
      [220, 240, 260, 280, 300, 320],
    );
    for (const s of stops) {
      const [r, g, b] = rgbaAt(rgba, lut(s.value));
      assert.equal(s.color, `#${[r, g, b].map((c) => c.toString(16).padStart(2, "0")).join("")}`);
      assert.match(s.color, /^#[0-9a-f]{6}$/);
      assert.equal(s.opacity, undefined);
    }
  });

  it("marks transparent and translucent stops with an opacity", () => {
    assert.equal(legendStops(rain, 3)[0].opacity, 0);
    const clouds = legendStops({ colormap: "clouds", min: 0, max: 1 }, 3);
    assert.ok(clouds[1].opacity! > 0 && clouds[1].opacity! < 1);
  });
});
