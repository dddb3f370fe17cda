import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MapStyle, Temporal } from "../../src/registry/registry.ts";
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
