// Variable registry: aliases from the names real stores use, and helpful errors for unknown ones.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { UnknownVariableError } from "../../src/errors.ts";
import { Registry, registry } from "../../src/registry/registry.ts";

describe("registry", () => {
  test("the spec's aliases and common spellings resolve to canonical names", () => {
    const cases: [string, string][] = [
      ["2t", "t2m"],
      ["u10m", "u10"],
      ["scaled_tp_1h", "tp_1h"],
      ["10u", "u10"],
      ["10v", "v10"],
      ["msl", "msl"],
      ["2m_temperature", "t2m"],
      ["10m_u_component_of_wind", "u10"],
      ["mean_sea_level_pressure", "msl"],
      ["total_precipitation_1hr", "tp_1h"],
      ["total_precipitation_6hr", "tp_6h"],
      ["temperature_2m", "t2m"],
      ["wind_u_10m", "u10"],
      ["precipitation_surface", "prate"],
      ["tp", "tp"],
      ["total_precipitation", "tp"],
      ["TOT_PREC", "tp"],
      ["r2", "r2"],
      ["relative_humidity_2m", "r2"],
      ["RELHUM_2M", "r2"],
      ["sp", "sp"],
      ["pressure_surface", "sp"],
      ["d2m", "d2m"],
      ["2d", "d2m"],
      ["gust", "gust"],
      ["10fg", "fg10"],
      ["U_10M", "u10"],
      ["V_10M", "v10"],
      ["PMSL", "msl"],
      ["prmsl", "msl"],
      ["CLCT", "tcc"],
      ["T_2M", "t2m"],
      ["total_precipitation_24hr", "tp_24h"],
      [" T2M ", "t2m"],
    ];
    for (const [alias, canonical] of cases) assert.equal(registry.resolve(alias).name, canonical, alias);
  });
  test("accumulations say so; instantaneous values too", () => {
    assert.deepEqual(registry.resolve("tp_1h").temporal, {
      kind: "accumulated",
      window: "fixed",
      interval: "PT1H",
      interval_hours: 1,
    });
    assert.equal(registry.resolve("t2m").temporal.kind, "instantaneous");
    assert.deepEqual(registry.resolve("tp").temporal, { kind: "accumulated", window: "since_start" });
    assert.deepEqual(registry.resolve("precipitation_surface").temporal, { kind: "mean", window: "previous_step" });
    assert.deepEqual(registry.resolve("10fg").temporal, { kind: "maximum", window: "previous_step" });
  });
  test("an unknown name is an error listing the closest registered names", () => {
    try {
      registry.resolve("2tm");
      assert.fail("should throw");
    } catch (e) {
      assert.ok(e instanceof UnknownVariableError);
      const s = e.extensions.suggestions as string[];
      assert.ok(s.includes("2t") || s.includes("t2m"), s.join());
      assert.equal(e.extensions.param, "var");
    }
  });
  test("a registry where two entries claim one name is refused", () => {
    const t = { kind: "instantaneous" } as const;
    assert.throws(
      () =>
        new Registry([
          { name: "a", long_name: "", units: "", aliases: ["x"], temporal: t },
          { name: "b", long_name: "", units: "", aliases: ["x"], temporal: t },
        ]),
      /names both a and b/,
    );
  });
});
