import assert from "node:assert/strict";
import { describe, test } from "node:test";
import proj4 from "proj4";
import { tileGeometry, tileNameAt } from "../../src/embeddings/mgrs.ts";
import { InvalidParameterError } from "../../src/errors.ts";
import { Rng } from "../../src/sample/noise.ts";

/** The point's UTM position lies in the square and its lon/lat lies in the bbox. */
function assertInside(lon: number, lat: number): string {
  const name = tileNameAt(lon, lat);
  const g = tileGeometry(name);
  const [e, n] = proj4("WGS84", g.proj).forward([lon, lat]);
  const where = `${lon},${lat} -> ${name} origin ${g.origin.easting},${g.origin.northing}`;
  assert.ok(e >= g.origin.easting - 1e-6 && e < g.origin.easting + g.size_m, `easting ${e}: ${where}`);
  assert.ok(n >= g.origin.northing - 1e-6 && n < g.origin.northing + g.size_m, `northing ${n}: ${where}`);
  const [w, s, east, north] = g.bbox;
  assert.ok(lat >= s - 1e-9 && lat <= north + 1e-9, `lat outside bbox: ${where}`);
  const inLon = w <= east ? lon >= w - 1e-9 && lon <= east + 1e-9 : lon >= w - 1e-9 || lon <= east + 1e-9;
  assert.ok(inLon, `lon outside bbox ${g.bbox}: ${where}`);
  return name;
}

describe("tileNameAt", () => {
  test("names the 100 km square with the zone token first", () => {
    assert.equal(tileNameAt(11.5, 48.1), "32UPU");
    assert.match(tileNameAt(-74, 40.7), /^18T[A-Z]{2}$/);
  });

  test("the two sides of a zone boundary fall in different zones", () => {
    assert.equal(tileNameAt(5.99, 47), "31TGN");
    assert.equal(tileNameAt(6.01, 47), "32TKT");
    assert.match(tileNameAt(11.99, 48.1), /^32U/);
    assert.match(tileNameAt(12.01, 48.1), /^33U/);
  });

  test("Norway's zone 32V reaches west to 3°E; Svalbard uses only odd X zones", () => {
    assert.match(tileNameAt(5.3, 60.4), /^32V/);
    assert.match(tileNameAt(2.9, 60.4), /^31V/);
    assert.match(tileNameAt(8, 78), /^31X/);
    assert.match(tileNameAt(15.6, 78.2), /^33X/);
    assert.match(tileNameAt(25, 79), /^35X/);
    assert.match(tileNameAt(38, 80), /^37X/);
  });

  test("the equator belongs to band N, just south of it to band M", () => {
    assert.match(tileNameAt(37, 0), /^37N/);
    assert.match(tileNameAt(37, -0.01), /^37M/);
  });

  test("latitudes outside -80..84 are a parameter error on lat", () => {
    for (const lat of [84.01, -80.01, 90, Number.NaN]) {
      assert.throws(
        () => tileNameAt(10, lat),
        (e: unknown) => e instanceof InvalidParameterError && e.extensions.param === "lat",
      );
    }
    assert.throws(
      () => tileNameAt(Number.POSITIVE_INFINITY, 10),
      (e: unknown) => e instanceof InvalidParameterError && e.extensions.param === "lon",
    );
    assert.match(tileNameAt(10, 84), /^33X/);
    assert.match(tileNameAt(10, -80), /^32C/);
  });
});

describe("tileGeometry", () => {
  test("northern square: zone, EPSG 326zz and origin on the 100 km grid", () => {
    const g = tileGeometry("32UPU");
    assert.equal(g.zone, 32);
    assert.equal(g.hemisphere, "N");
    assert.equal(g.epsg, 32632);
    assert.equal(g.crs, "EPSG:32632");
    assert.deepEqual(g.origin, { easting: 600_000, northing: 5_300_000 });
  });

  test("southern squares use EPSG 327zz and the 10 000 km false northing", () => {
    const sydney = tileGeometry(tileNameAt(151.2, -33.9));
    assert.equal(sydney.hemisphere, "S");
    assert.equal(sydney.epsg, 32756);
    assert.equal(sydney.origin.northing, 6_200_000);
    const nairobi = tileGeometry(tileNameAt(36.8, -1.3));
    assert.equal(nairobi.crs, "EPSG:32737");
    assert.equal(nairobi.origin.northing, 9_800_000);
  });

  test("equator square starts at northing 0 in the northern CRS", () => {
    const g = tileGeometry(tileNameAt(37, 0));
    assert.equal(g.epsg, 32637);
    assert.equal(g.origin.northing, 0);
    assert.equal(g.bbox[1], 0);
  });

  test("row letters repeat every 2000 km: the band letter decides which cycle", () => {
    // 31WCV and 31XCV are one physical square straddling the 72°N band edge.
    assert.deepEqual(tileGeometry("31WCV").origin, tileGeometry("31XCV").origin);
    // 2000 km further north the same letters come back, in another band.
    const a = tileGeometry(tileNameAt(9.5, 41));
    const utm = proj4("WGS84", a.proj);
    const [e, n] = utm.forward([9.5, 41]);
    const [lon, lat] = utm.inverse([e, n + 2_000_000]);
    const b = tileGeometry(tileNameAt(lon, lat));
    assert.equal(b.name.slice(-2), a.name.slice(-2));
    assert.notEqual(b.band, a.band);
    assert.equal(b.origin.northing - a.origin.northing, 2_000_000);
  });

  test("malformed or impossible names are a parameter error on tile", () => {
    for (const bad of ["", "32", "32TNSX", "61TNS", "0TNS", "32INS", "32TIS", "32XNS", "34XDU", "32tns"]) {
      assert.throws(
        () => tileGeometry(bad),
        (e: unknown) => e instanceof InvalidParameterError && e.extensions.param === "tile",
        bad,
      );
    }
  });

  test("the bbox is computed from the projected square, wider than the square's centre column", () => {
    const g = tileGeometry("32TKT");
    const [w, s, e, n] = g.bbox;
    assert.ok(w < 5.01 && e > 6.3 && s < 46.9 && n > 47.8, `${g.bbox}`);
  });

  test("near the antimeridian the bbox wraps (west > east)", () => {
    const g = tileGeometry(tileNameAt(179.9, -16));
    assert.ok(g.bbox[0] > g.bbox[2], `${g.bbox}`);
    assertInside(179.9, -16);
    assertInside(-179.9, 65);
  });
});

test("every point lies in its tile's square and bbox (named places, band edges, random)", () => {
  const named: [number, number][] = [
    [11.5, 48.1],
    [5.99, 47],
    [6.01, 47],
    [5.3, 60.4],
    [15.6, 78.2],
    [37, 0],
    [36.8, -1.3],
    [151.2, -33.9],
    [18.4, -33.9],
    [-46.6, -23.5],
    [-157.9, 21.3],
    [-70, -79.9],
    [20, 83.9],
  ];
  for (const [lon, lat] of named) assertInside(lon, lat);
  // Just either side of every latitude band edge, where the 2000 km row cycle is easy to get wrong.
  for (let edge = -72; edge <= 72; edge += 8) {
    for (const lon of [-177.3, -60.2, 3.1, 9, 14.9, 100.4]) {
      assertInside(lon, edge + 0.001);
      assertInside(lon, edge - 0.001);
    }
  }
  const rng = new Rng(20261120);
  for (let k = 0; k < 400; k++) assertInside(rng.uniform(-180, 180), rng.uniform(-80, 84));
});
