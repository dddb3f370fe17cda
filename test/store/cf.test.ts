// CF decoding: time units, calendars, timedeltas and packing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  base64Double,
  cfDecoding,
  decodeTimes,
  parseTimeUnits,
  unitMs,
  unpack,
  variableProblem,
} from "../../src/store/cf.ts";
import { jsonBytes } from "../../src/zarr-publish/zarr-json.ts";

const iso = (ms: number) => new Date(ms).toISOString();

describe("CF times", () => {
  test("hours and seconds since an epoch, with and without time and zone", () => {
    assert.deepEqual(decodeTimes([0, 12], "hours since 2026-11-20 00:00:00").map(iso), [
      "2026-11-20T00:00:00.000Z",
      "2026-11-20T12:00:00.000Z",
    ]);
    assert.equal(iso(decodeTimes([1763596800n], "seconds since 1970-01-01")[0]), "2025-11-20T00:00:00.000Z");
    assert.equal(iso(decodeTimes([1], "days since 2000-01-01T06:00Z")[0]), "2000-01-02T06:00:00.000Z");
    assert.equal(iso(decodeTimes([0], "hours since 2000-01-01 00:00:00 +02:00")[0]), "1999-12-31T22:00:00.000Z");
    assert.equal(parseTimeUnits("minutes since 2020-2-3").unitMs, 60_000);
  });
  test("model calendars count their own days", () => {
    // 360_day: 30 days after 2000-02-01 is 2000-03-01
    assert.equal(iso(decodeTimes([30], "days since 2000-02-01", "360_day")[0]), "2000-03-01T00:00:00.000Z");
    // noleap: 2000-02-28 + 1 day is 2000-03-01 (no 29 February)
    assert.equal(iso(decodeTimes([1], "days since 2000-02-28", "noleap")[0]), "2000-03-01T00:00:00.000Z");
    // all_leap: the model's 29 February 2001 has no real date; it is named as the day after 28 February
    assert.equal(iso(decodeTimes([1], "days since 2001-02-28", "all_leap")[0]), "2001-03-01T00:00:00.000Z");
    assert.equal(iso(decodeTimes([2], "days since 2001-02-28", "all_leap")[0]), "2001-03-01T00:00:00.000Z");
  });
  test("timedelta units and rejections", () => {
    assert.equal(unitMs("hours"), 3_600_000);
    assert.equal(unitMs("ns"), 1e-6);
    assert.throws(() => unitMs("fortnights"));
    assert.throws(() => parseTimeUnits("hours after 2000-01-01"));
  });
});

describe("CF decoding (xarray's rules)", () => {
  test("scale, offset and _FillValue → physical values and NaN; a v3 fill_value is not a marker", () => {
    const p = cfDecoding({ scale_factor: 0.5, add_offset: 10, _FillValue: -32767 }, "int16", 0, 3);
    assert.equal(unpack(4, p), 12);
    assert.ok(Number.isNaN(unpack(-32767, p)));
    assert.equal(unpack(0, p), 10);
  });
  test("v2: the array fill_value is the marker and replaces a _FillValue attribute", () => {
    const p = cfDecoding({ _FillValue: 5 }, "int16", -9999, 2);
    assert.ok(Number.isNaN(unpack(-9999, p)));
    assert.equal(unpack(5, p), 5);
    assert.equal(unpack(0, p), 0);
  });
  test("missing_value lists, NaN strings and base64 float fills, compared in float32", () => {
    const p = cfDecoding({ missing_value: [1e20, -1], _FillValue: "NaN" }, "float32", "NaN", 3);
    assert.ok(Number.isNaN(unpack(Math.fround(1e20), p)));
    assert.ok(Number.isNaN(unpack(-1, p)));
    assert.equal(unpack(3, p), 3);
    const b = cfDecoding({ _FillValue: base64Double(9.999e20) }, "float32", "NaN", 3);
    assert.equal(b.problem, undefined);
    assert.ok(Number.isNaN(unpack(Math.fround(9.999e20), b)));
    assert.equal(unpack(280, b), 280);
  });
  test("_Unsigned: signed bytes read unsigned before scaling, the _FillValue with them", () => {
    const p = cfDecoding({ _Unsigned: "true", _FillValue: -1, scale_factor: 2 }, "int8", 0, 3);
    assert.equal(unpack(-56, p), 400);
    assert.ok(Number.isNaN(unpack(-1, p)));
    const s = cfDecoding({ _Unsigned: "false" }, "uint16", 0, 3);
    assert.equal(unpack(65535, s), -1);
  });
  test("encodings gridcast does not understand are refused with the reason", () => {
    assert.match(cfDecoding({ _Unsigned: "maybe" }, "int8", 0, 3).problem ?? "", /_Unsigned "maybe"/);
    assert.match(cfDecoding({ scale_factor: "0.1" }, "int16", 0, 3).problem ?? "", /scale_factor/);
    assert.match(cfDecoding({ _FillValue: "lots" }, "float32", 0, 3).problem ?? "", /_FillValue "lots"/);
    assert.match(cfDecoding({ _FillValue: 1.5 }, "int16", 0, 3).problem ?? "", /whole number/);
    const dates = { units: "days since 2000-01-01" };
    assert.match(variableProblem(dates, cfDecoding(dates, "float32", "NaN", 3)) ?? "", /values dates/);
  });
  test("published markers above 2^53 stay floats for Python's JSON reader", () => {
    const text = new TextDecoder().decode(jsonBytes({ missing_value: [Math.fround(1e20), -1] }));
    assert.match(text, /1\.0000000200408773e\+20,/);
    assert.deepEqual(JSON.parse(text).missing_value, [Math.fround(1e20), -1]);
  });
});
