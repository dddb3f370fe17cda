// Unit conversion between the spellings real stores use and the registry's canonical units.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { converter, knownUnit, normaliseUnit } from "../../src/registry/units.ts";

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

describe("units", () => {
  test("temperature: every Celsius spelling → K, and back", () => {
    for (const u of ["degC", "°C", "degree_Celsius", "degrees_Celsius", "deg_C", "celsius"]) {
      const f = converter(u, "K");
      assert.ok(f, u);
      close(f(0), 273.15, u);
      close(f(-40), 233.15, u);
    }
    close(converter("K", "degC")!(300), 26.85, "K→degC");
    close(converter("degF", "K")!(32), 273.15, "degF");
  });
  test("pressure, water amounts and rates, speeds, fractions", () => {
    close(converter("hPa", "Pa")!(1013.25), 101325, "hPa");
    close(converter("mbar", "Pa")!(1000), 100000, "mbar");
    close(converter("kg m**-2", "m")!(5), 0.005, "kg m**-2 → m");
    close(converter("kg m-2", "m")!(5), 0.005, "kg m-2 → m");
    close(converter("mm", "m")!(12), 0.012, "mm → m");
    close(converter("kg m-2 s-1", "mm h-1")!(0.001), 3.6, "rate");
    close(converter("kg m**-2 s**-1", "mm/h")!(1), 3600, "rate spelled with **");
    for (const u of ["m s-1", "m/s", "m s**-1", "m s^-1", "M S-1"]) close(converter(u, "m s-1")!(7), 7, u);
    close(converter("knots", "m s-1")!(1), 0.514444444, "knots");
    close(converter("%", "1")!(55), 0.55, "% → 1");
    close(converter("1", "%")!(0.55), 55, "1 → %");
    close(converter("(0 - 1)", "1")!(0.3), 0.3, "(0 - 1)");
  });
  test("precipitation rates in any SI spelling convert to mm h-1; a speed stays a speed", () => {
    // A depth of water per second (the Met Office's lwe_precipitation_rate): 1e-6 m s-1 is 3.6 mm/h.
    for (const u of ["m s-1", "m/s", "m s**-1"]) close(converter(u, "mm h-1")!(1e-6), 3.6, u);
    close(converter("mm s-1", "mm h-1")!(0.001), 3.6, "mm s-1");
    close(converter("kg m-2 h-1", "mm h-1")!(2.5), 2.5, "kg m-2 h-1");
    close(converter("kg m-2 day-1", "mm h-1")!(24), 1, "kg m-2 day-1");
    close(converter("m h-1", "mm h-1")!(0.002), 2, "m h-1");
    close(converter("m s-1", "km h-1")!(10), 36, "a wind speed is no water rate");
    assert.equal(converter("km h-1", "mm h-1"), undefined);
  });
  test("units of different quantities or unknown spellings do not convert; equal spellings do", () => {
    assert.equal(converter("K", "Pa"), undefined);
    assert.equal(converter("m", "m s-1"), undefined);
    assert.equal(converter("furlongs", "%"), undefined);
    assert.equal(converter("furlongs", "furlongs")!(3), 3);
    assert.equal(knownUnit("furlongs"), false);
    assert.equal(knownUnit("kg m**-2"), true);
    assert.equal(normaliseUnit(" kg  m**-2 "), "kg m-2");
  });
});
