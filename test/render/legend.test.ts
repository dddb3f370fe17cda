import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DERIVED_LAYERS } from "../../src/registry/derived.ts";
import { displayUnit, legendTicks, toDisplay } from "../../src/registry/display.ts";
import { type MapStyle, registry, type Temporal } from "../../src/registry/registry.ts";
import { buildPalette } from "../../src/render/colormap.ts";
import { intervalText, LEGEND_HEIGHT, LEGEND_WIDTH, legendJson, renderLegendPng } from "../../src/render/legend.ts";
import { decodeRgba, pixel } from "./decode.ts";

const rainStyle: MapStyle = { colormap: "precipitation", min: 0, max: 0.01, transparent_below: 0.00005 };
const hourly: Temporal = { kind: "accumulated", interval: "PT1H", interval_hours: 1 };

describe("renderLegendPng", () => {
  it("is a 256×16 ramp from min on the left to max on the right", async () => {
    const style: MapStyle = { colormap: "thermal", min: 220, max: 320 };
    const { rgba, lut } = buildPalette(style);
    const img = await decodeRgba(renderLegendPng(style));
    assert.deepEqual([img.width, img.height], [LEGEND_WIDTH, LEGEND_HEIGHT]);
    const colour = (v: number) => [...rgba.subarray(lut(v) * 4, lut(v) * 4 + 4)];
    assert.deepEqual(pixel(img.data, 0), colour(220.1));
    assert.deepEqual(pixel(img.data, LEGEND_WIDTH - 1), colour(319.9));
    assert.deepEqual(pixel(img.data, 128), colour(270.1));
    // Every row is the same ramp.
    const last = (LEGEND_HEIGHT - 1) * LEGEND_WIDTH;
    for (let x = 0; x < LEGEND_WIDTH; x++) assert.deepEqual(pixel(img.data, last + x), pixel(img.data, x));
  });

  it("leaves the transparent range transparent", async () => {
    const img = await decodeRgba(renderLegendPng(rainStyle));
    assert.equal(img.data[3], 0, "dry end is transparent");
    assert.equal(img.data[(LEGEND_WIDTH - 1) * 4 + 3], 255);
  });
});

describe("legendJson", () => {
  it("labels an accumulated variable with its interval", () => {
    const legend = legendJson({ units: "m", style: rainStyle, temporal: hourly, long_name: "Total precipitation" }, 5);
    assert.equal(legend.interval, "amount over the previous 1 h");
    assert.equal(legend.temporal, "accumulated");
    assert.deepEqual([legend.units, legend.min, legend.max, legend.transparent_below], ["m", 0, 0.01, 0.00005]);
    assert.equal(legend.colormap, "precipitation");
    assert.deepEqual(
      legend.stops.map((s) => s.value),
      [0, 0.0025, 0.005, 0.0075, 0.01],
    );
  });

  it("has no interval for instantaneous variables", () => {
    const legend = legendJson({
      units: "K",
      style: { colormap: "thermal", min: 220, max: 320 },
      temporal: { kind: "instantaneous" },
    });
    assert.equal(legend.interval, undefined);
    assert.equal(legend.transparent_below, undefined);
    assert.equal(legend.stops.length, 11);
  });

  it("states the interval length in hours", () => {
    assert.equal(
      intervalText({ kind: "accumulated", interval: "PT6H", interval_hours: 6 }),
      "amount over the previous 6 h",
    );
  });
});

describe("display units and ticks", () => {
  it("labels temperature in °C at the stepped ramp's edges, each where the legend's colour changes", async () => {
    const t2m = registry.resolve("t2m");
    const style = t2m.style!;
    const legend = legendJson({ units: t2m.units, style, temporal: t2m.temporal });
    assert.equal(legend.units, "K");
    assert.equal(legend.display_units, "°C");
    assert.ok(legend.ticks.length >= 4, `${legend.ticks.length} ticks`);
    const { data, width } = await decodeRgba(renderLegendPng(style));
    const { rgba, lut } = buildPalette(style);
    const colourOf = (kelvin: number) => [...rgba.subarray(lut(kelvin) * 4, lut(kelvin) * 4 + 4)];
    for (const tick of legend.ticks) {
      // Independently: °C back to K; the legend column left of the tick shows the colour of a value
      // just below the edge, the column right of it that of a value just above.
      const kelvin = tick.value + 273.15;
      const x = Math.round(tick.position * width);
      assert.deepEqual(pixel(data, x - 1), colourOf(kelvin - 0.01), `left of ${tick.label}`);
      assert.deepEqual(pixel(data, x), colourOf(kelvin + 0.01), `right of ${tick.label}`);
      assert.notDeepEqual(colourOf(kelvin - 0.01), colourOf(kelvin + 0.01), `a step at ${tick.label}`);
    }
    assert.ok(legend.ticks.some((t) => t.label === "0"));
    assert.deepEqual(
      legend.units_options.map((u) => u.units),
      ["°C", "°F"],
    );
    const f = legend.units_options[1];
    const freezing = f.ticks.find((t) => t.value === 32);
    assert.ok(freezing, "0 °C labelled 32 °F");
    assert.ok(Math.abs(freezing.position - legend.ticks.find((t) => t.value === 0)!.position) < 1e-6);
  });

  it("labels wind speed in km/h and knots with round numbers, each over the colour of its value", async () => {
    const speed = DERIVED_LAYERS.find((l) => l.name === "wind_speed")!;
    const legend = legendJson({ units: speed.units, style: speed.style, temporal: speed.temporal as Temporal });
    const { data, width } = await decodeRgba(renderLegendPng(speed.style));
    const { rgba, lut } = buildPalette(speed.style);
    const colourOf = (ms: number) => [...rgba.subarray(lut(ms) * 4, lut(ms) * 4 + 4)];
    for (const unit of ["km/h", "kn"]) {
      const option = legend.units_options.find((u) => u.units === unit)!;
      const values = option.ticks.map((t) => t.value);
      assert.ok(values.length >= 5, `${unit}: ${values.join(" ")}`);
      // Round: whole numbers, and from 10 up whole tens (not 5.8/19.8/38.9 km/h).
      assert.ok(
        values.every((v) => Number.isInteger(v) && (v < 10 || v % 10 === 0)),
        `${unit}: ${values.join(" ")}`,
      );
      const positions = option.ticks.map((t) => t.position);
      assert.deepEqual(
        positions,
        positions.toSorted((a, b) => a - b),
        `${unit} in order`,
      );
      for (const t of option.ticks) {
        const ms = (t.value - option.offset) / option.scale;
        assert.deepEqual(
          pixel(data, Math.floor(t.position * width)),
          colourOf(ms),
          `${t.label} ${unit} over its colour`,
        );
      }
    }
    assert.deepEqual(
      legend.units_options.find((u) => u.units === "km/h")!.ticks.map((t) => t.value),
      [6, 20, 40, 60, 90, 120],
    );
  });

  it("shows pressure in hPa, rain in mm and cloud cover in %", () => {
    const labels = (name: string) => {
      const e = registry.resolve(name);
      const l = legendJson({ units: e.units, style: e.style!, temporal: e.temporal });
      return [l.display_units, l.ticks.map((t) => t.label)];
    };
    assert.deepEqual(labels("msl"), ["hPa", ["980", "1000", "1020"]]);
    assert.deepEqual(labels("tp_1h"), ["mm", ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]]);
    assert.deepEqual(labels("tcc"), ["%", ["20", "40", "60", "80"]]);
  });

  it("keeps canonical units when a style names no display unit", () => {
    const style: MapStyle = { colormap: "thermal", min: 0, max: 1 };
    const unit = displayUnit(style, "kg m-2");
    assert.deepEqual(unit, { units: "kg m-2", scale: 1, offset: 0 });
    assert.equal(toDisplay({ units: "°C", scale: 1, offset: -273.15 }, 273.15), 0);
    assert.deepEqual(
      legendTicks(style, unit).map((t) => t.label),
      ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"],
    );
  });
});
