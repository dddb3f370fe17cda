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

describe("stepped ramps", () => {
  const celsius = { units: "°C", scale: 1, offset: -273.15 };
  const temperature = { colormap: "thermal", min: 223.15, max: 323.15, display: celsius };
  const mm = {
    colormap: "precipitation",
    min: 0,
    max: 0.05,
    transparent_below: 0.0001,
    display: { units: "mm", scale: 1000, offset: 0 },
  };
  const colour = (p: ReturnType<typeof buildPalette>, v: number) => rgbaAt(p.rgba, p.lut(v)).join(",");

  it("gives temperature a class per degree between −20 and +35 °C and wider ones outside", () => {
    const p = buildPalette(temperature);
    assert.ok(p.steps, "stepped");
    for (let c = -20; c < 35; c++) {
      assert.notEqual(colour(p, c + 273.15 + 0.25), colour(p, c + 1 + 273.15 + 0.25), `${c} vs ${c + 1} °C`);
      assert.equal(colour(p, c + 273.15 + 0.1), colour(p, c + 273.15 + 0.9), `one class over ${c}..${c + 1} °C`);
    }
    assert.equal(colour(p, 273.15 - 33), colour(p, 273.15 - 31), "−33 and −31 °C share a 5 °C class");
    // +5 and +10 °C in clearly different colours (not two shades of one).
    const [a, b] = [rgbaAt(p.rgba, p.lut(278.15)), rgbaAt(p.rgba, p.lut(283.15))];
    assert.ok(Math.abs(a[0] - b[0]) + Math.abs(a[1] - b[1]) + Math.abs(a[2] - b[2]) > 60, `${a} vs ${b}`);
  });

  it("draws precipitation from 0.1 mm in non-linear classes", () => {
    const p = buildPalette(mm);
    assert.equal(p.lut(0), 0);
    assert.equal(p.lut(0.0001), 0, "0.1 mm itself is the transparent edge");
    assert.ok(p.lut(0.00011) > 0);
    const edges = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50];
    for (let k = 1; k < edges.length - 1; k++) {
      const e = edges[k] / 1000;
      const next = edges[k + 1] / 1000;
      assert.notEqual(colour(p, e * 0.99), colour(p, e * 1.01), `a step at ${edges[k]} mm`);
      assert.equal(colour(p, e * 1.01), colour(p, next * 0.99), `one class from ${edges[k]} to ${edges[k + 1]} mm`);
    }
  });

  it("maps a field onto the class axis with the same index arithmetic the renderers inline", () => {
    for (const style of [
      temperature,
      mm,
      { colormap: "wind", min: 0, max: 40, display: { units: "m/s", scale: 1, offset: 0 } },
    ]) {
      const p = buildPalette(style);
      for (let i = 0; i <= 200; i++) {
        const v = style.min + ((style.max - style.min) * i) / 200;
        const t = p.toAxis!(v);
        const inline = !(t > p.below) ? 0 : Math.min(PALETTE_COLORS, Math.max(1, (t * p.scale + p.offset) | 0));
        assert.equal(inline, p.lut(v), `${style.colormap} ${v}`);
      }
    }
  });

  it("keeps the smooth ramp for a style in other units than the scale's", () => {
    const p = buildPalette({ colormap: "thermal", min: 0, max: 1, display: { units: "K", scale: 1, offset: 0 } });
    assert.equal(p.steps, undefined);
  });
});
