import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidParameterError } from "../../src/errors.ts";
import {
  lonLatToTile,
  MAX_ZOOM,
  MERCATOR_MAX_LAT,
  pixelLat,
  pixelLon,
  TILE_SIZE,
  tileBounds,
  tilesCovering,
  validateTile,
} from "../../src/render/tiles.ts";

function assertClose(actual: number[], expected: number[], eps = 1e-4): void {
  assert.equal(actual.length, expected.length);
  for (const [i, v] of actual.entries()) assert.ok(Math.abs(v - expected[i]) < eps, `[${i}] ${v} vs ${expected[i]}`);
}

/** The slippy-map formula as usually written, independent of the module's own arithmetic. */
function slippy(lon: number, lat: number, z: number): { x: number; y: number } {
  const n = 2 ** z;
  const phi = (lat * Math.PI) / 180;
  return { x: Math.floor(((lon + 180) / 360) * n), y: Math.floor(((1 - Math.asinh(Math.tan(phi)) / Math.PI) / 2) * n) };
}

describe("tile constants", () => {
  it("are the 256 px, z0..7 mercator pyramid", () => {
    assert.equal(TILE_SIZE, 256);
    assert.equal(MAX_ZOOM, 7);
    assertClose([MERCATOR_MAX_LAT], [85.0511287798], 1e-9);
  });
});

describe("tileBounds", () => {
  it("z0 covers the whole mercator world", () => {
    assertClose(tileBounds(0, 0, 0), [-180, -MERCATOR_MAX_LAT, 180, MERCATOR_MAX_LAT], 1e-9);
  });
  it("z1 x0 y0 is the north-west quadrant", () => {
    assertClose(tileBounds(1, 0, 0), [-180, 0, 0, 85.0511]);
  });
  it("z1 x1 y1 is the south-east quadrant", () => {
    assertClose(tileBounds(1, 1, 1), [0, -85.0511, 180, 0]);
  });
  it("neighbouring tiles share edges", () => {
    const a = tileBounds(5, 10, 11);
    const below = tileBounds(5, 10, 12);
    const right = tileBounds(5, 11, 11);
    assert.equal(a[1], below[3]);
    assert.equal(a[2], right[0]);
  });
});

describe("lonLatToTile", () => {
  it("lon 0 lat 0 at z1 is x1 y1", () => {
    assert.deepEqual(lonLatToTile(0, 0, 1), { x: 1, y: 1 });
  });
  it("matches the standard formula for known cities at z7", () => {
    const cities: [string, number, number, number, number][] = [
      ["London", -0.1276, 51.5072, 63, 42],
      ["Tokyo", 139.6917, 35.6895, 113, 50],
      ["Sydney", 151.2093, -33.8688, 117, 76],
      ["New York", -74.006, 40.7128, 37, 48],
    ];
    for (const [name, lon, lat, x, y] of cities) {
      assert.deepEqual(lonLatToTile(lon, lat, 7), { x, y }, name);
      assert.deepEqual(lonLatToTile(lon, lat, 7), slippy(lon, lat, 7), name);
    }
  });
  it("wraps longitude and clamps latitude beyond the mercator band", () => {
    assert.deepEqual(lonLatToTile(180, 89, 3), { x: 0, y: 0 });
    assert.deepEqual(lonLatToTile(539.9, -89, 3), { x: 7, y: 7 }); // 539.9° is 179.9°
    assert.deepEqual(lonLatToTile(359.9, 0.1, 3), lonLatToTile(-0.1, 0.1, 3));
  });
});

describe("pixel centres", () => {
  it("first and last column centres sit half a pixel inside the world", () => {
    const half = 360 / (2 * TILE_SIZE);
    assertClose([pixelLon(0, 0, 0), pixelLon(0, 0, 255)], [-180 + half, 180 - half], 1e-12);
  });
  it("rows straddling the z0 equator are mirror images", () => {
    assert.ok(pixelLat(0, 0, 127) > 0);
    assertClose([pixelLat(0, 0, 127)], [-pixelLat(0, 0, 128)], 1e-12);
  });
  it("a pixel centre falls inside its tile", () => {
    const [w, s, e, n] = tileBounds(7, 40, 50);
    const lon = pixelLon(7, 40, 17);
    const lat = pixelLat(7, 50, 200);
    assert.ok(lon > w && lon < e && lat > s && lat < n);
    assert.deepEqual(lonLatToTile(lon, lat, 7), { x: 40, y: 50 });
  });
});

describe("tilesCovering", () => {
  const keys = (tiles: { x: number; y: number }[]) => tiles.map((t) => `${t.x}/${t.y}`).sort();

  it("the world at z2 is all 16 tiles", () => {
    assert.equal(tilesCovering([-180, -90, 180, 90], 2).length, 16);
  });
  it("clamps latitudes beyond ±85.0511", () => {
    assert.deepEqual(keys(tilesCovering([-10, -89, 10, 89], 1)), ["0/0", "0/1", "1/0", "1/1"]);
  });
  it("edges on tile boundaries do not pull in the neighbour", () => {
    assert.deepEqual(keys(tilesCovering([-180, 0, 0, 85], 1)), ["0/0"]);
    assert.deepEqual(keys(tilesCovering([0, -85, 180, 0], 1)), ["1/1"]);
  });
  it("a box crossing the antimeridian takes both ends", () => {
    assert.deepEqual(keys(tilesCovering([170, -10, -170, 10], 2)), ["0/1", "0/2", "3/1", "3/2"]);
  });
  it("lists each tile once when both ends of a crossing box share a tile", () => {
    assert.deepEqual(tilesCovering([170, -10, -170, 10], 0), [{ z: 0, x: 0, y: 0 }]);
    assert.equal(tilesCovering([-100, -10, -110, 10], 2).length, 8);
  });
  it("a box wholly beyond the mercator band covers nothing", () => {
    assert.deepEqual(tilesCovering([0, 86, 10, 89], 3), []);
  });
  it("a small box is the one tile holding it", () => {
    const t = lonLatToTile(10.5, 45.5, 7);
    assert.deepEqual(tilesCovering([10.4, 45.4, 10.41, 45.41], 7), [{ z: 7, ...t }]);
  });
});

describe("validateTile", () => {
  const rejects = (z: number, x: number, y: number, message: RegExp) =>
    assert.throws(
      () => validateTile(z, x, y),
      (e: unknown) => e instanceof InvalidParameterError && message.test(e.message),
    );

  it("accepts the corners of every level", () => {
    for (let z = 0; z <= MAX_ZOOM; z++) {
      validateTile(z, 0, 0);
      validateTile(z, 2 ** z - 1, 2 ** z - 1);
    }
  });
  it("rejects z above 7", () => rejects(8, 0, 0, /z above the maximum zoom 7/));
  it("rejects x or y equal to 2^z", () => {
    rejects(3, 8, 0, /tile x outside zoom level bounds/);
    rejects(3, 0, 8, /tile y outside zoom level bounds/);
  });
  it("rejects negatives", () => {
    rejects(-1, 0, 0, /z must not be negative/);
    rejects(2, -1, 0, /outside zoom level bounds/);
  });
  it("rejects non-integers and NaN", () => {
    rejects(1.5, 0, 0, /z must be an integer/);
    rejects(2, 0.5, 0, /x must be an integer/);
    rejects(2, 0, Number.NaN, /y must be an integer/);
  });
  it("names the offending parameter", () => {
    assert.throws(
      () => validateTile(2, 0, 4),
      (e: unknown) => e instanceof InvalidParameterError && e.extensions.param === "y",
    );
  });
});
