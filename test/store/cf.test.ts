// CF decoding: time units, calendars, timedeltas and packing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeTimes, packingFrom, parseTimeUnits, unitMs, unpack } from "../../src/store/cf.ts";

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

describe("packing", () => {
  test("scale, offset and _FillValue → physical values and NaN", () => {
    const p = packingFrom({ scale_factor: 0.5, add_offset: 10, _FillValue: -32767 }, 0, false);
    assert.equal(unpack(4, p), 12);
    assert.ok(Number.isNaN(unpack(-32767, p)));
    // v3: the Zarr fill value 0 of an integer array is not a missing marker
    assert.equal(unpack(0, p), 10);
  });
  test("v2: the array fill_value doubles as _FillValue", () => {
    const p = packingFrom({}, -9999, true);
    assert.ok(Number.isNaN(unpack(-9999, p)));
    assert.equal(unpack(0, p), 0);
  });
  test("missing_value lists and string fill values", () => {
    const p = packingFrom({ missing_value: [1e20, -1], _FillValue: "NaN" }, null, false);
    assert.ok(Number.isNaN(unpack(1e20, p)));
    assert.ok(Number.isNaN(unpack(-1, p)));
    assert.ok(Number.isNaN(unpack(Number.NaN, p)));
    assert.equal(unpack(3, p), 3);
  });
});
