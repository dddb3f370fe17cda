// The EDR request texts parsed on their own: well-known text in each form EDR queries take (and
// every malformed one refused naming what is wrong), datetime instants and intervals, the circle's
// bounding box and the polygon test the area and radius queries keep nodes by.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { InvalidParameterError } from "../../../src/errors.ts";
import { parseDatetime, timeMatches } from "../../../src/forecast/edr/datetime.ts";
import { circleBox, greatCircleKm, inPolygons } from "../../../src/forecast/edr/geometry.ts";
import { parseWkt, polygonsOf, verticesOf, WKT_MAX_VERTICES } from "../../../src/forecast/edr/wkt.ts";

const ALL = ["POINT", "MULTIPOINT", "LINESTRING", "POLYGON", "MULTIPOLYGON"] as const;

describe("well-known text", () => {
  test("points, multipoints (both spellings), lines with Z, M and ZM, polygons with holes, multipolygons", () => {
    assert.deepEqual(verticesOf(parseWkt("POINT(10 20)", ALL)), [{ x: 10, y: 20 }]);
    assert.deepEqual(verticesOf(parseWkt(" point ( -10.5  20e0 ) ", ALL)), [{ x: -10.5, y: 20 }]);
    assert.deepEqual(verticesOf(parseWkt("POINT Z(10 20 850)", ALL)), [{ x: 10, y: 20, z: 850 }]);
    const two = [
      { x: 1, y: 2 },
      { x: 3, y: 4 },
    ];
    assert.deepEqual(verticesOf(parseWkt("MULTIPOINT((1 2),(3 4))", ALL)), two);
    assert.deepEqual(verticesOf(parseWkt("MULTIPOINT(1 2, 3 4)", ALL)), two);
    assert.deepEqual(verticesOf(parseWkt("LINESTRING M(1 2 100, 3 4 200)", ALL)), [
      { x: 1, y: 2, m: 100 },
      { x: 3, y: 4, m: 200 },
    ]);
    assert.deepEqual(verticesOf(parseWkt("LINESTRINGZM(1 2 500 100, 3 4 850 200)", ALL))[1], {
      x: 3,
      y: 4,
      z: 850,
      m: 200,
    });
    const holed = polygonsOf(parseWkt("POLYGON((0 0, 10 0, 10 10, 0 10, 0 0),(4 4, 6 4, 6 6, 4 4))", ALL));
    assert.equal(holed.length, 1);
    assert.equal(holed[0].length, 2);
    assert.equal(polygonsOf(parseWkt("MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))", ALL)).length, 2);
  });

  const bad: [string, RegExp][] = [
    ["POINT(abc def)", /"abc" is not a number/],
    ["POINT(10 20", /unclosed parenthesis/],
    ["POLYGON((0 0, 10 0, 10 10, 0 10))", /not closed/],
    ["POLYGON((0 0, 1 0, 0 0))", /at least 4 vertices/],
    ["LINESTRING(0 0, 1 x)", /"x" is not a number/],
    ["LINESTRING(0 0)", /at least 2 vertices/],
    ["POINT(1 2)(3 4)", /after the geometry/],
    ["POINT EMPTY", /holds no position/],
    ["POINT(1)", /2 or 3 numbers/],
    ["POINT M(1 2)", /3 numbers/],
    ["POINT(1 95)", /latitude 95/],
    ["POINT(0x10 2)", /not a number/],
    ["CIRCLE(1 2)", /expected well-known text/],
    ["MULTIPOINT((1 2) 3)", /unexpected "3"/],
    ["POINT()", /empty parentheses/],
  ];
  for (const [text, why] of bad) {
    test(`refuses ${text} naming coords`, () => {
      assert.throws(
        () => parseWkt(text, ALL),
        (e) => e instanceof InvalidParameterError && e.extensions.param === "coords" && why.test(e.message),
      );
    });
  }

  test("a query takes only its own kinds; a geometry is bounded in vertices", () => {
    assert.throws(() => parseWkt("POLYGON((0 0,1 0,1 1,0 0))", ["POINT", "MULTIPOINT"]), /takes POINT or MULTIPOINT/);
    const many = `MULTIPOINT(${Array.from({ length: WKT_MAX_VERTICES + 1 }, (_, i) => `${i % 300} 0`).join(",")})`;
    assert.throws(() => parseWkt(many, ALL), /more than 10000 vertices/);
  });
});

describe("datetime", () => {
  const t = Date.parse("2026-11-20T12:00:00Z");
  test("an instant matches itself only; a time without zone is UTC", () => {
    const f = parseDatetime("2026-11-20T12:00:00Z");
    assert.ok(timeMatches(f, t));
    assert.ok(!timeMatches(f, t + 1000));
    assert.ok(timeMatches(parseDatetime("2026-11-20T12:00"), t));
    assert.ok(timeMatches(parseDatetime("2026-11-20T13:00:00+01:00"), t));
  });
  test("closed and open intervals include their ends", () => {
    assert.ok(timeMatches(parseDatetime("2026-11-20T12:00:00Z/2026-11-20T13:00:00Z"), t));
    assert.ok(!timeMatches(parseDatetime("2026-11-20T12:00:01Z/.."), t));
    assert.ok(timeMatches(parseDatetime("../2026-11-20T12:00:00Z"), t));
    assert.ok(timeMatches(parseDatetime("2026-11-20T12:00:00Z/"), t));
  });
  for (const bad of ["yesterday", "../..", "2026-11-20/2026-11-19", "a/b/c", "2026-13-40T00:00:00Z"]) {
    test(`refuses ${bad} naming datetime`, () => {
      assert.throws(
        () => parseDatetime(bad),
        (e) => e instanceof InvalidParameterError && e.extensions.param === "datetime",
      );
    });
  }
});

describe("circle and polygon", () => {
  test("the circle's box holds every point within the distance, across the antimeridian and near a pole", () => {
    for (const [lat, lon, km] of [
      [45, 10, 500],
      [-20, 179, 800],
      [85, 0, 700],
      [0, -179.5, 100],
    ]) {
      const b = circleBox(lat, lon, km);
      for (let k = 0; k < 2000; k++) {
        const plat = lat + (Math.random() - 0.5) * 30;
        const plon = lon + (Math.random() - 0.5) * 60;
        if (plat > 90 || plat < -90 || greatCircleKm(lat, lon, plat, plon) > km) continue;
        assert.ok(plat >= b.latMin && plat <= b.latMax, `lat ${plat} in ${JSON.stringify(b)}`);
        const w = (((plon - b.lonMin) % 360) + 360) % 360;
        const span = (((b.lonMax - b.lonMin) % 360) + 360) % 360 || 360;
        assert.ok(w <= span + 1e-9, `lon ${plon} in ${JSON.stringify(b)}`);
      }
    }
    assert.ok(Math.abs(greatCircleKm(0, 0, 0, 1) - 111.195) < 0.01);
  });

  test("holes are left out; a polygon written in 0..360 meets nodes numbered -180..180", () => {
    const holed = polygonsOf(parseWkt("POLYGON((0 0, 10 0, 10 10, 0 10, 0 0),(4 4, 6 4, 6 6, 4 6, 4 4))", ALL));
    assert.ok(inPolygons(holed, 2, 2));
    assert.ok(!inPolygons(holed, 5, 5));
    assert.ok(!inPolygons(holed, 12, 5));
    const east = polygonsOf(parseWkt("POLYGON((350 0, 355 0, 355 5, 350 5, 350 0))", ALL));
    assert.ok(inPolygons(east, 2, -8));
  });
});
